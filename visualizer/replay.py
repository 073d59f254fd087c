"""ExecutionReplay: a traced run stepped through on a GraphView, as the paper's executor saw it.

Each node instance counts its unfinished inputs (data and control); an instance whose count is 0
waits in the ready queue; the executor takes the next instance from the queue, runs it, and
decrements the counts of its consumers. Step k shows the state while the k-th instance (from 0) runs.
Outside loops an instance is a node. Inside a loop it is a node in one iteration of its frame,
tagged like `while:2` (nested loops: `while:1/while/while:0`); a node with a dead input runs dead:
it only passes "dead" on (drawn grey), as the untaken side of a Switch does.

tfnb differs from TF's executor, which records no queue: the replay rebuilds it from the trace
(an instance joins the queue when its last input was produced), so where parallel_iterations held an
iteration back, that iteration shows as ready a little early.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left
from dataclasses import dataclass

import ipywidgets
import traitlets

from tfnb.framework.operation import Operation
from tfnb.runtime.tracing import RunMetadata

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
_FRAME_PART = re.compile(r"(.+?):(\d+)(?:/|$)")


@dataclass(frozen=True)
class Instance:
    """One run of a node in a traced step: its op, frame tag ('' outside loops, 'while:2'), and whether it ran dead."""

    op: Operation
    frame: str = ""
    dead: bool = False

    @property
    def label(self) -> str:
        """'name' outside loops, 'name [while:2]' inside one."""
        return f"{self.op.name} [{self.frame}]" if self.frame else self.op.name


def frame_path(tag: str) -> list[tuple[str, int]]:
    """'while:1/while/while:0' -> [('while', 1), ('while/while', 0)]: frame names may hold '/' themselves."""
    return [(name, int(iteration)) for name, iteration in _FRAME_PART.findall(tag)]


def frame_tag(path: list[tuple[str, int]]) -> str:
    """The tag of a frame path, as the frame executor writes it: [('while', 2)] -> 'while:2'."""
    return "/".join(f"{name}:{iteration}" for name, iteration in path)


def _shifted(path: list[tuple[str, int]], by: int) -> str:
    """The tag of the iteration `by` after (or before) the innermost one of `path`."""
    name, iteration = path[-1]
    return frame_tag([*path[:-1], (name, iteration + by)])


def _is_loop_merge(op: Operation) -> bool:
    return op.type == "Merge" and any(t.op.type == "NextIteration" for t in op.inputs)


class ExecutionReplay(ipywidgets.VBox):
    """Play and slider widgets stepping through a traced run: node instances light up in the order they ran.

    `source` is a GraphView or anything GraphView takes; a view of the session that ran (its plan)
    gives the exact dependencies, a graph gives them from the ops' inputs and control inputs.
    """

    step = traitlets.Int(0)

    def __init__(self, run_metadata: RunMetadata, source, interval_ms: int = 400, **kwargs) -> None:
        self.view = source if isinstance(source, GraphView) else GraphView(source)
        by_name = {op.name: op for op in self.view.ops}
        # sends and receives between devices are not graph ops: they are left out of the replay
        self.instances = [Instance(by_name[s.node_name], s.frame, s.dead) for s in run_metadata.node_stats()
                          if s.node_name in by_name]
        self.dependencies = self._dependencies()
        self._positions: dict[Operation, list[int]] = {}
        for k, instance in enumerate(self.instances):
            self._positions.setdefault(instance.op, []).append(k)
        self.waits_for = self._instance_dependencies()
        self._ready_after = [max(deps, default=-1) for deps in self.waits_for]
        self.play = ipywidgets.Play(value=0, min=0, max=len(self.instances), interval=interval_ms,
                                    description="play")
        self.slider = ipywidgets.IntSlider(value=0, min=0, max=len(self.instances), description="step")
        ipywidgets.jslink((self.play, "value"), (self.slider, "value"))
        self.panel = ipywidgets.HTML()
        super().__init__([ipywidgets.HBox([self.play, self.slider]), self.panel, self.view], **kwargs)
        traitlets.link((self.slider, "value"), (self, "step"))
        self._overlay = _ReplayOverlay(self)
        self._show()

    # -- who waits for whom -----------------------------------------------------------------------

    def _dependencies(self) -> dict[Operation, list[Operation]]:
        """For each op that ran, the distinct ops that ran and it waited for (a loop's Merge: its back edge too)."""
        ran = dict.fromkeys(instance.op for instance in self.instances)
        plan_dependencies = self.view.dependencies
        result = {}
        for op in ran:
            deps = plan_dependencies.get(op, []) if plan_dependencies is not None else \
                [t.op for t in op.inputs] + op.control_inputs
            back = [t.op for t in op.inputs if t.op.type == "NextIteration"] if op.type == "Merge" else []
            result[op] = list(dict.fromkeys(d for d in [*deps, *back] if d in ran))
        return result

    def _instance_dependencies(self) -> list[list[int]]:
        """For each instance, the positions of the instances it waited for."""
        at: dict[tuple[Operation, str], int] = {}
        starts: dict[str, int] = {}   # an iteration's tag -> the NextIteration that started it
        for k, instance in enumerate(self.instances):
            at.setdefault((instance.op, instance.frame), k)
            if instance.op.type == "NextIteration" and not instance.dead and instance.frame:
                starts.setdefault(_shifted(frame_path(instance.frame), 1), k)
        result = []
        for instance in self.instances:
            deps = [k for dep in self.dependencies[instance.op] for k in self._producers(instance, dep, at, starts)]
            if instance.op.type == "Merge" and not instance.dead:
                # a Merge fires on its first live input: it waited for that one only
                live = [k for k in deps if not self.instances[k].dead]
                deps = [min(live)] if live else deps
            result.append(sorted(set(deps)))
        return result

    def _producers(self, consumer: Instance, producer: Operation, at: dict, starts: dict) -> list[int]:
        """The instances of `producer` that `consumer` waited for, following frames in and out."""
        path = frame_path(consumer.frame)
        iteration = path[-1][1] if path else 0
        if _is_loop_merge(consumer.op):
            # iteration 0 starts from the Enter, iteration i from iteration i-1's NextIteration
            if (producer.type == "NextIteration") != (iteration > 0):
                return []
            if iteration > 0:
                return [at[key]] if (key := (producer, _shifted(path, -1))) in at else []
        if (producer, consumer.frame) in at:
            return [at[(producer, consumer.frame)]]
        for depth in reversed(range(len(path))):
            position = at.get((producer, frame_tag(path[:depth])))
            if position is not None:
                if producer.type == "Enter" and producer.attrs.get("is_constant") and depth == len(path) - 1 \
                        and iteration > 0:
                    # a loop constant reaches iteration i when that iteration starts
                    return [starts[consumer.frame]] if consumer.frame in starts else []
                return [position]
        prefix = consumer.frame + "/" if consumer.frame else ""
        inner = [k for k in self._positions.get(producer, []) if self.instances[k].frame.startswith(prefix)]
        live = [k for k in inner if not self.instances[k].dead]
        # an Exit runs dead in every iteration but the last; its consumer waits for the live one
        return live[:1] or inner[-1:]

    # -- the state at this step -------------------------------------------------------------------

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

    def count(self, k: int) -> int:
        """How many of the instances that instance `k` waits for have not finished at this step."""
        return sum(d >= self.step for d in self.waits_for[k])

    def _started(self, k: int) -> bool:
        """Whether instance k exists yet: outside loops always, inside once one of its inputs arrived."""
        return not self.instances[k].frame or any(d < self.step for d in self.waits_for[k])

    @property
    def counts(self) -> dict[str, int]:
        """Each instance not yet finished (in a loop: once its iteration reached it) -> its unfinished inputs."""
        return {self.instances[k].label: self.count(k) for k in range(self.step, len(self.instances))
                if k == self.step or self._started(k)}

    def _ready(self) -> list[int]:
        return [k for k in range(self.step + 1, len(self.instances)) if self._ready_after[k] < self.step]

    @property
    def ready_queue(self) -> list[str]:
        """Labels of the instances whose count is 0 and that have not run yet, in the order they will run."""
        return [self.instances[k].label for k in self._ready()]

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
        if self._ready_after[k] < self.step:
            return "ready"
        return "waiting" if self._started(k) else "not started"

    def state_of(self, op: Operation) -> str:
        """An op now: 'running', 'ready', its last finished instance's 'done' or 'dead', 'waiting', or 'not run'."""
        positions = self._positions.get(op)
        if not positions:
            return "not run"
        i = bisect_left(positions, self.step)
        if i < len(positions) and positions[i] == self.step:
            return "running"
        if any(self._ready_after[k] < self.step for k in positions[i:]):
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

    def panel_html(self) -> str:
        """'step k: running X; ready queue: [...]; counts: {...}', then instances finished per iteration, as HTML."""
        waiting = {label: n for label, n in self.counts.items() if n > 0}
        counts = ", ".join(f"{label}: {n}" for label, n in list(waiting.items())[:PANEL_ITEMS])
        more = f", … {len(waiting) - PANEL_ITEMS} more" if len(waiting) > PANEL_ITEMS else ""
        ready = self._ready()
        queue = ", ".join(self._label_html(k) for k in ready[:PANEL_ITEMS]) + " …" * (len(ready) > PANEL_ITEMS)
        running = f"<code>{'(finished)' if self.current is None else self._label_html(self.step)}</code>"
        if self.current is not None and self.current.dead:
            running += " (dead: passes dead on without running its kernel)"
        lines = [f"<div><b>step {self.step}/{len(self.instances)}</b>: running {running}; "
                 f"ready queue: [{queue}]; counts: {{{html.escape(counts + more)}}}</div>"]
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
            pending = [replay.instances[d].label for d in replay.waits_for[k] if d >= replay.step]
            state += f" (count {len(pending)}: {', '.join(pending)})" if pending else " (count 0)"
        return state
