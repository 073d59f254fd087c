"""Timeline: a per-device Gantt chart of a traced run (Bokeh, shown as a widget by jupyter_bokeh)."""

from __future__ import annotations

from bokeh.models import ColumnDataSource, FactorRange, HoverTool
from bokeh.palettes import Category20
from bokeh.plotting import figure
from jupyter_bokeh.widgets import BokehModel

from tfnb.runtime.tracing import RunMetadata

from .dashboard import load_bokehjs
from .graph_view import short_device

ROW_HEIGHT_PX = 28


def timeline_data(run_metadata: RunMetadata) -> dict[str, list]:
    """One bar per op that ran: its row (device, and thread if the device used several), start and end in µs."""
    stats = run_metadata.node_stats()
    threads: dict[str, list[int]] = {}
    for s in stats:
        if s.thread_id not in threads.setdefault(s.device, []):
            threads[s.device].append(s.thread_id)
    types = sorted({s.op_type for s in stats})
    palette = Category20[20]
    colours = {t: palette[i % len(palette)] for i, t in enumerate(types)}
    return {
        "row": [_row(s.device, s.thread_id, threads[s.device]) for s in stats],
        "start": [s.all_start_micros for s in stats],
        "end": [s.all_start_micros + s.all_end_rel_micros for s in stats],
        "duration": [s.all_end_rel_micros for s in stats],
        "name": [s.node_name for s in stats],
        "op_type": [s.op_type for s in stats],
        "device": [s.device for s in stats],
        "shapes": [", ".join(str(tuple(shape)) for shape in s.output_shapes) for s in stats],
        "colour": [colours[s.op_type] for s in stats],
    }


def _row(device: str, thread: int, threads: list[int]) -> str:
    label = short_device(device) or device
    return f"{label} thread {threads.index(thread)}" if len(threads) > 1 else label


def timeline_figure(data: dict[str, list]) -> figure:
    """The Gantt chart of `timeline_data`: rows top to bottom in device order, hover for op details."""
    rows = sorted(set(data["row"]), reverse=True)
    plot = figure(y_range=FactorRange(*rows), height=60 + ROW_HEIGHT_PX * max(len(rows), 1),
                  sizing_mode="stretch_width", x_axis_label="µs from the step's start",
                  tools="xpan,xwheel_zoom,box_zoom,reset,save", toolbar_location="above")
    plot.hbar(y="row", left="start", right="end", height=0.7, color="colour", line_color="colour",
              line_width=1, source=ColumnDataSource(data))
    plot.add_tools(HoverTool(tooltips=[("op", "@name"), ("type", "@op_type"), ("duration", "@duration{0.0} µs"),
                                       ("outputs", "@shapes"), ("device", "@device")]))
    plot.ygrid.grid_line_color = None
    return plot


class Timeline(BokehModel):
    """A per-device Gantt chart of a traced run: one row per device (and thread), one bar per op.

    Unlike TF's `timeline.Timeline` (tfnb.Timeline, a Chrome-trace writer), this one draws in the notebook.
    """

    def __init__(self, run_metadata: RunMetadata, **kwargs) -> None:
        load_bokehjs()
        self.data = timeline_data(run_metadata)
        self.figure = timeline_figure(self.data)
        super().__init__(self.figure, **kwargs)
