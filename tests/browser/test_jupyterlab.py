"""The widgets in a real JupyterLab, driven in headless Chromium: each point of what a user sees, with a screenshot.

- tutorial 04: the dashboard is live, never shows an empty plot, and its smoothing slider leaves the data intact;
- a CNN trained with Adam: its graph opens fitted to the cell, readable, a few boxes wide; expanding a scope
  keeps it and its neighbours in place; the mouse pans and zooms, with an overview; search works on every
  keystroke and Enter goes through the matches, centring each;
- tutorial 05: the loop replay keeps the running node in view while it plays; a scope opened in place stays in view;
- tutorial 03 in JupyterLab's dark theme: the gradient graph fits, and its labels and legend are legible.
Every request the page makes must stay on 127.0.0.1.
"""

import json
import time
from urllib.parse import urlparse

import numpy as np
import pytest

from tfnb.visualizer.dashboard import smooth

pytestmark = pytest.mark.browser

GRAPH_NODES = {"images", "labels", "hidden", "output", "cross_entropy", "evaluation"}
SELECTED = "rgb(31, 119, 180)"   # the outline of the selected node
READABLE_PX = 8.5   # the height, on screen, of a 10 pt label at the least scale the graph view opens with

# Columns of the figure titled `tag` in the page's BokehJS documents, from its longest data source (null: none).
DATA_JS = """(tag) => {
  if (!window.Bokeh) return null;
  let best = null;
  for (const doc of window.Bokeh.documents) {
    for (const root of doc.roots()) {
      if (!root.title || root.title.text !== tag) continue;
      for (const renderer of root.renderers) {
        const data = renderer.data_source.data;
        const get = (name) => Array.from(data instanceof Map ? data.get(name) : data[name]);
        const steps = get("step");
        if (!best || steps.length > best.step.length) best = { step: steps, value: get("value") };
      }
    }
  }
  return best;
}"""

# The smoothing weight in the figure titled `tag`, and its smoothed line as the browser computes it.
SMOOTHED_JS = """(tag) => {
  for (const doc of window.Bokeh.documents) {
    for (const root of doc.roots()) {
      if (!root.title || root.title.text !== tag) continue;
      for (const renderer of root.renderers) {
        const y = renderer.glyph.y;
        if (y && y.transform) {
          const data = renderer.data_source.data;
          const values = data instanceof Map ? data.get("value") : data.value;
          const args = y.transform.args;
          const weight = args instanceof Map ? args.get("weight") : args.weight;
          return { weight, line: Array.from(y.transform.v_compute(values)) };
        }
      }
    }
  }
  return null;
}"""

# Whether every code cell of the open notebook has run and its kernel is idle again.
FINISHED_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session?.kernel;
  const cells = panel.content.widgets.filter((cell) => cell.model.type === "code");
  return kernel?.status === "idle" && cells.every((cell) => cell.model.executionCount !== null);
}"""

KERNEL_IDLE_JS = """() => {
  const panel = window.jupyterapp?.shell.currentWidget;
  return panel?.sessionContext?.session?.kernel?.status === "idle";
}"""

# Runs code in the open notebook's kernel (as a cell would, without adding one) and waits for it to finish.
EXECUTE_JS = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  await kernel.requestExecute({ code }).done;
}"""

# Geometry of a graph view, in page pixels: its canvas, its drawing, and each node and group box at its top level.
GRAPH_GEOMETRY_JS = """(graph) => {
  const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const svg = graph.querySelector(".tfnb-drawing svg");
  const top = svg.querySelector(":scope > g");
  const boxes = {};
  for (const element of top.querySelectorAll(":scope > g.node, :scope > g.cluster")) boxes[element.id] = rect(element);
  const label = top.querySelector(":scope > g.node text");
  const output = graph.closest(".jp-OutputArea-output");
  return { canvas: rect(graph.querySelector(".tfnb-canvas")), drawing: rect(top), boxes, output: rect(output),
           label: label ? label.getBoundingClientRect().height : 0, viewBox: svg.getAttribute("viewBox"),
           overview: getComputedStyle(graph.querySelector(".tfnb-overview")).display,
           matches: graph.querySelector(".tfnb-matches").textContent };
}"""

# The ids of the nodes drawn with a given stroke (rgb text), and their boxes in page pixels.
STROKED_JS = """(graph, [stroke, width]) => {
  const found = {};
  for (const node of graph.querySelectorAll(".tfnb-drawing g.node")) {
    const shape = node.querySelector(":scope > path, :scope > polygon");
    const style = shape && getComputedStyle(shape);
    if (style && style.stroke === stroke && (!width || style.strokeWidth === width)) {
      const r = node.getBoundingClientRect();
      found[node.id] = [r.left, r.top, r.right, r.bottom];
    }
  }
  return found;
}"""

# Contrast ratios (WCAG) of text in a graph view against what is behind it: edge labels, group titles, the legend.
CONTRAST_JS = """(graph) => {
  const channels = (text) => text.match(/[\\d.]+/g).map(Number);
  const luminance = (rgb) => {
    const [r, g, b] = channels(rgb).slice(0, 3).map((c) => c / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const background = (element) => {
    for (let e = element; e; e = e.parentElement) {
      const colour = getComputedStyle(e).backgroundColor;
      if (colour && !colour.endsWith(", 0)") && colour !== "transparent") return colour;
    }
    return "rgb(255, 255, 255)";
  };
  const canvas = background(graph.querySelector(".tfnb-canvas"));
  const edgeLabel = graph.querySelector("g.edge text");
  const title = graph.querySelector("g.cluster > text");
  const legend = graph.querySelector(".tfnb-legend-devices");
  const boxFill = graph.querySelector("g.cluster > path.box");
  return {
    theme: document.body.dataset.jpThemeLight,
    edgeLabel: edgeLabel ? ratio(getComputedStyle(edgeLabel).fill, canvas) : null,
    groupTitle: title ? ratio(getComputedStyle(title).fill, getComputedStyle(boxFill).fill) : null,
    legend: ratio(getComputedStyle(legend).color, background(legend)),
    canvas,
  };
}"""


def write_notebook(folder, name: str, cells: list[str]) -> str:
    """Writes a notebook of code cells into the served folder; returns its name."""
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
                           "execution_count": None} for source in cells],
                "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    (folder / name).write_text(json.dumps(notebook))
    return name


def open_notebook(page, url: str, name: str, run: bool = True, timeout_ms: int = 240_000) -> None:
    """Opens a notebook in JupyterLab and, if `run`, runs all its cells and waits until they finish."""
    # a workspace of its own: JupyterLab would otherwise reopen the notebooks of earlier tests beside it
    page.goto(f"{url}/lab/workspaces/{name.removesuffix('.ipynb')}/tree/{name}?reset")
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    if run:
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")  # not awaited
        page.wait_for_function(FINISHED_JS, timeout=timeout_ms, polling=500)
        page.wait_for_timeout(800)  # the last messages re-render the widgets


def stays_local(page) -> None:
    outside = {urlparse(u).hostname for u in page.requested if urlparse(u).scheme in ("http", "https", "ws", "wss")}
    assert outside == {"127.0.0.1"}, f"requests left 127.0.0.1: {sorted(outside)}"


def inside(box, frame, slack: float = 1.5) -> bool:
    left, top, right, bottom = box
    return (left >= frame[0] - slack and top >= frame[1] - slack and right <= frame[2] + slack
            and bottom <= frame[3] + slack)


def centre(box) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


# -- tutorial 04: the live dashboard ---------------------------------------------------------------------


def test_training_tutorial_runs_live_and_its_smoothing_slider_leaves_the_data_intact(lab, page, screenshot):
    url, _ = lab
    open_notebook(page, url, "04_training_live.ipynb", run=False)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")  # not awaited
    while_running = watch_points(page, "loss", screenshot)
    page.wait_for_function(FINISHED_JS, timeout=180_000, polling=500)
    page.wait_for_timeout(1000)  # the last resync re-renders the plots
    graph_labels = set(page.locator(".tfnb-graph svg text").all_text_contents())
    outputs = page.locator(".jp-OutputArea-output").all_text_contents()
    dashboard = page.locator(".jp-OutputArea-output").filter(has=page.locator("canvas")).first
    dashboard.scroll_into_view_if_needed()
    screenshot(page, "04_training_live-done")
    before = {tag: page.evaluate(DATA_JS, tag) for tag in ("loss", "step time (ms)")}
    smoothed_before = page.evaluate(SMOOTHED_JS, "loss")

    handle = dashboard.locator(".widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 30, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    page.wait_for_function("(w) => { const s = (" + SMOOTHED_JS + ")('loss'); return s && s.weight !== w; }",
                           arg=smoothed_before["weight"], timeout=10_000)
    page.wait_for_timeout(1500)   # any stray patch or resync would have arrived by now
    after = {tag: page.evaluate(DATA_JS, tag) for tag in ("loss", "step time (ms)")}
    smoothed_after = page.evaluate(SMOOTHED_JS, "loss")
    screenshot(dashboard, "04_training_live-dashboard-after-smoothing")

    assert GRAPH_NODES <= graph_labels, f"graph view shows {sorted(graph_labels)}"
    assert any("points per scalar: 2000 2000" in text for text in outputs), outputs
    assert any("first step" in text and "compiles" in text for text in outputs)
    assert any(0 < n < 2000 for n in while_running), f"points seen while training: {while_running}"
    assert 0 not in while_running, "a plot was shown before it held any point"
    # the slider changed the drawn line only: the series keep their lengths and values
    assert len(before["loss"]["step"]) == 2000 and len(before["step time (ms)"]["step"]) == 1999
    assert after == before
    assert smoothed_after["weight"] > smoothed_before["weight"]
    np.testing.assert_allclose(smoothed_after["line"], smooth(after["loss"]["value"], smoothed_after["weight"]),
                               rtol=1e-9)
    stays_local(page)


def watch_points(page, tag: str, screenshot, timeout: float = 120) -> list[int]:
    """Points of `tag`'s figure (-1: not shown yet), sampled every 200 ms while the notebook runs, until it holds
    2000 or the notebook is done; the page is photographed the first time the plot is partly drawn."""
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = page.evaluate(DATA_JS, tag)
        points = -1 if data is None else len(data["step"])
        if 0 < points < 2000 and not any(0 < n < 2000 for n in seen):
            page.locator(".jp-OutputArea-output").filter(has=page.locator("canvas")).first.scroll_into_view_if_needed()
            screenshot(page, "04_training_live-running")
        seen.append(points)
        if points >= 2000 or page.evaluate(FINISHED_JS):
            break
        page.wait_for_timeout(200)
    return seen


# -- a CNN: large graphs, the mouse, search ---------------------------------------------------------------

CNN_CELLS = ["""import tfnb as tf
from tfnb.visualizer import GraphView

images = tf.placeholder(tf.float32, [None, 28, 28, 1], name="images")
labels = tf.placeholder(tf.int32, [None], name="labels")
h = tf.layers.max_pooling2d(tf.layers.conv2d(images, 16, 5, padding="same", activation=tf.nn.relu), 2, 2)
h = tf.layers.max_pooling2d(tf.layers.conv2d(h, 32, 5, padding="same", activation=tf.nn.relu), 2, 2)
h = tf.layers.dense(tf.layers.flatten(h), 128, activation=tf.nn.relu)
loss = tf.losses.sparse_softmax_cross_entropy(labels, tf.layers.dense(h, 10))
train = tf.train.AdamOptimizer(1e-3).minimize(loss)
init = tf.global_variables_initializer()
print(len(tf.get_default_graph().get_operations()), "ops")""", "view = GraphView(tf.get_default_graph())\nview"]


def test_a_cnn_graph_fits_the_cell_pans_zooms_and_expands_in_place(lab, page, screenshot):
    url, served = lab
    open_notebook(page, url, write_notebook(served, "cnn.ipynb", CNN_CELLS))
    graph = page.locator(".tfnb-graph").first
    graph.scroll_into_view_if_needed()
    opened = graph.evaluate(GRAPH_GEOMETRY_JS)
    screenshot(page, "cnn-graph-fits")
    ops = int(page.locator(".jp-OutputArea-output").first.text_content().split()[0])

    conv = graph.locator('.tfnb-drawing [id="conv2d/"]')
    conv.click()
    page.wait_for_selector('.tfnb-graph g.cluster[id="conv2d/"]')
    page.wait_for_timeout(300)
    expanded = graph.evaluate(GRAPH_GEOMETRY_JS)
    screenshot(page, "cnn-conv2d-expanded")

    canvas = opened["canvas"]
    page.mouse.move(*centre(canvas))
    for _ in range(4):
        page.mouse.wheel(0, -300)
    page.wait_for_timeout(200)
    zoomed = graph.evaluate(GRAPH_GEOMETRY_JS)
    page.mouse.move(*centre(canvas))
    page.mouse.down()
    page.mouse.move(centre(canvas)[0] - 150, centre(canvas)[1] - 100, steps=5)
    page.mouse.up()
    panned = graph.evaluate(GRAPH_GEOMETRY_JS)
    screenshot(graph, "cnn-zoomed-with-overview")
    graph.locator(".tfnb-fit").click()
    fitted = graph.evaluate(GRAPH_GEOMETRY_JS)

    assert ops > 240
    # opens fitted to the cell: as wide as the output area, all of it inside the canvas, readable, few boxes wide
    assert canvas[2] - canvas[0] >= 0.95 * (opened["output"][2] - opened["output"][0])
    assert inside(opened["drawing"], canvas), opened
    assert opened["label"] >= READABLE_PX, opened["label"]
    assert len(opened["boxes"]) <= 16
    assert widest_row(opened["boxes"]) <= 30
    assert opened["overview"] == "none"            # nothing is out of sight, so no overview
    # the expanded scope stays where its node was, and its neighbours keep their order
    before, after = opened["boxes"], expanded["boxes"]
    assert abs(after["conv2d/"][0] - before["conv2d/"][0]) < 3 and abs(after["conv2d/"][1] - before["conv2d/"][1]) < 3
    others = [node for node in before if node != "conv2d/"]
    assert set(others) <= set(after)
    for a in others:
        for b in others:
            if centre(before[a])[1] < centre(before[b])[1] - 5:
                assert centre(after[a])[1] < centre(after[b])[1], (a, b)
    # the wheel zooms in around the pointer, a drag pans, the overview marks the window; fit shows it all again
    zoom_before, zoom_after = (float(v.split()[2]) for v in (opened["viewBox"], zoomed["viewBox"]))
    assert zoom_after < zoom_before / 2 and zoomed["overview"] == "block"
    assert panned["viewBox"].split()[:2] != zoomed["viewBox"].split()[:2]
    assert inside(fitted["drawing"], fitted["canvas"]) and fitted["overview"] == "none"
    stays_local(page)


def widest_row(boxes: dict) -> int:
    """The most boxes that one horizontal line through the drawing meets."""
    return max(sum(top <= y <= bottom for _, top, _, bottom in boxes.values())
               for _, top, _, bottom in boxes.values() for y in (top + 1, bottom - 1))


def test_search_highlights_on_every_keystroke_and_enter_centres_each_match(lab, page, screenshot):
    url, served = lab
    open_notebook(page, url, write_notebook(served, "cnn_search.ipynb", CNN_CELLS))
    graph = page.locator(".tfnb-graph").first
    graph.scroll_into_view_if_needed()
    search = graph.locator(".tfnb-search")
    search.click()
    page.keyboard.type("Conv2DBackprop", delay=40)        # op types; no Enter, no blur
    page.wait_for_function("(g) => g.querySelector('.tfnb-matches').textContent.endsWith('matches')",
                           arg=graph.element_handle(), timeout=10_000)
    typed = graph.evaluate(GRAPH_GEOMETRY_JS)
    hits = graph.evaluate(STROKED_JS, ["rgb(230, 25, 75)", ""])
    screenshot(graph, "cnn-search-typed")
    visits = []
    for key, expected in (("Enter", "1 of"), ("Enter", "2 of"), ("Shift+Enter", "1 of")):
        page.keyboard.press(key)
        page.wait_for_function("([g, n]) => g.querySelector('.tfnb-matches').textContent.startsWith(n)",
                               arg=[graph.element_handle(), expected], timeout=10_000)
        page.wait_for_timeout(400)
        geometry = graph.evaluate(GRAPH_GEOMETRY_JS)
        current = graph.evaluate(STROKED_JS, [SELECTED, "3px"])    # the current match is selected
        visits.append((geometry, current))
        if len(visits) == 1:
            screenshot(graph, "cnn-search-enter")

    assert typed["matches"] == "4 matches"                 # input and filter gradients of both convolutions
    assert hits, "hits are outlined while typing"
    assert [geometry["matches"] for geometry, _ in visits] == ["1 of 4", "2 of 4", "1 of 4"]
    for geometry, current in visits:
        (box,) = current.values()                          # one current match, drawn as its own node
        x, y = centre(box)
        cx, cy = centre(geometry["canvas"])
        assert abs(x - cx) < 40 and abs(y - cy) < 40, (box, geometry["canvas"])
    assert list(visits[0][1]) == list(visits[2][1]) != list(visits[1][1])
    stays_local(page)


# -- tutorial 05: a loop's replay follows its running node -------------------------------------------------


def test_the_loop_replay_keeps_the_running_node_in_view(lab, page, screenshot):
    url, _ = lab
    open_notebook(page, url, "05_control_flow_and_queues.ipynb")
    replays = page.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-play"))
    loop = replays.nth(1)
    loop.scroll_into_view_if_needed()
    graph = loop.locator(".tfnb-graph")
    slider_width = loop.locator(".widget-slider").first.bounding_box()["width"]
    iteration_sliders = loop.locator(".widget-slider").filter(has_text="collatz iteration").count()
    seen = []
    for step in range(0, 282, 12):
        page.evaluate(EXECUTE_JS, f"loop_replay.step = {step}")
        page.wait_for_timeout(250)
        running = graph.evaluate(STROKED_JS, ["rgb(214, 39, 40)", "3px"])
        seen.append((step, running, graph.evaluate(GRAPH_GEOMETRY_JS)["canvas"]))
        if step == 96:
            screenshot(loop, "05_loop_replay-step-96")
    page.evaluate(EXECUTE_JS, "loop_replay.speed.value = 20; loop_replay.step = 150")
    loop.locator(".widget-play button").first.click()      # Play: the browser advances the step by itself
    playing = []
    for _ in range(12):
        page.wait_for_timeout(250)
        running = graph.evaluate(STROKED_JS, ["rgb(214, 39, 40)", "3px"])
        playing.append((running, graph.evaluate(GRAPH_GEOMETRY_JS)["canvas"]))
    screenshot(loop, "05_loop_replay-playing")
    queue_graph = page.locator(".tfnb-graph").last           # the queue's graph, with the consumer closed
    queue_graph.scroll_into_view_if_needed()
    queue_graph.locator('.tfnb-drawing g.node[id="consumer/"]').click()
    page.wait_for_selector('.tfnb-graph g.cluster[id="consumer/"]')
    page.wait_for_timeout(300)
    consumer = queue_graph.evaluate(GRAPH_GEOMETRY_JS)
    screenshot(queue_graph, "05_queue_graph-consumer-expanded")

    assert slider_width >= 500 and iteration_sliders == 1
    for step, running, canvas in seen:
        assert running, f"no running node drawn at step {step}"
        assert all(inside(box, canvas) for box in running.values()), (step, running, canvas)
    assert len({tuple(running) for running, _ in playing}) > 3, "Play advanced through the run"
    for running, canvas in playing:
        assert all(inside(box, canvas) for box in running.values()), (running, canvas)
    box, canvas = consumer["boxes"]["consumer/"], consumer["canvas"]
    assert box[0] >= canvas[0] and box[1] >= canvas[1] and box[2] <= canvas[2], consumer  # not cut off at the right
    stays_local(page)


# -- tutorial 03 in the dark theme ------------------------------------------------------------------------


def test_the_dark_theme_keeps_labels_and_legends_legible(lab, page, screenshot):
    url, _ = lab
    open_notebook(page, url, "03_variables_and_gradients.ipynb", run=False)
    page.evaluate("async () => { await window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{ theme: 'JupyterLab Dark' }); }")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=20_000)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(FINISHED_JS, timeout=120_000, polling=500)
    page.wait_for_timeout(800)
    graphs = page.locator(".tfnb-graph")
    gradient_graph = graphs.nth(graphs.count() - 1)
    gradient_graph.scroll_into_view_if_needed()
    contrast = gradient_graph.evaluate(CONTRAST_JS)
    geometry = gradient_graph.evaluate(GRAPH_GEOMETRY_JS)
    screenshot(page, "03_dark_theme-gradient-graph")
    page.evaluate("async () => { await window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{ theme: 'JupyterLab Light' }); }")

    assert contrast["theme"] == "false"
    assert contrast["edgeLabel"] >= 4.5 and contrast["groupTitle"] >= 4.5 and contrast["legend"] >= 4.5, contrast
    assert inside(geometry["drawing"], geometry["canvas"]) and geometry["label"] >= READABLE_PX, geometry
    stays_local(page)
