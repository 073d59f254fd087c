// Front end of tfnb.visualizer.GraphView: shows the SVG laid out in Python, pans (drag) and zooms (wheel) it,
// fits it to the cell, draws an overview with the visible window marked, restyles nodes from `node_styles`,
// and reports clicks, hovers and searches back through the model's traits. It pans to the node named by
// `focus` ("centre": centre it; "keep": only if it is out of sight). Python decides everything else.

const SHAPES = (selector) => `${selector} > path, ${selector} > polygon, ${selector} > ellipse`;
const MIN_HEIGHT = 160;
const MAX_SCALE = 1.5;      // px per pt: small graphs are not blown up past this
const READABLE_SCALE = 0.9; // px per pt: 10 pt labels stay at least 9 px high
const OVERVIEW_WIDTH = 180;
const MARGIN = 24;          // px kept between a followed node and the edge of the canvas

function stylesCss(styles, scope) {
  const rules = [];
  for (const [id, style] of Object.entries(styles)) {
    const selector = `${scope} [id="${CSS.escape(id)}"]`;
    const shape = ["fill", "stroke", "stroke-width"]
      .filter((key) => key in style)
      .map((key) => `${key}:${style[key]}`);
    if (shape.length) rules.push(`${SHAPES(selector)} {${shape.join(";")}}`);
    if ("opacity" in style) rules.push(`${selector} {opacity:${style.opacity}}`);
  }
  return rules.join("\n");
}

function maxHeight() {
  return Math.max(360, Math.min(900, window.innerHeight * 0.75));
}

function render({ model, el }) {
  const scope = `tfnb-graph-${Math.random().toString(36).slice(2)}`;
  el.classList.add("tfnb-graph", scope);
  el.innerHTML = `
    <div class="tfnb-toolbar">
      <input type="search" class="tfnb-search" placeholder="search names, op types, devices (Enter: next)">
      <button class="tfnb-previous" title="previous match (Shift+Enter)">▲</button>
      <button class="tfnb-next" title="next match (Enter)">▼</button>
      <span class="tfnb-matches"></span>
      <span class="tfnb-spacer"></span>
      <button class="tfnb-zoom-out" title="zoom out">−</button>
      <button class="tfnb-zoom-in" title="zoom in">+</button>
      <button class="tfnb-fit" title="fit the whole graph">fit</button>
    </div>
    <div class="tfnb-canvas">
      <div class="tfnb-drawing"></div>
      <div class="tfnb-card"></div>
      <div class="tfnb-overview"><div class="tfnb-overview-drawing"></div><div class="tfnb-window"></div></div>
    </div>
    <div class="tfnb-legend"></div>
    <style class="tfnb-styles"></style>`;
  const canvas = el.querySelector(".tfnb-canvas");
  const drawing = el.querySelector(".tfnb-drawing");
  const overview = el.querySelector(".tfnb-overview");
  const overviewDrawing = el.querySelector(".tfnb-overview-drawing");
  const windowBox = el.querySelector(".tfnb-window");
  const search = el.querySelector(".tfnb-search");
  const styleElement = el.querySelector(".tfnb-styles");
  // The visible window: drawing coordinates (pt) of the canvas's top-left corner, and px per pt.
  const view = { x: 0, y: 0, scale: 1 };
  let size = { width: 1, height: 1 };
  let anchor = null;       // a group clicked open or shut: kept where it was on screen across the new layout
  let fitted = false;      // the first layout is fitted to the cell once the cell has a width

  const set = (name, value) => { model.set(name, value); model.save_changes(); };
  const svgElement = () => drawing.querySelector("svg");
  const element = (id) => drawing.querySelector(`[id="${CSS.escape(id)}"]`);

  function showSvg() {
    drawing.innerHTML = model.get("svg");
    const svg = svgElement();
    if (!svg) return;
    const box = svg.viewBox.baseVal;
    size = { width: box.width, height: box.height };
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    overviewDrawing.innerHTML = model.get("svg");
    const small = overviewDrawing.querySelector("svg");
    small.removeAttribute("width");
    small.removeAttribute("height");
    if (!fitted) fitted = fit();
    else if (anchor) keepAnchor(anchor);
    else applyView();
    anchor = null;
    restyle();
    applyFocus();
  }

  // -- the visible window ------------------------------------------------------------------------

  function fit() {
    const width = canvas.clientWidth;
    if (!width) return false;
    const whole = Math.min(width / size.width, maxHeight() / size.height, MAX_SCALE);
    view.scale = Math.max(whole, Math.min(READABLE_SCALE, width / size.width, MAX_SCALE));
    canvas.style.height = `${Math.max(MIN_HEIGHT, Math.min(maxHeight(), size.height * view.scale))}px`;
    const spare = width / view.scale - size.width;
    view.x = spare > 0 ? -spare / 2 : 0;
    view.y = 0;
    applyView();
    return true;
  }

  function applyView() {
    const svg = svgElement();
    if (!svg) return;
    const width = canvas.clientWidth / view.scale;
    const height = canvas.clientHeight / view.scale;
    svg.setAttribute("viewBox", `${view.x} ${view.y} ${width} ${height}`);
    svg.style.width = `${canvas.clientWidth}px`;
    svg.style.height = `${canvas.clientHeight}px`;
    showOverview(width, height);
  }

  function showOverview(width, height) {
    const whole = view.x <= 0 && view.y <= 0 && view.x + width >= size.width && view.y + height >= size.height;
    overview.style.display = whole ? "none" : "block";
    if (whole) return;
    const ratio = OVERVIEW_WIDTH / Math.max(size.width, size.height * 1.2);
    overview.style.width = `${size.width * ratio}px`;
    overview.style.height = `${size.height * ratio}px`;
    windowBox.style.left = `${view.x * ratio}px`;
    windowBox.style.top = `${view.y * ratio}px`;
    windowBox.style.width = `${width * ratio}px`;
    windowBox.style.height = `${height * ratio}px`;
  }

  function zoomAt(factor, clientX, clientY) {
    const rect = canvas.getBoundingClientRect();
    const px = clientX - rect.left;
    const py = clientY - rect.top;
    const scale = Math.min(4, Math.max(0.05, view.scale * factor));
    view.x += px / view.scale - px / scale;
    view.y += py / view.scale - py / scale;
    view.scale = scale;
    applyView();
  }

  function zoomCentre(factor) {
    const rect = canvas.getBoundingClientRect();
    zoomAt(factor, rect.left + rect.width / 2, rect.top + rect.height / 2);
  }

  // Drawing coordinates of an element's bounding box, read from where the browser drew it.
  function boxOf(target) {
    const rect = target.getBoundingClientRect();
    const origin = canvas.getBoundingClientRect();
    return {
      x: view.x + (rect.left - origin.left) / view.scale,
      y: view.y + (rect.top - origin.top) / view.scale,
      width: rect.width / view.scale,
      height: rect.height / view.scale,
    };
  }

  function centreOn(box) {
    view.x = box.x + box.width / 2 - canvas.clientWidth / view.scale / 2;
    view.y = box.y + box.height / 2 - canvas.clientHeight / view.scale / 2;
    applyView();
  }

  // Pans only when the box is out of sight: to centre it, but showing no more empty canvas beyond the
  // drawing than a margin (in a direction where the drawing is smaller than the canvas, it is centred).
  function keepInView(box) {
    const margin = MARGIN / view.scale;
    const width = canvas.clientWidth / view.scale;
    const height = canvas.clientHeight / view.scale;
    const inside = box.x >= view.x + margin && box.y >= view.y + margin
      && box.x + box.width <= view.x + width - margin && box.y + box.height <= view.y + height - margin;
    if (inside) return;
    const clamp = (start, visible, whole) => (whole + 2 * margin <= visible ? (whole - visible) / 2
      : Math.min(Math.max(start, -margin), whole - visible + margin));
    view.x = clamp(box.x + box.width / 2 - width / 2, width, size.width);
    view.y = clamp(box.y + box.height / 2 - height / 2, height, size.height);
    applyView();
  }

  // After a click opened or closed a group: the group stays where it was on screen, unless that leaves part
  // of it out of sight, and then the view moves just enough to show it (its top-left corner first).
  function keepAnchor(kept) {
    const height = Math.max(MIN_HEIGHT, Math.min(maxHeight(), size.height * view.scale));
    if (height > canvas.clientHeight) canvas.style.height = `${height}px`;   // a taller drawing gets a taller canvas
    applyView();
    const target = element(kept.id);
    if (!target) return;
    const box = boxOf(target);
    const margin = MARGIN / view.scale;
    const shift = (start, length, visible, anchored) => {
      const latest = start - margin;                       // any later, and its start is out of sight
      const earliest = start + length + margin - visible;  // any earlier, and its end is out of sight
      return Math.min(latest, Math.max(earliest, anchored));
    };
    view.x = shift(box.x, box.width, canvas.clientWidth / view.scale, box.x - kept.left / view.scale);
    view.y = shift(box.y, box.height, canvas.clientHeight / view.scale, box.y - kept.top / view.scale);
    applyView();
  }

  // A focus is applied once, as soon as its node is drawn (a search may first have to expand its groups).
  let pendingFocus = model.get("focus");
  function applyFocus() {
    const target = pendingFocus && pendingFocus.id ? element(pendingFocus.id) : null;
    if (!target || !fitted) return;
    if (pendingFocus.mode === "centre") {
      view.scale = Math.max(view.scale, READABLE_SCALE);
      applyView();
      centreOn(boxOf(target));
    } else {
      keepInView(boxOf(target));
    }
    pendingFocus = null;
  }

  // -- styles ------------------------------------------------------------------------------------

  function restyle() {
    const styles = { ...model.get("node_styles") };
    const selected = model.get("selected");
    if (selected) styles[selected] = { ...styles[selected], stroke: "#1f77b4", "stroke-width": "3" };
    styleElement.textContent = stylesCss(styles, `.${scope}`);
  }

  // -- the mouse ---------------------------------------------------------------------------------

  let drag = null;
  canvas.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || event.target.closest(".tfnb-card, .tfnb-overview")) return;
    drag = { x: event.clientX, y: event.clientY, viewX: view.x, viewY: view.y, moved: false };
  });
  const pan = (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (!drag.moved) return;
    view.x = drag.viewX - dx / view.scale;
    view.y = drag.viewY - dy / view.scale;
    canvas.classList.add("tfnb-panning");
    applyView();
  };
  const endPan = () => {
    canvas.classList.remove("tfnb-panning");
    setTimeout(() => { drag = null; }, 0);   // the click that ends a drag must not select
  };
  window.addEventListener("pointermove", pan);
  window.addEventListener("pointerup", endPan);
  canvas.addEventListener("wheel", (event) => {
    if (event.target.closest(".tfnb-card")) return;
    event.preventDefault();
    zoomAt(Math.exp(-event.deltaY * 0.0015), event.clientX, event.clientY);
  }, { passive: false });

  drawing.addEventListener("click", (event) => {
    if (drag && drag.moved) return;
    const group = event.target.closest("g.node, g.cluster");
    if (!group) { set("selected", ""); return; }
    const origin = canvas.getBoundingClientRect();
    const rect = group.getBoundingClientRect();
    const expanded = model.get("expanded");
    if (group.classList.contains("cluster")) {
      anchor = { id: group.id, left: rect.left - origin.left, top: rect.top - origin.top };
      set("expanded", expanded.filter((id) => id !== group.id));
    } else if (group.classList.contains("group")) {
      anchor = { id: group.id, left: rect.left - origin.left, top: rect.top - origin.top };
      set("expanded", [...expanded, group.id]);
    } else {
      set("selected", group.id);
    }
  });
  drawing.addEventListener("mouseover", (event) => {
    // only nodes: the mouse rests on a cluster's background after most clicks, and would hide the selection's card
    const node = event.target.closest("g.node");
    const id = node ? node.id : "";
    if (id !== model.get("hovered")) set("hovered", id);
  });
  drawing.addEventListener("mouseleave", () => set("hovered", ""));

  function moveFromOverview(event) {
    const rect = overview.getBoundingClientRect();
    const ratio = rect.width / size.width;
    centreOn({ x: (event.clientX - rect.left) / ratio, y: (event.clientY - rect.top) / ratio, width: 0, height: 0 });
  }
  overview.addEventListener("pointerdown", (event) => {
    moveFromOverview(event);
    const move = (next) => moveFromOverview(next);
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", () => window.removeEventListener("pointermove", move), { once: true });
  });

  // -- search and buttons ------------------------------------------------------------------------

  const goToMatch = (step) => model.send({ next_match: step });   // GraphView.next_match
  search.addEventListener("input", () => set("query", search.value));
  search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      if (search.value !== model.get("query")) set("query", search.value);
      goToMatch(event.shiftKey ? -1 : 1);
    }
  });
  el.querySelector(".tfnb-next").addEventListener("click", () => goToMatch(1));
  el.querySelector(".tfnb-previous").addEventListener("click", () => goToMatch(-1));
  el.querySelector(".tfnb-zoom-in").addEventListener("click", () => zoomCentre(1.25));
  el.querySelector(".tfnb-zoom-out").addEventListener("click", () => zoomCentre(1 / 1.25));
  el.querySelector(".tfnb-fit").addEventListener("click", () => {
    const width = canvas.clientWidth;
    view.scale = Math.min(width / size.width, canvas.clientHeight / size.height, MAX_SCALE);
    view.x = -(width / view.scale - size.width) / 2;
    view.y = -(canvas.clientHeight / view.scale - size.height) / 2;
    applyView();
  });

  function showMatches() {
    const count = model.get("match_count");
    const index = model.get("match_index");
    const text = !model.get("query") ? "" : count === 0 ? "no match"
      : index < 0 ? `${count} match${count > 1 ? "es" : ""}` : `${index + 1} of ${count}`;
    el.querySelector(".tfnb-matches").textContent = text;
  }

  const showCard = () => { el.querySelector(".tfnb-card").innerHTML = model.get("card"); };
  const showLegend = () => { el.querySelector(".tfnb-legend").innerHTML = model.get("legend"); };
  model.on("change:svg", showSvg);
  model.on("change:node_styles", restyle);
  model.on("change:selected", restyle);
  model.on("change:card", showCard);
  model.on("change:legend", showLegend);
  model.on("change:focus", () => { pendingFocus = model.get("focus"); applyFocus(); });
  model.on("change:match_count", showMatches);
  model.on("change:match_index", showMatches);
  model.on("change:query", () => {
    if (search.value !== model.get("query")) search.value = model.get("query");
    showMatches();
  });
  search.value = model.get("query");
  // The output area has no width until JupyterLab attaches it: fit when it gets one, and again if the cell resizes.
  let lastWidth = 0;
  const resizes = new ResizeObserver(() => {
    const width = canvas.clientWidth;
    if (!width || width === lastWidth) return;
    lastWidth = width;
    if (!fitted) fitted = fit();
    else applyView();
  });
  resizes.observe(canvas);
  showSvg();
  showCard();
  showLegend();
  showMatches();
  return () => {
    resizes.disconnect();
    window.removeEventListener("pointermove", pan);
    window.removeEventListener("pointerup", endPan);
  };
}

export default { render };
