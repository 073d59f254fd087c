"""ClusterView: a cluster's tasks in the notebook, live while a training loop runs (OSDI paper, sections 3.3 and 4.3).

A table has one row per task of the server's ClusterSpec: its health (alive while a Dask worker holds it, lost
while none does, and how often it was restarted: held by a new worker since the view began, its nanny having
started it again after it died, its state gone), its address, and the share of the plan shown that is
registered there: ops, Sends and Recvs per device. Below it, each task's time in the steps the view traced, from
its first node's start to its last node's end (the master merges the tasks' traces onto one clock), beside
the whole step as the client timed it.

`view.run(sess, fetches, feed_dict)` runs one step of the session and traces every `trace_every`-th: a traced
step costs more, as each node's timing travels back from its task. The view sends what changed to the browser
at most every `refresh_secs` (Bokeh stream patches, and the table redrawn after asking the scheduler which
workers it holds), so it moves while the loop runs in the cell; `flush()` sends the rest when the loop ends.
"""

from __future__ import annotations

import html
import time
from collections import Counter
from typing import TYPE_CHECKING

import ipywidgets
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure
from jupyter_bokeh.widgets import BokehModel

from tfnb.framework.device_spec import short_device, task_of
from tfnb.runtime.plan import Plan
from tfnb.runtime.tracing import RunMetadata, RunOptions

from .dashboard import flush_after_each_cell, load_bokehjs
from .graph_view import DEVICE_COLOURS, task_key
from .timeline import natural_order

if TYPE_CHECKING:
    from tfnb.distributed import Server

STEP = "whole step"
STEP_COLOUR = "#555555"
ALIVE, LOST = "alive", "lost"


def task_times_ms(run_metadata: RunMetadata) -> dict[str, float]:
    """Per task of a traced step, the milliseconds from its first node's start to its last node's end."""
    spans: dict[str, tuple[float, float]] = {}
    for stats in run_metadata.node_stats():
        task = task_of(stats.device)
        start, end = stats.all_start_micros, stats.all_start_micros + stats.all_end_rel_micros
        first, last = spans.get(task, (start, end))
        spans[task] = (min(first, start), max(last, end))
    return {task: (last - first) / 1e3 for task, (first, last) in spans.items()}


def partitions_of_plan(plan: Plan) -> dict[str, Counter]:
    """Per device of a plan, how many ops, Sends and Recvs run there."""
    return {device: Counter(_kind(node.type) for node in nodes) for device, nodes in plan.partitions.items()}


def partitions_of_run(run_metadata: RunMetadata) -> dict[str, Counter]:
    """Per device of a traced step's partition graphs, how many ops, Sends and Recvs ran there."""
    return {device: Counter(_kind(name.partition("/")[0]) for name in names)
            for device, names in run_metadata.partition_graphs.items()}


def _kind(node_type: str) -> str:
    return {"_Send": "Sends", "_Recv": "Recvs"}.get(node_type, "ops")


class ClusterView(ipywidgets.VBox):
    """The tasks of `server`'s cluster (a tf.train.Server): their health, their partitions, their step times.

    `plan` (from `Session.plan(...)`) gives the partitions; without it, the first traced step's are shown.
    `view.run(sess, fetches, feed_dict)` runs a step and updates the view; `view.add_run(run_metadata)` adds a
    step you traced yourself; `view.refresh()` asks the scheduler again which tasks are alive.
    """

    def __init__(self, server: Server, plan: Plan | None = None, *, trace_every: int = 5,
                 refresh_secs: float = 1.0, **kwargs) -> None:
        load_bokehjs()
        self.server = server
        self.tasks = sorted(server.cluster_spec.task_names(), key=lambda task: natural_order(task_key(task)))
        self.colours = {task: DEVICE_COLOURS[i % len(DEVICE_COLOURS)] for i, task in enumerate(self.tasks)}
        self.trace_every, self.refresh_secs = trace_every, refresh_secs
        self.health: dict[str, str] = {}
        self.addresses: dict[str, str] = {}
        self.restarts: Counter = Counter()
        self.partitions: dict[str, Counter] = {}
        self.latest_ms: dict[str, float] = {}
        self.steps = self.traced = 0
        self._from_plan = plan is not None
        self._pending: dict[str, dict[str, list]] = {}
        self._dirty = False
        self._next_refresh = 0.0
        self.figure = self._figure()
        self.table = ipywidgets.HTML()
        self.chart = BokehModel(self.figure)
        if plan is not None:
            self.partitions = partitions_of_plan(plan)
        self.refresh()
        super().__init__([self.table, self.chart], **kwargs)
        flush_after_each_cell(self)

    # -- feeding ----------------------------------------------------------------------------------

    def run(self, session, fetches, feed_dict: dict | None = None):
        """Runs one step of `session` (a Session or MonitoredSession on the cluster), tracing every
        `trace_every`-th, and returns what `session.run` returns."""
        self.steps += 1
        traced = self.steps % self.trace_every == 0
        metadata = RunMetadata() if traced else None
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if traced else None
        started = time.perf_counter()
        try:
            values = session.run(fetches, feed_dict, options, metadata)
        except Exception:
            self.refresh()   # a lost task is why a step fails: show it at once
            raise
        if self.steps > 1:   # the first step compiles the session's plan
            self._add(STEP, self.steps, (time.perf_counter() - started) * 1e3)
        if traced:
            self.add_run(metadata, self.steps)
        self._maybe_refresh()
        return values

    def add_run(self, run_metadata: RunMetadata, step: int | None = None) -> None:
        """Adds a traced step: each task's time in it (and its partitions, if no plan was given)."""
        step = self.steps if step is None else step
        times = task_times_ms(run_metadata)
        self.traced += 1
        for task, milliseconds in times.items():
            self._add(task, step, milliseconds)
        self.latest_ms.update(times)
        if not self._from_plan and run_metadata.partition_graphs:
            self.partitions = partitions_of_run(run_metadata)
        self._maybe_refresh()

    def show_plan(self, plan: Plan) -> None:
        """Shows the partitions of `plan` on the tasks."""
        self.partitions, self._from_plan = partitions_of_plan(plan), True
        self.table.value = self.table_html()

    # -- what it shows ----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Asks the scheduler which worker holds each task now, and redraws the table."""
        held = self.server.cluster.tasks()
        for task in self.tasks:
            address = held.get(task)
            if address is None:
                self.health[task] = LOST
                continue
            if self.addresses.get(task, address) != address:
                self.restarts[task] += 1
            self.addresses[task], self.health[task] = address, ALIVE
        self.table.value = self.table_html()

    def rows(self) -> list[dict]:
        """One row per task, as the table shows it (the address left out): health, restarts, partitions, time."""
        return [{"task": task, "health": self.health.get(task, LOST), "restarts": self.restarts[task],
                 "devices": {short_device(d): dict(c) for d, c in self.partitions.items() if task_of(d) == task},
                 "latest_ms": self.latest_ms.get(task)} for task in self.tasks]

    def table_html(self) -> str:
        """The table of tasks: name, health, address, partitions per device, the latest traced time."""
        lines = []
        for row in self.rows():
            task = row["task"]
            health = row["health"] + (f" · restarted ×{row['restarts']}" if row["restarts"] else "")
            colour = "#1a7f37" if row["health"] == ALIVE else "#cf222e"
            devices = "<br>".join(f"{html.escape(device)}: " + ", ".join(f"{n} {kind}" for kind, n in counts.items())
                                  for device, counts in row["devices"].items()) or "—"
            latest = "" if row["latest_ms"] is None else f"{row['latest_ms']:.1f}"
            lines.append(f'<tr><td><span class="tfnb-swatch" style="background:{self.colours[task]}"></span>'
                         f"{html.escape(task_key(task))}</td><td style=\"color:{colour}\">{health}</td>"
                         f"<td>{html.escape(self.addresses.get(task, ''))}</td><td>{devices}</td>"
                         f"<td>{latest}</td></tr>")
        return ('<table class="tfnb-cluster"><tr><th>task</th><th>health</th><th>address</th>'
                f"<th>partitions</th><th>latest traced ms</th></tr>{''.join(lines)}</table>"
                f"<div>{self.steps} steps run, {self.traced} traced</div>")

    def data(self, series: str) -> dict[str, list]:
        """The points of a task's line (or of the whole step's, `STEP`) sent to the browser: step and ms."""
        return {column: list(values) for column, values in self._sources[series].data.items()}

    def flush(self) -> None:
        """Sends every point and the table to the browser, and re-sends the plot whole (call when a loop ends)."""
        self._push()
        self.refresh()
        self.chart.update_from_model(self.figure)
        self._dirty = False

    # -- inside -----------------------------------------------------------------------------------

    def _figure(self) -> figure:
        plot = figure(height=260, sizing_mode="stretch_width", x_axis_label="step", y_axis_label="ms",
                      y_axis_type="log", title="time in each step: per task (traced steps) and whole",
                      tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above")
        plot.toolbar.logo = None
        self._sources = {series: ColumnDataSource({"step": [], "ms": []}) for series in (*self.tasks, STEP)}
        for series, source in self._sources.items():
            colour, label = (STEP_COLOUR, STEP) if series == STEP else (self.colours[series], task_key(series))
            plot.line("step", "ms", source=source, color=colour, line_width=2, legend_label=label,
                      alpha=0.5 if series == STEP else 1.0)
            plot.scatter("step", "ms", source=source, color=colour, size=5, legend_label=label)
        plot.add_tools(HoverTool(tooltips=[("step", "@step"), ("ms", "@ms{0.0}")]))
        plot.legend.location = "top_left"
        plot.legend.click_policy = "hide"
        return plot

    def _add(self, series: str, step: int, milliseconds: float) -> None:
        if series not in self._sources:
            return   # a task outside the server's ClusterSpec
        pending = self._pending.setdefault(series, {"step": [], "ms": []})
        pending["step"].append(step)
        pending["ms"].append(milliseconds)
        self._dirty = True

    def _push(self) -> None:
        for series, pending in self._pending.items():
            if pending["step"]:
                self._sources[series].stream(pending)
        self._pending = {}

    def _maybe_refresh(self) -> None:
        now = time.perf_counter()
        if now >= self._next_refresh:
            self._push()
            self.refresh()
            self._next_refresh = now + self.refresh_secs
