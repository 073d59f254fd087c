"""PlacementView: where a plan's ops run and why, the transfers between devices, and what a move would cost.

The plan is drawn as its partitions: one box per device holding the nodes that run there, ops in the
colour of their device (of their task, when the plan spans several tasks of a cluster) and each
Send/Recv pair a small pair of nodes across the boxes (2015 paper, section 3.2.2). A table counts each
device's ops with the cost model's estimated compute time beside the time a traced run measured. Pick a
node to see every device the placer weighed for it, its estimated finish time there, and the constraint
or colocation that decided; pick a device and press "move" to see the step time the placer's simulation
gives with the node there instead. Beyond what TensorBoard shows: its graph view colours by device, but
never says why.

MemoryView draws, for a traced step, the bytes alive on each device after each node ran: where
intermediates are freed, and where a Recv brought in a value (RunMetadata.memory).
"""

from __future__ import annotations

import html
from collections import Counter

import graphviz
import ipywidgets
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure
from jupyter_bokeh.widgets import BokehModel

from tfnb.framework.device_spec import short_device
from tfnb.runtime.placement import compute_cost_us, simulated_step_us
from tfnb.runtime.plan import Node, Plan
from tfnb.runtime.tracing import RunMetadata

from .dashboard import load_bokehjs
from .dot import layout_svg
from .graph_view import DEVICE_COLOURS, colour_key

TRANSFER_COLOUR = "#ffffff"


class PlacementView(ipywidgets.VBox):
    """A plan's partitions drawn per device, a per-device table, a node's placement reasons, and "move" to try
    another device. `plan` comes from `Session.plan(...)`; `run_metadata`, from a traced run of it, adds the
    measured times. `colour_by` is "device", "task", or "auto" (by task when the plan spans several tasks)."""

    def __init__(self, plan: Plan, run_metadata: RunMetadata | None = None, colour_by: str = "auto",
                 **kwargs) -> None:
        self.plan = plan
        self.run_metadata = run_metadata
        key = colour_key(colour_by, plan.partitions)
        keys = list(dict.fromkeys(sorted(map(key, plan.partitions))))
        self.colours = {device: DEVICE_COLOURS[keys.index(key(device)) % len(DEVICE_COLOURS)]
                        for device in plan.partitions}
        self.moved: dict = {}
        self.drawing = ipywidgets.HTML(layout_svg(self.dot()))
        self.table = ipywidgets.HTML(self.table_html())
        names = [op.name for op in plan.ops]
        self.node = ipywidgets.Dropdown(options=names, description="node")
        self.device = ipywidgets.Dropdown(options=[short_device(d) for d in plan.partitions], description="device")
        self.move = ipywidgets.Button(description="move", tooltip="simulate the step with the node on this device")
        self.card = ipywidgets.HTML()
        self.node.observe(lambda change: self._show_card(), names="value")
        self.move.on_click(lambda _button: self.move_node(self.node.value, self._device_named(self.device.value)))
        controls = ipywidgets.HBox([self.node, self.device, self.move])
        super().__init__([self.drawing, self.table, controls, self.card], **kwargs)
        self._show_card()

    # -- the drawing ------------------------------------------------------------------------------

    def dot(self) -> str:
        """DOT of the partitions: a cluster per device, ops coloured by it, Send/Recv nodes, data edges."""
        graph = graphviz.Digraph(graph_attr={"rankdir": "TB", "fontname": "Helvetica", "fontsize": "10",
                                             "bgcolor": "transparent", "nodesep": "0.2", "ranksep": "0.25"},
                                 node_attr={"shape": "box", "style": "rounded,filled", "fontname": "Helvetica",
                                            "fontsize": "9", "height": "0.25"},
                                 edge_attr={"arrowsize": "0.5", "color": "#777777"})
        ids = {id(node): f"n{k}" for k, node in enumerate(self.plan.nodes)}
        for number, (device, nodes) in enumerate(self.plan.partitions.items()):
            with graph.subgraph(name=f"cluster_{number}") as box:
                box.attr(label=short_device(device), color=self.colours[device], penwidth="2")
                for node in nodes:
                    box.node(ids[id(node)], _label(node), **self._node_attrs(node))
        for node in self.plan.nodes:
            for value in node.inputs:
                if value.producer is not None:
                    graph.edge(ids[id(value.producer)], ids[id(node)])
            for control in node.control_inputs:
                graph.edge(ids[id(control)], ids[id(node)], style="dotted")
            if node.type == "_Recv":
                graph.edge(ids[id(node.peer)], ids[id(node)], style="dashed", color="#d62728", penwidth="1.5",
                           label=_bytes_label(node))
        return graph.source

    def _node_attrs(self, node: Node) -> dict[str, str]:
        if node.is_transfer:
            return {"shape": "cds" if node.type == "_Send" else "invhouse", "fillcolor": TRANSFER_COLOUR,
                    "color": "#d62728", "fontsize": "8", "id": node.name}
        return {"fillcolor": self.colours[node.device], "id": node.name}

    # -- the table and the card -------------------------------------------------------------------

    def table_html(self) -> str:
        """Per device: its ops, the cost model's estimated compute time, and the measured one (traced run)."""
        measured = self._measured_us()
        counts = Counter(self.plan.placement[op] for op in self.plan.ops)
        estimated = Counter()
        for op in self.plan.ops:
            estimated[self.plan.placement[op]] += compute_cost_us(op)
        recvs = Counter(node.device for node in self.plan.transfers)
        rows = "".join(
            f"<tr><td>{_swatch(self.colours[d])}{html.escape(short_device(d))}</td><td>{counts[d]}</td>"
            f"<td>{recvs[d]}</td><td>{estimated[d]:.1f}</td>"
            f"<td>{'' if measured is None else f'{measured.get(d, 0.0):.1f}'}</td></tr>"
            for d in self.plan.partitions)
        step = simulated_step_us(self.plan.ops, self.plan.dependencies, self.plan.placement)
        return (f'<table class="tfnb-placement"><tr><th>device</th><th>ops</th><th>Recvs</th>'
                f"<th>estimated µs</th><th>measured µs</th></tr>{rows}</table>"
                f"<div>the placer's simulated step: {step:.1f} µs</div>")

    def _measured_us(self) -> dict[str, float] | None:
        if self.run_metadata is None:
            return None
        measured: Counter = Counter()
        for stats in self.run_metadata.node_stats():
            measured[stats.device] += stats.all_end_rel_micros
        return dict(measured)

    def _show_card(self) -> None:
        op = next(op for op in self.plan.ops if op.name == self.node.value) if self.node.value else None
        self.card.value = "" if op is None else placement_card(op, self.plan)

    # -- moving a node ----------------------------------------------------------------------------

    def move_node(self, op_name: str, device: str) -> tuple[float, float]:
        """(the simulated step before, after) with op `op_name` on `device`, the other ops where they are."""
        op = next(op for op in self.plan.ops if op.name == op_name)
        before = simulated_step_us(self.plan.ops, self.plan.dependencies, self.plan.placement)
        after = simulated_step_us(self.plan.ops, self.plan.dependencies, {**self.plan.placement, op: device})
        self.moved = {"op": op_name, "device": device, "before_us": before, "after_us": after}
        self.card.value = placement_card(op, self.plan) + (
            f"<div><b>moved to {html.escape(short_device(device))}</b>: simulated step {before:.1f} µs → "
            f"{after:.1f} µs ({after - before:+.1f} µs)</div>")
        return before, after

    def _device_named(self, short: str) -> str:
        return next(d for d in self.plan.partitions if short_device(d) == short)


def placement_card(op, plan: Plan) -> str:
    """An op's placement: its device, every candidate's estimated finish time, and what constrained it."""
    reasons = op.placement_reasons
    estimates = reasons.get("estimated_finish_us", {})
    rows = "".join(f"<tr><td>{html.escape(short_device(d))}{' ✔' if d == plan.placement[op] else ''}</td>"
                   f"<td>{t:.1f} µs</td></tr>" for d, t in estimates.items())
    decided = []
    if reasons.get("constraint"):
        decided.append(f"requested device {html.escape(reasons['constraint'])}")
    if reasons.get("colocated_with"):
        decided.append(f"colocated with {html.escape(reasons['colocated_with'])}")
    if len(estimates) > 1 or not decided:
        decided.append("the soonest estimated finish")
    return (f"<div><b>{html.escape(op.name)}</b> <i>{html.escape(op.type)}</i> on "
            f"{html.escape(short_device(plan.placement[op]))}</div>"
            f"<table><tr><th>candidate</th><th>estimated finish</th></tr>{rows}</table>"
            f"<div>decided by: {'; '.join(decided)}</div>")


def _label(node: Node) -> str:
    if node.is_transfer:
        return f"{node.type[1:]} {node.tensor.name if node.tensor is not None else 'signal'}"
    leaf = node.name.rpartition("/")[2]
    return leaf if leaf.lower().startswith(node.type.lower()) else f"{leaf}\\n{node.type}"


def _bytes_label(recv: Node) -> str:
    if recv.tensor is None:   # a control edge's signal carries no value
        return ""
    dims = recv.tensor.shape.as_tuple()
    if dims is None or None in dims:
        return ""
    size = recv.tensor.dtype.size
    for dim in dims:
        size *= dim
    return f"{size} B"


def _swatch(colour: str) -> str:
    return f'<span class="tfnb-swatch" style="background:{colour}"></span>'


class MemoryView(BokehModel):
    """Bytes alive on each device after each node of a traced step (its `memory`), with the Recvs marked."""

    def __init__(self, run_metadata: RunMetadata, **kwargs) -> None:
        load_bokehjs()
        self.data = memory_data(run_metadata)
        plot = figure(height=260, sizing_mode="stretch_width", x_axis_label="node, in execution order",
                      y_axis_label="bytes alive", tools="xpan,xwheel_zoom,reset,save", toolbar_location="above")
        for (device, series), colour in zip(self.data.items(), DEVICE_COLOURS):
            source = ColumnDataSource(series)
            plot.step(x="order", y="live", source=source, color=colour, line_width=2, mode="after",
                      legend_label=short_device(device))
            recvs = ColumnDataSource({k: [v for v, r in zip(series[k], series["recv"]) if r] for k in series})
            plot.scatter(x="order", y="live", source=recvs, color="#d62728", size=7, marker="triangle")
        plot.add_tools(HoverTool(tooltips=[("node", "@node"), ("bytes alive", "@live")]))
        plot.legend.location = "top_left"
        self.figure = plot
        super().__init__(plot, **kwargs)


def memory_data(run_metadata: RunMetadata) -> dict[str, dict[str, list]]:
    """Per device: execution order, node name, bytes alive after it, and whether it was a Recv."""
    return {device: {"order": [order for order, _, _ in points], "node": [name for _, name, _ in points],
                     "live": [live for _, _, live in points],
                     "recv": [name.startswith("_Recv/") for _, name, _ in points]}
            for device, points in run_metadata.memory.items()}
