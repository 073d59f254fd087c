"""A graph view's drawing, laid out one group at a time and nested, as TensorBoard lays out its meta-nodes.

Each expanded group (and the whole graph) is its own small dot layout: its visible nodes, a box of
fixed size for each expanded group inside it, and the edges between them. Edges that leave or enter
the group run to an invisible bridge node at the bottom or top of its box, and continue, one level
up, on the edge between boxes. The inner drawings are then put into their boxes.

Laying out each level alone makes a large graph cheap (every layout is small, and the layouts of
groups that did not change come from dot's cache) and keeps the drawing stable: expanding a group
only makes its box larger, so the level around it keeps its ranks and its left-to-right order
(dot's ranking and crossing minimisation see the graph, not the sizes), and its neighbours only move
aside to make room.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from .dot import DotEdge, DotNode, build_dot, layout_svg

SVG_NS = "http://www.w3.org/2000/svg"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
PAD_PT = 8.0        # between a group's box and its drawing
HEADER_PT = 16.0    # room for the group's label above its drawing
CORNER_PT = 6.0
POINTS_PER_INCH = 72.0
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _tag(name: str) -> str:
    return f"{{{SVG_NS}}}{name}"


@dataclass
class Level:
    """One expanded group as it is laid out: the nodes directly inside it, in the order dot gets them (an
    expanded child group among them, as a node with its id, drawn as a box holding its own level), and the
    edges between them, to `bridge_in(id)` from outside, and from them to `bridge_out(id)`."""

    id: str
    nodes: list[DotNode] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    edges: list[DotEdge] = field(default_factory=list)
    label: str = ""
    css_class: str = ""
    fill: str = "#f4f4f4"
    stroke: str = "#aaaaaa"


def bridge_in(level_id: str) -> str:
    """The id of the invisible node where edges from outside a group enter its drawing."""
    return f"{level_id}#in"


def bridge_out(level_id: str) -> str:
    """The id of the invisible node where edges leaving a group end in its drawing."""
    return f"{level_id}#out"


@dataclass
class Drawing:
    """A laid-out level: its SVG content (dot's graph group) and its size in points."""

    content: ET.Element
    width: float
    height: float


class NestedLayout:
    """Lays out `levels` ('' is the whole graph) and nests them; `svg` is the result, `dots` each level's DOT."""

    def __init__(self, levels: dict[str, Level], rankdir: str = "TB") -> None:
        self.levels, self.rankdir = levels, rankdir
        self.dots: dict[str, str] = {}
        self.boxes: dict[str, tuple[float, float, float, float]] = {}
        root = self._draw("")
        svg = ET.Element(_tag("svg"), {"width": f"{root.width:.0f}pt", "height": f"{root.height:.0f}pt",
                                       "viewBox": f"0 0 {root.width:.2f} {root.height:.2f}"})
        svg.append(root.content)
        self.svg = ET.tostring(svg, encoding="unicode")

    def _draw(self, level_id: str) -> Drawing:
        level = self.levels[level_id]
        inner = {group: self._draw(group) for group in level.groups}
        nodes = [DotNode(node.id, "", _box_attrs(inner[node.id])) if node.id in inner else node for node in level.nodes]
        bridges = {bridge_in(level_id), bridge_out(level_id)} if level_id else set()
        used = {end for edge in level.edges for end in (edge.source, edge.target)}
        dot = build_dot(nodes, level.edges, self.rankdir,
                        source=bridge_in(level_id) if bridge_in(level_id) in used & bridges else None,
                        sink=bridge_out(level_id) if bridge_out(level_id) in used & bridges else None)
        self.dots[level_id] = dot
        svg = ET.fromstring(layout_svg(dot))
        content = svg.find(_tag("g"))
        _drop_generated_ids(content)
        for index, element in enumerate(list(content)):
            if element.tag == _tag("g") and element.get("id") in inner:
                content.remove(element)
                content.insert(index, self._group_box(self.levels[element.get("id")], element, inner))
        _, _, width, height = (float(v) for v in svg.get("viewBox").split())
        return Drawing(content, width, height)

    def _group_box(self, level: Level, placeholder: ET.Element, inner: dict[str, Drawing]) -> ET.Element:
        """The box of an expanded group, where dot placed its placeholder, with the group's drawing inside."""
        left, top, right, bottom = _bounds(placeholder.find(_tag("polygon")).get("points"))
        self.boxes[level.id] = (left, top, right, bottom)
        box = ET.Element(_tag("g"), {"id": level.id, "class": f"cluster {level.css_class}".strip()})
        ET.SubElement(box, _tag("title")).text = level.id
        ET.SubElement(box, _tag("path"), {"class": "box", "fill": level.fill, "stroke": level.stroke,
                                          "d": _rounded_rect(left, top, right, bottom)})
        label = ET.SubElement(box, _tag("text"), {"class": "label", "x": f"{left + 6:.2f}", "y": f"{top + 12:.2f}",
                                                  "font-family": "Helvetica,sans-Serif", "font-size": "10.00"})
        label.text = level.label
        drawing = inner[level.id]
        placed = ET.SubElement(box, _tag("g"), {"transform": f"translate({left + PAD_PT:.2f} {top + HEADER_PT:.2f})"})
        placed.append(drawing.content)
        return box


def _box_attrs(drawing: Drawing) -> dict[str, str]:
    width = drawing.width + 2 * PAD_PT
    height = drawing.height + HEADER_PT + PAD_PT
    return {"shape": "box", "fixedsize": "true", "style": "solid", "width": f"{width / POINTS_PER_INCH:.4f}",
            "height": f"{height / POINTS_PER_INCH:.4f}", "class": "placeholder"}


def _bounds(points: str) -> tuple[float, float, float, float]:
    numbers = [float(n) for n in _NUMBER.findall(points)]
    xs, ys = numbers[0::2], numbers[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _rounded_rect(left: float, top: float, right: float, bottom: float) -> str:
    r = CORNER_PT
    return (f"M{left + r:.2f},{top:.2f} H{right - r:.2f} Q{right:.2f},{top:.2f} {right:.2f},{top + r:.2f} "
            f"V{bottom - r:.2f} Q{right:.2f},{bottom:.2f} {right - r:.2f},{bottom:.2f} H{left + r:.2f} "
            f"Q{left:.2f},{bottom:.2f} {left:.2f},{bottom - r:.2f} V{top + r:.2f} Q{left:.2f},{top:.2f} "
            f"{left + r:.2f},{top:.2f} Z")


def _drop_generated_ids(content: ET.Element) -> None:
    # dot numbers its graph and edges from 1 in every layout: nested, those ids would repeat
    content.attrib.pop("id", None)
    for element in content:
        if element.get("class", "").startswith("edge"):
            element.attrib.pop("id", None)
