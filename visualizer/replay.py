"""ExecutionReplay: a traced run stepped through on a GraphView, as the reference executor ran it.

Each node instance counts its unfinished inputs (data and control); an instance whose count is 0
waits in the ready queue; the executor takes the next instance from the queue, runs it, and
decrements the counts of its consumers. The executor records all of this as it runs
(`RunMetadata.executor_record`, tfnb/runtime/executor.py); the replay shows that record. Step k shows
the state while the k-th instance (from 0) runs. Outside loops an instance is a node. Inside a loop
it is a node in one iteration of its frame, tagged like `while:2` (nested loops:
`while:1/while/while:0`); a node with a dead input runs dead: it only passes "dead" on (drawn grey), as
the untaken side of a Switch does. Root-frame instances count from the start of the step, loop
instances from the arrival of their first input, as the executor creates them.

The step slider spans the cell; a loop's run also gets one slider per frame, which jumps to the
first step of an iteration (and follows the step as it moves); Play's speed is set in steps per
second. The graph view pans to keep the running node in sight.
"""

from __future__ import annotations

import html
import math
from bisect import bisect_left
from dataclasses import dataclass

import ipywidgets
import traitlets

from tfnb.framework.operation import Operation
from tfnb.runtime.tracing import RunMetadata, frame_path

from .graph_view import FADED, GraphView, Overlay

DONE = {"fill": "#74c476"}
PARTLY_DONE = {"fill": "#c7e9c0"}
RUNNING = {"fill": "#ffd700", "stroke": "#d62728", "stroke-width": "3"}
READY = {"stroke": "#1f77b4", "stroke-width": "3"}
WAITING = {"opacity": "0.55"}
DEAD = {"fill": "#bdbdbd", "opacity": "0.7"}
RUNNING_DEAD = {"fill": "#bdbdbd", "stroke": "#d62728", "stroke-width": "3"}
DEAD_TEXT = "color:#999"
PANEL_ITEMS = 12
SPEED_RANGE = (0.5, 50.0)   # steps per second


@dataclass(frozen=True)
class Instance:
    """One run of a node in a traced step: its name, op (None for a Send or Recv), frame tag and deadness."""

    name: str
    op: Operation | None
    frame: str = ""
    dead: bool = False

    @property
    def label(self) -> str:
        """'name' outside loops, 'name [while:2]' inside one."""
        return f"{self.name} [{self.frame}]" if self.frame else self.name


def frame_tag(path: list[tuple[str, int]]) -> str:
    """The tag of a frame path, as the executor writes it: [('while', 2)] -> 'while:2'."""
    return "/".join(f"{name}:{iteration}" for name, iteration in path)


@dataclass
class _State:
    """The executor's state at one step: the latest count of each instance it met, the queue, what has run."""

    counts: dict[int, int]
    arrived: dict[int, list[str]]
    ready: list[int]
    ran: set[int]


class ExecutionReplay(ipywidgets.VBox):
    """Play and slider widgets stepping through a traced run: node instances light up in the order they ran.

    `source` is a GraphView or anything GraphView takes (a session shows the plan that ran).
    """

    step = traitlets.Int(0)

    def __init__(self, run_metadata: RunMetadata, source, interval_ms: int = 400, **kwargs) -> None:
        self.view = source if isinstance(source, GraphView) else GraphView(source)
        self.record = run_metadata.executor_record
        by_name = {op.name: op for op in self.view.ops}
        self._runs = [event[1] for event in self.record.events if event[0] == "run"]
        self._run_events = [k for k, event in enumerate(self.record.events) if event[0] == "run"]
        dead = [stats.dead for stats in run_metadata.node_stats()]
        self.instances = [Instance(name, by_name.get(name), frame, dead[k] if k < len(dead) else False)
                          for k, (name, frame) in enumerate(self.record.instances[i] for i in self._runs)]
        self._position = {instance_id: k for k, instance_id in enumerate(self._runs)}
        self._positions: dict[Operation, list[int]] = {}
        for k, instance in enumerate(self.instances):
            if instance.op is not None:
                self._positions.setdefault(instance.op, []).append(k)
        self._paths = [frame_path(instance.frame) for instance in self.instances]
        self._cached: tuple[int, _State] | None = None
        self._following_step = False
        self.play = ipywidgets.Play(value=0, min=0, max=len(self.instances), interval=interval_ms,
                                    description="play")
        self.slider = ipywidgets.IntSlider(value=0, min=0, max=len(self.instances), description="step",
                                           layout=ipywidgets.Layout(flex="1 1 auto", min_width="300px"))
        ipywidgets.jslink((self.play, "value"), (self.slider, "value"))
        self.speed = ipywidgets.FloatLogSlider(value=1000 / interval_ms, base=10, min=math.log10(SPEED_RANGE[0]),
                                               max=math.log10(SPEED_RANGE[1]), description="steps/s",
                                               readout_format=".3g", layout=ipywidgets.Layout(width="260px"))
        self.speed.observe(self._on_speed, "value")
        self.iteration_sliders = self._iteration_sliders()
        self.panel = ipywidgets.HTML()
        controls = ipywidgets.HBox([self.play, self.slider, self.speed], layout=ipywidgets.Layout(width="100%"))
        super().__init__([controls, *self._iteration_rows(), self.panel, self.view], **kwargs)
        traitlets.link((self.slider, "value"), (self, "step"))
        self._overlay = _ReplayOverlay(self)
        self._show()

    # -- loops: one slider per frame, in iterations ------------------------------------------------

    def _iteration_sliders(self) -> dict[str, ipywidgets.IntSlider]:
        """Frame name -> a slider over the iterations that ran, outer frames first."""
        last: dict[str, int] = {}
        for path in self._paths:
            for name, iteration in path:
                last[name] = max(last.get(name, 0), iteration)
        sliders = {}
        for name, highest in last.items():
            slider = ipywidgets.IntSlider(value=0, min=0, max=highest, description=f"{name} iteration",
                                          style={"description_width": "initial"},
                                          layout=ipywidgets.Layout(flex="1 1 auto"))
            slider.observe(lambda change, frame=name: self._on_iteration(frame, change["new"]), "value")
            sliders[name] = slider
        return sliders

    def _iteration_rows(self) -> list[ipywidgets.HBox]:
        return [ipywidgets.HBox([slider], layout=ipywidgets.Layout(width="100%"))
                for slider in self.iteration_sliders.values()]

    def first_step_of(self, frame: str, iteration: int) -> int | None:
        """The first step that runs an instance in `iteration` of `frame`; for a nested frame, in the iterations of
        the outer frames the step now shows, if it has one there."""
        outer = []
        for name, current in self._current_path():
            if name == frame:
                break
            outer.append((name, current))
        steps = [k for k, path in enumerate(self._paths) if (frame, iteration) in path]
        within = [k for k in steps if self._paths[k][:len(outer)] == outer]
        return (within or steps or [None])[0]

    def _current_path(self) -> list[tuple[str, int]]:
        """The running instance's frames and iterations, outermost first ([] outside loops and once finished)."""
        return self._paths[self.step] if self.step < len(self._paths) else []

    def _on_iteration(self, frame: str, iteration: int) -> None:
        if self._following_step:
            return
        step = self.first_step_of(frame, iteration)
        if step is not None:
            self.step = step

    def _on_speed(self, change: dict) -> None:
        self.play.interval = max(1, round(1000 / change["new"]))

    def _follow_step_in_sliders(self) -> None:
        """Shows the running instance's iteration of each frame around it."""
        self._following_step = True
        try:
            for name, iteration in self._current_path():
                self.iteration_sliders[name].value = iteration
        finally:
            self._following_step = False

    # -- the executor's state at this step, from its record ---------------------------------------

    def _state(self) -> _State:
        """Every event up to the one taking this step's instance from the queue (all of them at the end)."""
        if self._cached is not None and self._cached[0] == self.step:
            return self._cached[1]
        end = self._run_events[self.step] + 1 if self.step < len(self._run_events) else len(self.record.events)
        state = _State({}, {}, [], set())
        for event in self.record.events[:end]:
            kind, instance = event[0], event[1]
            if kind == "count":
                state.counts[instance] = event[2]
                if event[3] is not None:
                    state.arrived.setdefault(instance, []).append(event[3])
            elif kind == "ready":
                state.counts[instance] = 0
                state.ready.append(instance)
            else:
                state.ran.add(instance)
        state.ready = [i for i in state.ready if i not in state.ran]
        self._cached = (self.step, state)
        return state

    def _label(self, instance_id: int) -> str:
        name, frame = self.record.instances[instance_id]
        return f"{name} [{frame}]" if frame else name

    def _in_run_order(self, instance_ids) -> list[int]:
        return sorted(instance_ids, key=lambda i: self._position.get(i, len(self._position)))

    @property
    def current(self) -> Instance | None:
        """The instance running at this step (None once every instance has run)."""
        return self.instances[self.step] if self.step < len(self.instances) else None

    @property
    def lit(self) -> list[str]:
        """Labels of the instances that have finished, in the order they ran."""
        return [instance.label for instance in self.instances[:self.step]]

    @property
    def running(self) -> str | None:
        """The label of the instance running at this step (None once every instance has run)."""
        return self.current.label if self.current is not None else None

    @property
    def ready_queue(self) -> list[str]:
        """Labels of the instances in the executor's ready queue, in the order it will take them."""
        return [self._label(i) for i in self._state().ready]

    @property
    def counts(self) -> dict[str, int]:
        """Each instance the executor has met and not finished (the running one: 0) -> its unfinished inputs."""
        state = self._state()
        running = self._runs[self.step] if self.step < len(self._runs) else None
        unfinished = [i for i in state.counts if i not in state.ran or i == running]
        return {self._label(i): state.counts[i] for i in self._in_run_order(unfinished)}

    def awaited(self, k: int) -> list[str]:
        """What instance k (in run order) still waits for at this step: the nodes whose values have not arrived."""
        state = self._state()
        instance_id = self._runs[k]
        name, _ = self.record.instances[instance_id]
        pending = list(self.record.inputs.get(name, []))
        for source in state.arrived.get(instance_id, []):
            if source in pending:
                pending.remove(source)
        return pending if state.counts.get(instance_id, len(pending)) else []

    def readied_by(self, k: int) -> str | None:
        """The node (or fed tensor) whose value, arriving, put instance k in the ready queue (a Merge: its first
        live input); None for an instance that was ready from the start."""
        instance_id, source = self._runs[k], None
        for event in self.record.events:
            if event[1] != instance_id:
                continue
            if event[0] == "ready":
                return source
            if event[0] == "count":
                source = event[3]
        return source

    @property
    def per_iteration(self) -> dict[str, tuple[int, int]]:
        """Frame tag -> (instances finished in that iteration, how many of them ran dead), in order of first run."""
        result: dict[str, tuple[int, int]] = {}
        for instance in self.instances[:self.step]:
            if instance.frame:
                ran, dead = result.get(instance.frame, (0, 0))
                result[instance.frame] = (ran + 1, dead + instance.dead)
        return result

    def instance_state(self, k: int) -> str:
        """'done', 'dead', 'running', 'ready', 'waiting' or 'not started' for instance k at this step."""
        if k < self.step:
            return "dead" if self.instances[k].dead else "done"
        if k == self.step:
            return "running"
        state = self._state()
        instance_id = self._runs[k]
        if instance_id in state.ready:
            return "ready"
        return "waiting" if instance_id in state.counts else "not started"

    def state_of(self, op: Operation) -> str:
        """An op now: 'running', 'ready', its last finished instance's 'done' or 'dead', 'waiting', or 'not run'."""
        positions = self._positions.get(op)
        if not positions:
            return "not run"
        i = bisect_left(positions, self.step)
        if i < len(positions) and positions[i] == self.step:
            return "running"
        if any(self.instance_state(k) == "ready" for k in positions[i:]):
            return "ready"
        if i > 0:
            return "dead" if self.instances[positions[i - 1]].dead else "done"
        return "waiting"

    def instances_of(self, op: Operation) -> list[int]:
        """Positions of an op's instances in the run."""
        return list(self._positions.get(op, []))

    # -- showing it -------------------------------------------------------------------------------

    @traitlets.observe("step")
    def _on_step(self, change) -> None:
        self._show()

    def _show(self) -> None:
        self.view.set_overlay("replay", self._overlay)
        self.panel.value = self.panel_html()
        self._follow_step_in_sliders()
        if self.current is not None and self.current.op is not None:
            self.view.follow(self.view.unit_of(self.current.op.name))

    def panel_html(self) -> str:
        """'step k: running X; ready queue: [...]; counts: {...}', then instances finished per iteration, as HTML."""
        waiting = {label: n for label, n in self.counts.items() if n > 0}
        counts = ", ".join(f"{label}: {n}" for label, n in list(waiting.items())[:PANEL_ITEMS])
        more = f", … {len(waiting) - PANEL_ITEMS} more" if len(waiting) > PANEL_ITEMS else ""
        ready = [self._position[i] for i in self._state().ready if i in self._position]
        queue = ", ".join(self._label_html(k) for k in ready[:PANEL_ITEMS]) + " …" * (len(ready) > PANEL_ITEMS)
        running = f"<code>{'(finished)' if self.current is None else self._label_html(self.step)}</code>"
        if self.current is not None and self.current.dead:
            running += " (dead: passes dead on without running its kernel)"
        lines = [(f"<div><b>step {self.step}/{len(self.instances)}</b>: running {running}; "
                  f"ready queue: [{queue}]; counts: {{{html.escape(counts + more)}}}</div>")]
        iterations = list(self.per_iteration.items())[-PANEL_ITEMS:]
        if iterations:
            done = ", ".join(f"{html.escape(tag)}: {ran}" + (f' (<span style="{DEAD_TEXT}">{dead} dead</span>)'
                                                              if dead else "") for tag, (ran, dead) in iterations)
            lines.append(f"<div>finished per iteration: {done}</div>")
        return "".join(lines)

    def _label_html(self, k: int) -> str:
        text = html.escape(self.instances[k].label)
        return f'<span style="{DEAD_TEXT}" title="runs dead">{text}</span>' if self.instances[k].dead else text


class _ReplayOverlay(Overlay):
    """The replay's frame on the graph view: done, dead, running, ready and waiting nodes."""

    recolours = True

    def __init__(self, replay: ExecutionReplay) -> None:
        self.replay = replay

    def styles(self, units: dict[str, list[Operation]]) -> dict[str, dict]:
        current = self.replay.current
        dead_op = current.op if current is not None and current.dead else None
        return {unit: self._style({self.replay.state_of(op) for op in ops}, dead_op in ops)
                for unit, ops in units.items()}

    @staticmethod
    def _style(states: set[str], running_dead: bool) -> dict:
        states.discard("not run")
        if not states:
            return FADED
        if "running" in states:
            return RUNNING_DEAD if running_dead else RUNNING
        if "ready" in states:
            return READY
        if states <= {"done", "dead"}:
            return DEAD if states == {"dead"} else DONE
        return PARTLY_DONE if states & {"done", "dead"} else WAITING

    def legend(self) -> str:
        swatches = [("done", DONE["fill"]), ("running", RUNNING["fill"]), ("some done", PARTLY_DONE["fill"]),
                    ("dead", DEAD["fill"])]
        items = "".join(f'<span class="tfnb-swatch" style="background:{c}"></span>{n} ' for n, c in swatches)
        return (f'<div class="tfnb-legend-replay">replay: {items}<span class="tfnb-swatch" '
                f'style="border:3px solid {READY["stroke"]}"></span>ready queue, faded: waiting or not run</div>')

    def card(self, ops: list[Operation]) -> str:
        if len(ops) != 1:
            return ""
        replay = self.replay
        shown = [k for k in replay.instances_of(ops[0]) if replay.instance_state(k) != "not started"]
        if len(shown) == 1 and not replay.instances[shown[0]].frame:
            return f"<div>replay step {replay.step}: {html.escape(self._instance_text(shown[0]))}</div>"
        rows = "".join(f"<div>[{html.escape(replay.instances[k].frame)}] {html.escape(self._instance_text(k))}</div>"
                       for k in shown[-PANEL_ITEMS:])
        return f"<div>replay step {replay.step}: {html.escape(replay.state_of(ops[0]))}</div>{rows}"

    def _instance_text(self, k: int) -> str:
        replay = self.replay
        state = replay.instance_state(k)
        if state in ("waiting", "ready"):
            pending = replay.awaited(k)
            state += f" (count {len(pending)}: {', '.join(pending)})" if pending else " (count 0)"
        return state
