"""Timeline: a Gantt chart of a traced run, one lane per device and executor thread (Bokeh, shown by jupyter_bokeh).

In a traced step of a cluster the lanes are named by task and device ('ps:0 CPU:0', 'worker:1 CPU:0'): the
tasks' traces are on one clock (the master merges them), and lanes are in task order, worker:2 before worker:10.

Bars are coloured by op type (the legend says which) and labelled with their op's name where they
are wide enough to hold it; a node instance in a loop is labelled with its frame and iteration
('add [while:2]'), and one that ran dead is grey. Hover a bar for its op, type, times and shapes.
"""

from __future__ import annotations

import re

from bokeh.models import ColumnDataSource, FactorRange, HoverTool
from bokeh.palettes import Category20
from bokeh.plotting import figure
from jupyter_bokeh.widgets import BokehModel

from tfnb.framework.device_spec import short_device
from tfnb.runtime.tracing import NodeExecStats, RunMetadata

from .dashboard import load_bokehjs

ROW_HEIGHT_PX = 56
MIN_HEIGHT_PX = 240
LABEL_SHARE = 0.035  # a bar at least this share of the step wide has room for its op's name
DEAD_COLOUR = "#bdbdbd"


def timeline_data(run_metadata: RunMetadata) -> dict[str, list]:
    """One bar per node instance that ran: its lane (device, and thread if the device used several), start and
    end in µs, name (with frame and iteration in a loop), op type, colour and the label drawn on it (the op's
    name, on bars at least LABEL_SHARE of the step wide and on the longest bar of each lane)."""
    stats = run_metadata.node_stats()
    threads: dict[str, list[int]] = {}
    for s in stats:
        if s.thread_id not in threads.setdefault(s.device, []):
            threads[s.device].append(s.thread_id)
    types = sorted({s.op_type for s in stats})
    palette = Category20[20]
    colours = {t: palette[i % len(palette)] for i, t in enumerate(types)}
    span = max((s.all_start_micros + s.all_end_rel_micros for s in stats), default=0.0)
    names = [_instance_name(s) for s in stats]
    rows = [_row(s.device, s.thread_id, threads[s.device]) for s in stats]
    longest = {row: max(s.all_end_rel_micros for s, r in zip(stats, rows) if r == row) for row in set(rows)}
    labelled = [s.all_end_rel_micros >= LABEL_SHARE * span or s.all_end_rel_micros == longest[row]
                for s, row in zip(stats, rows)]
    return {
        "row": rows,
        "start": [s.all_start_micros for s in stats],
        "end": [s.all_start_micros + s.all_end_rel_micros for s in stats],
        "duration": [s.all_end_rel_micros for s in stats],
        "name": names,
        "op_type": [s.op_type + " (dead)" * s.dead for s in stats],
        "device": [s.device for s in stats],
        "shapes": [", ".join(str(tuple(shape)) for shape in s.output_shapes) for s in stats],
        "colour": [DEAD_COLOUR if s.dead else colours[s.op_type] for s in stats],
        "label": [name if shown else "" for name, shown in zip(names, labelled)],
    }


def _instance_name(stats: NodeExecStats) -> str:
    return f"{stats.node_name} [{stats.frame}]" if stats.frame else stats.node_name


def _row(device: str, thread: int, threads: list[int]) -> str:
    label = short_device(device) or device
    return f"{label} · thread {threads.index(thread)}" if len(threads) > 1 else label


def natural_order(row: str) -> list:
    """Names sort with numbers compared as numbers ('worker:2 CPU:0' before 'worker:10 CPU:0')."""
    return [(0, int(piece), "") if piece.isdigit() else (1, 0, piece) for piece in re.split(r"(\d+)", row)]


def timeline_figure(data: dict[str, list]) -> figure:
    """The Gantt chart of `timeline_data`: lanes top to bottom in device order, a legend of op types, hover details."""
    rows = sorted(set(data["row"]), key=natural_order, reverse=True)
    plot = figure(y_range=FactorRange(*rows), height=max(MIN_HEIGHT_PX, 90 + ROW_HEIGHT_PX * len(rows)),
                  sizing_mode="stretch_width", x_axis_label="µs from the step's start",
                  tools="xpan,xwheel_zoom,box_zoom,reset,save", toolbar_location="above")
    source = ColumnDataSource(data)
    plot.hbar(y="row", left="start", right="end", height=0.75, color="colour", line_color="#333333",
              line_width=0.5, source=source, legend_field="op_type")
    plot.text(x="start", y="row", text="label", source=source, text_font_size="9pt", text_baseline="middle",
              x_offset=3, text_color="#1a1a1a")
    plot.add_tools(HoverTool(tooltips=[("op", "@name"), ("type", "@op_type"), ("duration", "@duration{0.0} µs"),
                                       ("outputs", "@shapes"), ("device", "@device")], renderers=[plot.renderers[0]]))
    legend = plot.legend[0]
    plot.center.remove(legend)  # beside the lanes, not over the bars
    legend.update(title="op type", label_text_font_size="8pt", glyph_height=12, glyph_width=12, spacing=0,
                  click_policy="hide")
    plot.add_layout(legend, "right")
    plot.ygrid.grid_line_color = None
    return plot


class Timeline(BokehModel):
    """A Gantt chart of a traced run: one lane per device (and executor thread), one labelled bar per node
    instance, coloured by op type with a legend.

    Unlike TF's `timeline.Timeline` (tfnb.Timeline, a Chrome-trace writer), this one draws in the notebook.
    """

    def __init__(self, run_metadata: RunMetadata, **kwargs) -> None:
        load_bokehjs()
        self.data = timeline_data(run_metadata)
        self.figure = timeline_figure(self.data)
        super().__init__(self.figure, **kwargs)
