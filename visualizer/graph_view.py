"""GraphView: a graph, a session's plan or the closure of some fetches, drawn as SVG in a notebook widget.

Name scopes are drawn as single nodes until expanded (click one; click its box to collapse it
again); sibling scopes built alike (`layer_1` ... `layer_8`) first show as one node `layer_[1-8]`.
A large graph opens as TensorBoard opens it: top-level scopes collapsed into boxes that show their
op count, with one edge per pair of boxes labelled with the number of tensors it stands for; the
gradient graph, the optimizer (with its slots) and the initializers each in a box of their own
(visualizer/roles.py). Each expanded group is laid out on its own and nested
(visualizer/nested_layout.py), so expanding one moves its neighbours aside without reordering them.
Control flow is drawn as the paper describes it: a while loop's frame is a blue box (nested loops
nest), a cond a sand-coloured box holding one box per branch, the primitives have shapes of their
own (Switch a diamond, Merge a funnel, Enter and Exit house shapes pointing into and out of the
frame, NextIteration an arrow), and NextIteration's back edge to its Merge is dashed.
Overlays (a run's compute times, a replay frame, search hits) restyle nodes through the
`node_styles` trait, so they never need a new layout. The front end pans (drag), zooms (wheel),
fits the drawing to the cell, shows an overview with the visible window marked, and centres on
the node named by the `focus` trait.
"""

from __future__ import annotations

import html
import pathlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import anywidget
import numpy as np
import traitlets

from tfnb.client.fetches import flatten
from tfnb.client.session import Session
from tfnb.framework.device_spec import DeviceSpec, short_device
from tfnb.framework.dtypes import DType
from tfnb.framework.graph import Graph, get_default_graph
from tfnb.framework.operation import Operation, is_loop_back_edge
from tfnb.framework.tensor import Tensor
from tfnb.runtime.plan import Plan
from tfnb.runtime.prune import prune
from tfnb.runtime.tracing import NodeExecStats, RunMetadata

from .dot import DotEdge, DotNode, with_styles
from .grouping import Grouping
from .nested_layout import Level, NestedLayout, bridge_in, bridge_out

_STATIC = pathlib.Path(__file__).parent / "static"
# ColorBrewer's Set3: pale enough that dark labels stay readable, on light and dark themes alike
DEVICE_COLOURS = ("#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69", "#fccde5", "#ffffb3",
                  "#bc80bd", "#ccebc5")
NO_DEVICE_COLOUR = "#eeeeee"
COLOUR_BY = ("auto", "device", "task")
MIXED_COLOUR = "#ffffff"
FADED = {"opacity": "0.25"}
SEARCH_HIT = {"stroke": "#e6194b", "stroke-width": "3"}
CURRENT_HIT = {"stroke": "#e6194b", "stroke-width": "5"}
SEARCH_EXPAND_LIMIT = 20
ROLE_KINDS = frozenset({"gradients", "optimizer", "state", "initializers"})
CONTROL_FLOW_SHAPES = {"Switch": "diamond", "Merge": "invtrapezium", "Enter": "invhouse", "Exit": "house",
                       "NextIteration": "cds", "LoopCond": "octagon"}
GROUP_STYLES = {"frame": {"fill": "#e6f0fa", "stroke": "#4a7fb0"},
                "cond": {"fill": "#f8f1e3", "stroke": "#b08a3e"},
                "true": {"fill": "#e8f5e3", "stroke": "#5a9a4a"},
                "false": {"fill": "#f9e8e8", "stroke": "#b05a5a"}}
GROUP_KINDS = {"scope": "name scope", "series": "series of scopes", "frame": "while loop frame", "cond": "cond",
               "branch": "cond branch", "gradients": "gradient graph", "optimizer": "optimizer updates",
               "state": "optimizer state (slots)", "initializers": "variable initializers"}


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
    """Restyles a view's nodes without a new layout; may add a legend and lines to the card.

    An overlay that `recolours` nodes replaces the device colours, and its legend the device legend.
    """

    recolours = False

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

    recolours = True

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
    """A colour from pale yellow (0) to red (1), linear in each channel; dark labels stay readable on all of them."""
    low, high = np.array([255, 245, 200]), np.array([240, 59, 32])
    red, green, blue = (low + (high - low) * min(max(fraction, 0.0), 1.0)).round().astype(int)
    return f"#{red:02x}{green:02x}{blue:02x}"


class _SearchOverlay(Overlay):
    """Search hits: every node holding a hit gets a red outline, the node holding the current one a thicker one."""

    def __init__(self, hits: list[Operation], current: Operation | None) -> None:
        self.hits, self.current = set(hits), current

    def styles(self, units: dict[str, list[Operation]]) -> dict[str, dict]:
        styles = {unit: SEARCH_HIT for unit, ops in units.items() if not self.hits.isdisjoint(ops)}
        styles.update({unit: CURRENT_HIT for unit, ops in units.items() if self.current in ops})
        return styles


class GraphView(anywidget.AnyWidget):
    """A graph drawn as SVG: click a scope to expand it, a node to see its card; search; overlays.

    `source` is a Graph, a Session (the ops its latest run compiled, with assigned devices), a Plan,
    or fetches (tensors, ops or names: the ops they need). Nodes are coloured by the device the plan
    shown assigned them (a Session or a Plan) or else by the device requested for them; by its task
    instead (`colour_by="task"`, the default when the ops span several tasks of a cluster). Unlike
    TensorBoard, layout is done in Python (Graphviz's dot), and the widget only shows and restyles the SVG.
    """

    _esm = _STATIC / "graph_view.js"
    _css = _STATIC / "graph_view.css"
    svg = traitlets.Unicode("").tag(sync=True)
    node_styles = traitlets.Dict().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    hovered = traitlets.Unicode("").tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    match_count = traitlets.Int(0).tag(sync=True)
    match_index = traitlets.Int(-1).tag(sync=True)
    focus = traitlets.Dict().tag(sync=True)
    card = traitlets.Unicode("").tag(sync=True)
    legend = traitlets.Unicode("").tag(sync=True)

    def __init__(self, source, *, collapse_above: int = 60, series_min: int = 3, rankdir: str = "TB",
                 colour_by: str = "auto", **kwargs) -> None:
        self._ready = False
        super().__init__(**kwargs)
        self._source = _source_of(source)
        self._by_name = {op.name: op for op in self._source.ops}
        self._grouping = Grouping(self._source.ops, series_min)
        self._overlays: dict[str, Overlay] = {}
        self._rankdir = rankdir
        self._units: dict[str, list[Operation]] = {}
        self._key = colour_key(colour_by, map(self.device_of, self._source.ops))
        self.colour_by = "task" if self._key is task_key else "device"
        self._colours = self._device_colours()
        self._hits: list[Operation] = []
        self._focus_count = 0
        self.drawing: NestedLayout | None = None
        self.expanded = sorted(self._grouping.default_expanded(collapse_above))
        self._ready = True
        self._relayout()
        self.on_msg(self._on_message)

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

    @property
    def dot(self) -> str:
        """The DOT text of every laid-out level (the whole graph first, then each expanded group)."""
        return "\n".join(self.drawing.dots.values())

    @property
    def hits(self) -> list[str]:
        """Names of the ops the search matches, in op order."""
        return [op.name for op in self._hits]

    def unit_of(self, op_name: str) -> str:
        """The visible node that stands for an op (itself, or the collapsed scope or series holding it)."""
        return self._grouping.unit(self._by_name[op_name], set(self.expanded))[0]

    def groups_around(self, unit: str) -> list[str]:
        """The expanded groups a visible node is drawn in, outermost first."""
        return list(self._grouping.unit(self._units[unit][0], set(self.expanded))[1])

    def device_of(self, op: Operation) -> str:
        """The device the plan shown assigned the op, or else the one requested for it ('' if none)."""
        if self._source.placement:
            return self._source.placement.get(op, "")
        return op.device

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

    def follow(self, unit: str) -> None:
        """Pans the view, if needed, so that the visible node `unit` is in sight (a replay follows its running node)."""
        self._set_focus(unit, "keep")

    def next_match(self, step: int = 1) -> None:
        """Goes to the next search hit (`step=-1`: the previous one): shows it as its own node, selects it, centres it.

        The search box's Enter (Shift+Enter) and its arrow buttons call this."""
        if not self._hits:
            return
        if self.match_index < 0:
            self.match_index = 0 if step > 0 else len(self._hits) - 1
        else:
            self.match_index = (self.match_index + step) % len(self._hits)

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

    def _on_message(self, _widget, content: dict, _buffers) -> None:
        if "next_match" in content:
            self.next_match(int(content["next_match"]))

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
        """Each keystroke: the hits are outlined where they are drawn (inside collapsed groups too); a few
        hits are revealed; the view pans to the first one. Enter (`match_index`) goes through them."""
        query = change["new"].strip().lower()
        self._hits = [op for op in self._source.ops if query and query in self._search_text(op)]
        self.match_count = len(self._hits)
        self.match_index = -1
        if not self._hits:
            self.clear_overlay("search")
            return
        self._overlays["search"] = _SearchOverlay(self._hits, None)
        groups = {g for op in self._hits[:SEARCH_EXPAND_LIMIT + 1] for g in self._grouping.chains[op]}
        if len(self._hits) <= SEARCH_EXPAND_LIMIT and not groups <= set(self.expanded):
            self.expanded = sorted(set(self.expanded) | groups)
        else:
            self._restyle()
        self._set_focus(self.unit_of(self._hits[0].name), "keep")

    @traitlets.observe("match_index")
    def _on_match_index(self, change) -> None:
        if not 0 <= change["new"] < len(self._hits):
            return
        current = self._hits[change["new"]]
        self._overlays["search"] = _SearchOverlay(self._hits, current)
        self.selected = current.name  # reveals it and shows its card
        self._restyle()
        self._set_focus(current.name, "centre")

    def _search_text(self, op: Operation) -> str:
        device = self.device_of(op)
        return f"{op.name}\n{op.type}\n{device}\n{short_device(device)}".lower()

    def _set_focus(self, unit: str, mode: str) -> None:
        self._focus_count += 1
        self.focus = {"id": unit, "mode": mode, "count": self._focus_count}

    # -- drawing ----------------------------------------------------------------------------------

    def _relayout(self) -> None:
        expanded = set(self.expanded)
        self._units = self._grouping.units(expanded)
        self.drawing = NestedLayout(self._levels(expanded), self._rankdir)
        self.svg = self.drawing.svg
        self._restyle()

    def _levels(self, expanded: set[str]) -> dict[str, Level]:
        """Each expanded group that is drawn (and the whole graph, ''): its nodes, inner groups and edges."""
        levels = {"": Level("")}
        for unit, ops in self._units.items():
            around = self._grouping.unit(ops[0], expanded)[1]
            for depth, group in enumerate(around):
                if group not in levels:
                    levels[group] = self._level(group)
                    parent = levels[around[depth - 1] if depth else ""]
                    parent.groups.append(group)
                    # where the group would be as a collapsed node: dot's ordering depends on the order of declarations
                    parent.nodes.append(DotNode(group, ""))
            levels[around[-1] if around else ""].nodes.append(self._dot_node(unit, ops))
        for level_id, edge in self._dot_edges(expanded):
            levels[level_id].edges.append(edge)
        return levels

    def _level(self, group: str) -> Level:
        kind = self._grouping.kind(group)
        label = self._grouping.label(group)
        style = GROUP_STYLES.get(label if kind == "branch" else kind, {})
        css_class = f"group {kind} {label}" if kind == "branch" else f"group {kind}"
        return Level(group, label=label, css_class=css_class, **style)

    def _restyle(self) -> None:
        styles: dict[str, dict] = {}
        for overlay in self._overlays.values():
            for unit, style in overlay.styles(self._units).items():
                styles[unit] = {**styles.get(unit, {}), **style}
        self.node_styles = styles
        recoloured = any(overlay.recolours for overlay in self._overlays.values())
        legends = "".join(overlay.legend() for overlay in self._overlays.values())
        self.legend = legends if recoloured else self._device_legend() + legends
        self._update_card()

    def _dot_node(self, unit: str, ops: list[Operation]) -> DotNode:
        if unit in self._grouping.members:
            kind = self._grouping.kind(unit)
            size = f"{len(ops)} op" + "s" * (len(ops) > 1)
            if kind == "series":
                copies = len(self._grouping.children(unit))
                size = f"{copies} × {len(ops) // copies} ops"
            return DotNode(unit, f"{self._grouping.label(unit)}\\n{size}",
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
        return DotNode(unit, label, attrs)

    def _dot_edges(self, expanded: set[str]) -> list[tuple[str, DotEdge]]:
        """(level, edge) pairs: each edge between two visible nodes is drawn at the innermost level holding both
        (between the boxes there that hold them), and inside each box it leaves or enters, to or from a bridge."""
        data: dict[tuple[str, str, str], dict[Tensor, None]] = {}
        control: dict[tuple[str, str, str], None] = {}
        back: set[tuple[str, str, str]] = set()
        shown = set(self._by_name.values())
        for op in self._source.ops:
            for tensor in op.inputs:
                tensor = self._source.resolve(tensor)
                if tensor.op in shown:
                    for key in self._edge_pieces(tensor.op, op, expanded):
                        data.setdefault(key, {})[tensor] = None
                        if is_loop_back_edge(op, tensor):
                            back.add(key)
            for dep in op.control_inputs:
                if dep in shown:
                    control.update(dict.fromkeys(self._edge_pieces(dep, op, expanded)))
        edges = [(level, DotEdge(s, t, _edge_label(tensors, s, t), back=(level, s, t) in back, tensors=len(tensors),
                                 minor=self._is_role(t)))
                 for (level, s, t), tensors in data.items()]
        return edges + [(level, DotEdge(s, t, control=True, minor=self._is_role(t)))
                        for level, s, t in control if (level, s, t) not in data]

    def _is_role(self, unit: str) -> bool:
        """Whether a node is the gradient graph, an optimizer or the initializers (edges into it are minor)."""
        return unit in self._grouping.kinds and self._grouping.kind(unit) in ROLE_KINDS

    def _edge_pieces(self, source: Operation, target: Operation, expanded: set[str]) -> list[tuple[str, str, str]]:
        """(level, from, to) for each piece an edge from `source` to `target` is drawn in (none inside one node)."""
        source_unit, source_around = self._grouping.unit(source, expanded)
        target_unit, target_around = self._grouping.unit(target, expanded)
        if source_unit == target_unit:
            return []
        common = 0
        while (common < min(len(source_around), len(target_around))
               and source_around[common] == target_around[common]):
            common += 1
        source_path, target_path = (*source_around, source_unit), (*target_around, target_unit)
        pieces = [(source_around[common - 1] if common else "", source_path[common], target_path[common])]
        pieces += [(group, source_path[depth + 1], bridge_out(group))
                   for depth, group in enumerate(source_around) if depth >= common]
        pieces += [(group, bridge_in(group), target_path[depth + 1])
                   for depth, group in enumerate(target_around) if depth >= common]
        return pieces

    def _device_colours(self) -> dict[str, str]:
        keys = sorted({self._key(self.device_of(op)) for op in self._source.ops} - {""})
        return {key: DEVICE_COLOURS[i % len(DEVICE_COLOURS)] for i, key in enumerate(keys)}

    def _colour_of(self, device: str) -> str:
        return self._colours.get(self._key(device), NO_DEVICE_COLOUR)

    def _fill(self, ops: list[Operation]) -> str:
        keys = {self._key(self.device_of(op)) for op in ops}
        if len(keys) > 1:
            return MIXED_COLOUR
        return self._colours.get(keys.pop(), NO_DEVICE_COLOUR)

    def _device_legend(self) -> str:
        """One entry per colour the visible nodes have, named as their cards name devices (or tasks)."""
        fills = {self._fill(ops) for ops in self._units.values()}
        entries = [(key, key, colour) for key, colour in self._colours.items() if colour in fills]
        if NO_DEVICE_COLOUR in fills:
            entries.append((self._no_device_text(), "", NO_DEVICE_COLOUR))
        if MIXED_COLOUR in fills:
            entries.append(("several", f"a collapsed group whose ops are on several {self.colour_by}s", MIXED_COLOUR))
        items = "".join(f'<span class="tfnb-legend-item" title="{html.escape(full)}">{_swatch(colour)}'
                        f'{html.escape(label)}</span>' for label, full, colour in entries)
        return f'<div class="tfnb-legend-devices">{self._device_kind(self.colour_by)}: {items}</div>'

    def _device_kind(self, what: str = "device") -> str:
        return f"assigned {what}" if self._source.placement else f"requested {what}"

    def _no_device_text(self) -> str:
        return "not in the plan" if self._source.placement else f"no {self.colour_by} requested"

    def _device_text(self, op: Operation) -> str:
        """An op's device as the legend names it, after a swatch of its colour."""
        device = self.device_of(op)
        return f"{_swatch(self._colour_of(device))}{html.escape(_device_key(device) or self._no_device_text())}"

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
        named = {_device_key(self.device_of(op)): self.device_of(op) for op in ops}
        devices = Counter(_device_key(self.device_of(op)) for op in ops).most_common()
        device_html = ", ".join(f"{_swatch(self._colour_of(named[d]))}"
                                f"{html.escape(d or self._no_device_text())} ×{n}" for d, n in devices)
        rows = [("ops", html.escape(str(len(ops)))), ("types", html.escape(types)), (self._device_kind(), device_html)]
        overlays = "".join(o.card(ops) for o in self._overlays.values())
        return _card(group, GROUP_KINDS[self._grouping.kind(group)], rows) + overlays

    def _op_card(self, op: Operation) -> str:
        rows = [("inputs", _tensor_list(op.inputs)), ("outputs", _tensor_list(op.outputs))]
        if op.control_inputs:
            rows.append(("control inputs", ", ".join(c.name for c in op.control_inputs)))
        rows = [(key, html.escape(value)) for key, value in rows]
        rows.append((self._device_kind(), self._device_text(op)))
        if self._source.placement:
            rows.append(("requested device", html.escape(op.device or "(none)")))
        rows.append(("created at", html.escape(op.creation_site)))
        rows += [(f"attr {k}", html.escape(_short(v))) for k, v in op.attrs.items()]
        if self._source.placement and op.assigned_device == self._source.placement.get(op):
            # the placer keeps its reasons on the op: they are this plan's only if it placed the op here
            rows += [(key, html.escape(value)) for key, value in _placement_rows(op.placement_reasons)]
        return _card(op.name, op.type, rows) + "".join(o.card([op]) for o in self._overlays.values())


def _device_key(device: str) -> str:
    """The name legends and cards give a device: 'CPU:0' whether it was written '/cpu:0' or in full."""
    return short_device(device) if device else ""


def task_key(device: str) -> str:
    """The name legends give a device's task: 'worker:1' for '/job:worker/replica:0/task:1/device:CPU:0'
    ('worker:*' when no task is named; '' when no job is)."""
    spec = DeviceSpec.from_string(device)
    if spec.job is None:
        return ""
    return f"{spec.job}:{'*' if spec.task is None else spec.task}"


def colour_key(colour_by: str, devices: Iterable[str]) -> Callable[[str], str]:
    """What a view colours `devices` by: their task (`task_key`) when `colour_by` is "task", or is "auto" and they
    span several tasks; else the device itself."""
    if colour_by not in COLOUR_BY:
        raise ValueError(f"colour_by must be one of {', '.join(COLOUR_BY)}, not {colour_by!r}")
    if colour_by == "task" or (colour_by == "auto" and len({task_key(d) for d in devices} - {""}) > 1):
        return task_key
    return _device_key


def _swatch(colour: str) -> str:
    return f'<span class="tfnb-swatch" style="background:{colour}"></span>'


def _edge_label(tensors: dict[Tensor, None], source: str, target: str) -> str:
    if source.endswith(("#in", "#out")) or target.endswith(("#in", "#out")):
        return ""  # the edge between the boxes, one level up, is labelled
    return shape_text(next(iter(tensors))) if len(tensors) == 1 else f"{len(tensors)} tensors"


def _card(title: str, kind: str, rows: list[tuple[str, str]]) -> str:
    """A card's HTML; the row values are HTML already."""
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return (f'<div class="tfnb-card-title"><b>{html.escape(title)}</b> <i>{html.escape(kind)}</i></div>'
            f"<table>{body}</table>")


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
