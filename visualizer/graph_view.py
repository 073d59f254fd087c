"""GraphView: a graph, a session's plan or the closure of some fetches, drawn as SVG in a notebook widget.

Name scopes are drawn as single nodes until expanded (click one; click its box to collapse it
again); sibling scopes built alike (`layer_1` ... `layer_8`) first show as one node `layer_[1-8]`.
Control flow is drawn as the paper describes it: a while loop's frame is a blue box (nested loops
nest), a cond a sand-coloured box holding one box per branch, the primitives have shapes of their
own (Switch a diamond, Merge a funnel, Enter and Exit house shapes pointing into and out of the
frame, NextIteration an arrow), and NextIteration's back edge to its Merge is dashed.
Overlays (a run's compute times, a replay frame, search hits) restyle nodes through the
`node_styles` trait, so they never need a new layout.
"""

from __future__ import annotations

import html
import pathlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import anywidget
import numpy as np
import traitlets

from tfnb.client.fetches import flatten
from tfnb.client.session import Session
from tfnb.framework.device_spec import short_device
from tfnb.framework.dtypes import DType
from tfnb.framework.graph import Graph, get_default_graph
from tfnb.framework.operation import Operation, is_loop_back_edge
from tfnb.framework.tensor import Tensor
from tfnb.runtime.plan import Plan
from tfnb.runtime.prune import prune
from tfnb.runtime.tracing import NodeExecStats, RunMetadata

from .dot import DotEdge, DotNode, build_dot, layout_svg, with_styles
from .grouping import Grouping

_STATIC = pathlib.Path(__file__).parent / "static"
# ColorBrewer's Set3: pale enough that black labels stay readable
DEVICE_COLOURS = ("#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69", "#fccde5", "#ffffb3",
                  "#bc80bd", "#ccebc5")
UNPLACED_COLOUR = "#eeeeee"
MIXED_COLOUR = "#ffffff"
FADED = {"opacity": "0.25"}
SEARCH_HIT = {"stroke": "#e6194b", "stroke-width": "3"}
SEARCH_EXPAND_LIMIT = 20
CONTROL_FLOW_SHAPES = {"Switch": "diamond", "Merge": "invtrapezium", "Enter": "invhouse", "Exit": "house",
                       "NextIteration": "cds", "LoopCond": "octagon"}
GROUP_STYLES = {"frame": {"fillcolor": "#e6f0fa", "color": "#4a7fb0"},
                "cond": {"fillcolor": "#f8f1e3", "color": "#b08a3e"},
                "true": {"fillcolor": "#e8f5e3", "color": "#5a9a4a"},
                "false": {"fillcolor": "#f9e8e8", "color": "#b05a5a"}}
GROUP_KINDS = {"scope": "name scope", "series": "series of scopes", "frame": "while loop frame", "cond": "cond",
               "branch": "cond branch"}


@dataclass
class _Source:
    ops: list[Operation]
    placement: dict[Operation, str]
    resolve: Callable[[Tensor], Tensor]
    dependencies: dict[Operation, list[Operation]] | None


def _source_of(obj) -> _Source:
    """The ops to draw from a Graph, a Session (its latest plan), a Plan, or fetches (their closure)."""
    if isinstance(obj, Session):
        obj = obj.last_plan() or obj.graph
    if isinstance(obj, Graph):
        return _Source(obj.get_operations(), {}, lambda t: t, None)
    if isinstance(obj, Plan):
        return _Source(list(obj.ops), dict(obj.placement), obj.resolve, dict(obj.dependencies))
    graph = _graph_of(obj)
    leaves, _ = flatten(graph, obj)
    needed = prune([x for x in leaves if isinstance(x, Tensor)], [x for x in leaves if isinstance(x, Operation)], ())
    return _Source([op for op in graph.get_operations() if op in needed], {}, lambda t: t, None)


def _graph_of(fetches) -> Graph:
    if isinstance(fetches, Tensor | Operation):
        return fetches.graph
    if isinstance(fetches, dict):
        fetches = list(fetches.values())
    if isinstance(fetches, list | tuple):
        for item in fetches:
            if not isinstance(item, str):
                return _graph_of(item)
    if hasattr(fetches, "graph"):
        return fetches.graph
    return get_default_graph()


def shape_text(tensor: Tensor) -> str:
    """A tensor's static shape as an edge label: '(?, 128)', '()' for a scalar, '?' when the rank is unknown."""
    return "?" if tensor.shape.ndims is None else str(tensor.shape)


class Overlay:
    """Restyles a view's nodes without a new layout; may add a legend and lines to the card."""

    def styles(self, units: dict[str, list[Operation]]) -> dict[str, dict]:
        """Style (fill, opacity, stroke, stroke-width) per visible node id, given the ops each stands for."""
        return {}

    def legend(self) -> str:
        """HTML shown under the device legend."""
        return ""

    def card(self, ops: list[Operation]) -> str:
        """HTML added to the card of a node standing for `ops`."""
        return ""


class RunOverlay(Overlay):
    """A traced run on the graph: nodes the fetches did not need fade; the rest are coloured by compute time.

    A node in a loop runs once per iteration: its time is the sum over its runs.
    """

    def __init__(self, run_metadata: RunMetadata) -> None:
        self.runs: dict[str, list[NodeExecStats]] = {}
        for stats in run_metadata.node_stats():
            self.runs.setdefault(stats.node_name, []).append(stats)
        self.longest_us = 0.0

    def micros(self, ops: list[Operation]) -> float | None:
        """Total compute time of the ops that ran among `ops`, or None if none ran."""
        ran = [stats.all_end_rel_micros for op in ops for stats in self.runs.get(op.name, ())]
        return sum(ran) if ran else None

    def styles(self, units: dict[str, list[Operation]]) -> dict[str, dict]:
        times = {unit: self.micros(ops) for unit, ops in units.items()}
        self.longest_us = max((t for t in times.values() if t is not None), default=0.0)
        return {unit: FADED if t is None else {"fill": heat_colour(t / self.longest_us if self.longest_us else 0.0)}
                for unit, t in times.items()}

    def legend(self) -> str:
        return (f'<div class="tfnb-scale">compute time: 0 µs <span class="tfnb-gradient" style="background:linear-'
                f'gradient(to right,{heat_colour(0)},{heat_colour(1)})"></span> {self.longest_us:.1f} µs '
                f'<span class="tfnb-faded">faded: did not run</span></div>')

    def card(self, ops: list[Operation]) -> str:
        total = self.micros(ops)
        if total is None:
            return "<div>run: not needed by the fetches</div>"
        lines = [f"<div>run: {total:.1f} µs compute"]
        if len(ops) == 1:
            runs = self.runs[ops[0].name]
            if len(runs) > 1:
                lines.append(f" in {len(runs)} runs ({sum(stats.dead for stats in runs)} dead)")
            live = [stats for stats in runs if not stats.dead] or runs
            lines.append(f", outputs {html.escape(str([tuple(s) for s in live[-1].output_shapes]))}, "
                         f"{sum(live[-1].output_bytes)} bytes")
        return "".join(lines) + "</div>"


def heat_colour(fraction: float) -> str:
    """A colour from pale yellow (0) to dark red (1), linear in each channel."""
    low, high = np.array([255, 245, 200]), np.array([189, 0, 38])
    red, green, blue = (low + (high - low) * min(max(fraction, 0.0), 1.0)).round().astype(int)
    return f"#{red:02x}{green:02x}{blue:02x}"


class _SearchOverlay(Overlay):
    def __init__(self, query: str) -> None:
        self.query = query.lower()

    def styles(self, units: dict[str, list[Operation]]) -> dict[str, dict]:
        return {unit: SEARCH_HIT for unit, ops in units.items() if any(self.query in op.name.lower() for op in ops)}


class GraphView(anywidget.AnyWidget):
    """A graph drawn as SVG: click a scope to expand it, a node to see its card; search; overlays.

    `source` is a Graph, a Session (the ops its latest run compiled, with assigned devices), a Plan,
    or fetches (tensors, ops or names: the ops they need). Unlike TensorBoard, layout is done in
    Python (Graphviz's dot), and the widget only shows and restyles the SVG.
    """

    _esm = _STATIC / "graph_view.js"
    _css = _STATIC / "graph_view.css"
    svg = traitlets.Unicode("").tag(sync=True)
    node_styles = traitlets.Dict().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    hovered = traitlets.Unicode("").tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    card = traitlets.Unicode("").tag(sync=True)
    legend = traitlets.Unicode("").tag(sync=True)

    def __init__(self, source, *, collapse_above: int = 60, series_min: int = 3, rankdir: str = "TB",
                 **kwargs) -> None:
        self._ready = False
        super().__init__(**kwargs)
        self._source = _source_of(source)
        self._by_name = {op.name: op for op in self._source.ops}
        self._grouping = Grouping(self._source.ops, series_min)
        self._overlays: dict[str, Overlay] = {}
        self._rankdir = rankdir
        self._units: dict[str, list[Operation]] = {}
        self._colours = self._device_colours()
        self.dot = ""
        self.expanded = sorted(self._grouping.default_expanded(collapse_above))
        self._ready = True
        self._relayout()

    # -- what is shown ----------------------------------------------------------------------------

    @property
    def ops(self) -> list[Operation]:
        """The ops this view draws, in creation (or plan) order."""
        return list(self._source.ops)

    @property
    def dependencies(self) -> dict[Operation, list[Operation]] | None:
        """The plan's dependencies when the view shows a session's plan, else None."""
        return self._source.dependencies

    @property
    def units(self) -> dict[str, list[str]]:
        """Visible node id -> names of the ops it stands for."""
        return {unit: [op.name for op in ops] for unit, ops in self._units.items()}

    def unit_of(self, op_name: str) -> str:
        """The visible node that stands for an op (itself, or the collapsed scope or series holding it)."""
        return self._grouping.unit(self._by_name[op_name], set(self.expanded))[0]

    def device_of(self, op: Operation) -> str:
        """The op's assigned device (from the plan when the view shows one), else its requested device."""
        return self._source.placement.get(op) or op.assigned_device or op.device

    # -- interaction ------------------------------------------------------------------------------

    def expand(self, group_id: str) -> None:
        """Shows the inside of a scope (`'dense/'`) or series (`'layer_[1-8]'`)."""
        if group_id not in self.expanded:
            self.expanded = [*self.expanded, group_id]

    def collapse(self, group_id: str) -> None:
        """Draws a scope or series as one node again."""
        self.expanded = [g for g in self.expanded if g != group_id]

    def reveal(self, op_name: str) -> None:
        """Expands every group around an op, so it is drawn as its own node."""
        missing = [g for g in self._grouping.chains[self._by_name[op_name]] if g not in self.expanded]
        if missing:
            self.expanded = [*self.expanded, *missing]

    def set_overlay(self, name: str, overlay: Overlay) -> None:
        """Adds or replaces a named overlay; the overlay set last wins where styles overlap."""
        self._overlays.pop(name, None)
        self._overlays[name] = overlay
        self._restyle()

    def clear_overlay(self, name: str) -> None:
        """Removes a named overlay (no-op if absent)."""
        if self._overlays.pop(name, None) is not None:
            self._restyle()

    def show_run(self, run_metadata: RunMetadata) -> None:
        """Overlays a traced run: unneeded nodes fade, the others are coloured by compute time (with a scale)."""
        self.set_overlay("run", RunOverlay(run_metadata))

    def to_svg(self) -> str:
        """The drawing as standalone SVG text, with the current overlay styles."""
        return with_styles(self.svg, self.node_styles)

    def save_svg(self, path: str) -> None:
        """Writes `to_svg()` to a file."""
        pathlib.Path(path).write_text(self.to_svg())

    @traitlets.observe("expanded")
    def _on_expanded(self, change) -> None:
        if self._ready:
            self._relayout()

    @traitlets.observe("selected", "hovered")
    def _on_pointer(self, change) -> None:
        if change["name"] == "selected" and change["new"] in self._by_name:
            self.reveal(change["new"])
        self._update_card()

    @traitlets.observe("query")
    def _on_query(self, change) -> None:
        query = change["new"].strip()
        if not query:
            self.clear_overlay("search")
            return
        hits = [op.name for op in self._source.ops if query.lower() in op.name.lower()]
        self._overlays["search"] = _SearchOverlay(query)
        groups = {g for name in hits[:SEARCH_EXPAND_LIMIT + 1] for g in self._grouping.chains[self._by_name[name]]}
        if len(hits) <= SEARCH_EXPAND_LIMIT and not groups <= set(self.expanded):
            self.expanded = sorted(set(self.expanded) | groups)
        else:
            self._restyle()

    # -- drawing ----------------------------------------------------------------------------------

    def _relayout(self) -> None:
        expanded = set(self.expanded)
        self._units = self._grouping.units(expanded)
        nodes = [self._dot_node(unit, ops, expanded) for unit, ops in self._units.items()]
        self.dot = build_dot(nodes, self._dot_edges(expanded), self._cluster_attrs(expanded), self._rankdir)
        self.svg = layout_svg(self.dot)
        self._restyle()

    def _restyle(self) -> None:
        styles: dict[str, dict] = {}
        for overlay in self._overlays.values():
            for unit, style in overlay.styles(self._units).items():
                styles[unit] = {**styles.get(unit, {}), **style}
        self.node_styles = styles
        self.legend = self._device_legend() + "".join(o.legend() for o in self._overlays.values())
        self._update_card()

    def _dot_node(self, unit: str, ops: list[Operation], expanded: set[str]) -> DotNode:
        clusters = self._grouping.unit(ops[0], expanded)[1]
        if unit in self._grouping.members:
            kind = self._grouping.kind(unit)
            size = f"{len(ops)} ops"
            if kind == "series":
                copies = len(self._grouping.children(unit))
                size = f"{copies} × {len(ops) // copies} ops"
            return DotNode(unit, f"{self._grouping.label(unit)}\\n{size}", clusters,
                           {"shape": "box3d", "style": "filled", "fillcolor": self._fill(ops),
                            "class": f"group {kind}"})
        op = ops[0]
        leaf = op.name.rpartition("/")[2]
        label = leaf if leaf.lower().startswith(op.type.lower()) else f"{leaf}\\n{op.type}"
        attrs = {"fillcolor": self._fill(ops), "class": "op"}
        if op.type in CONTROL_FLOW_SHAPES:
            # rounded corners would turn these outlines into boxes again
            attrs.update({"shape": CONTROL_FLOW_SHAPES[op.type], "style": "filled", "margin": "0.02",
                          "class": "op control-flow"})
        return DotNode(unit, label, clusters, attrs)

    def _dot_edges(self, expanded: set[str]) -> list[DotEdge]:
        data: dict[tuple[str, str], dict[Tensor, None]] = {}
        control: dict[tuple[str, str], None] = {}
        back: set[tuple[str, str]] = set()
        shown = set(self._by_name.values())
        for op in self._source.ops:
            target = self._grouping.unit(op, expanded)[0]
            for tensor in op.inputs:
                tensor = self._source.resolve(tensor)
                source = self._grouping.unit(tensor.op, expanded)[0] if tensor.op in shown else None
                if source is not None and source != target:
                    data.setdefault((source, target), {})[tensor] = None
                    if is_loop_back_edge(op, tensor):
                        back.add((source, target))
            for dep in op.control_inputs:
                source = self._grouping.unit(dep, expanded)[0] if dep in shown else None
                if source is not None and source != target:
                    control[(source, target)] = None
        edges = [DotEdge(s, t, shape_text(next(iter(ts))) if len(ts) == 1 else f"{len(ts)} tensors",
                         back=(s, t) in back) for (s, t), ts in data.items()]
        return edges + [DotEdge(s, t, control=True) for s, t in control if (s, t) not in data]

    def _cluster_attrs(self, expanded: set[str]) -> dict[str, dict[str, str]]:
        attrs = {}
        for group in expanded & self._grouping.members.keys():
            kind = self._grouping.kind(group)
            label = self._grouping.label(group)
            attrs[group] = {"label": label, "class": f"group {kind}",
                            **GROUP_STYLES.get(label if kind == "branch" else kind, {})}
        return attrs

    def _device_colours(self) -> dict[str, str]:
        devices = sorted({self.device_of(op) for op in self._source.ops} - {""})
        return {device: DEVICE_COLOURS[i % len(DEVICE_COLOURS)] for i, device in enumerate(devices)}

    def _fill(self, ops: list[Operation]) -> str:
        devices = {self.device_of(op) for op in ops}
        if len(devices) > 1:
            return MIXED_COLOUR
        return self._colours.get(devices.pop(), UNPLACED_COLOUR)

    def _device_legend(self) -> str:
        assigned = any(op.assigned_device or op in self._source.placement for op in self._source.ops)
        entries = [(short_device(d), d, c) for d, c in self._colours.items()]
        if any(not self.device_of(op) for op in self._source.ops):
            entries.append(("unplaced", "no device requested or assigned", UNPLACED_COLOUR))
        if any(self._fill(ops) == MIXED_COLOUR for ops in self._units.values()):
            entries.append(("several", "a collapsed group whose ops are on several devices", MIXED_COLOUR))
        items = "".join(f'<span class="tfnb-swatch" style="background:{c}" title="{html.escape(full)}"></span>'
                        f'{html.escape(label)} ' for label, full, c in entries)
        kind = "assigned device" if assigned else "requested device"
        return f'<div class="tfnb-legend-devices">{kind}: {items}</div>'

    # -- the card ---------------------------------------------------------------------------------

    def _update_card(self) -> None:
        target = self.hovered or self.selected
        if target in self._grouping.members:
            self.card = self._group_card(target, self._grouping.members[target])
        elif target in self._by_name:
            self.card = self._op_card(self._by_name[target])
        else:
            self.card = ""

    def _group_card(self, group: str, ops: list[Operation]) -> str:
        types = ", ".join(f"{t} ×{n}" for t, n in Counter(op.type for op in ops).most_common(8))
        devices = ", ".join(f"{short_device(d) or 'unplaced'} ×{n}"
                            for d, n in Counter(self.device_of(op) for op in ops).most_common())
        rows = [("ops", str(len(ops))), ("types", types), ("devices", devices)]
        overlays = "".join(o.card(ops) for o in self._overlays.values())
        return _card(group, GROUP_KINDS[self._grouping.kind(group)], rows) + overlays

    def _op_card(self, op: Operation) -> str:
        rows = [("inputs", _tensor_list(op.inputs)), ("outputs", _tensor_list(op.outputs))]
        if op.control_inputs:
            rows.append(("control inputs", ", ".join(c.name for c in op.control_inputs)))
        rows += [("requested device", op.device or "(none)"),
                 ("assigned device", self._source.placement.get(op) or op.assigned_device or "(not placed)"),
                 ("created at", op.creation_site)]
        rows += [(f"attr {k}", _short(v)) for k, v in op.attrs.items()]
        rows += _placement_rows(op.placement_reasons)
        return _card(op.name, op.type, rows) + "".join(o.card([op]) for o in self._overlays.values())


def _card(title: str, kind: str, rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f'<div class="tfnb-card-title"><b>{html.escape(title)}</b> <i>{html.escape(kind)}</i></div><table>{body}</table>'


def _tensor_list(tensors) -> str:
    return "; ".join(f"{t.name} {shape_text(t)} {t.dtype.name}" for t in tensors) or "(none)"


def _placement_rows(reasons: dict) -> list[tuple[str, str]]:
    """The placer's estimates: each candidate device's estimated finish time, and its constraints."""
    if not reasons:
        return []
    estimates = ", ".join(f"{short_device(d)} {t:.1f} µs" for d, t in reasons.get("estimated_finish_us", {}).items())
    rows = [("placer: est. finish", estimates)]
    if reasons.get("constraint"):
        rows.append(("placer: constraint", reasons["constraint"]))
    if reasons.get("colocated_with"):
        rows.append(("placer: colocated with", reasons["colocated_with"]))
    return rows


def _short(value, limit: int = 60) -> str:
    """A short text for an attr value: dtypes by name, arrays by shape and dtype, others by repr."""
    if isinstance(value, np.ndarray):
        text = f"array{value.shape} {value.dtype}" if value.size > 8 else np.array2string(value, separator=",")
    else:
        text = value.name if isinstance(value, DType) else str(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"
