"""Dashboard: a training loop's summaries, live in the notebook, as TensorBoard shows them.

Scalars are drawn raw (faint) and smoothed by TensorBoard's debiased exponential moving average.
The smoothing is a transform of the drawn line, computed in the browser (`SMOOTHING_JS`, the same
arithmetic as `smooth`): moving the slider changes one number in each figure and never the data.
Histograms are shown twice, as TensorBoard's two tabs show them: distributions over steps (bands
at the percentiles TensorBoard draws: min, ±1σ, ±2σ, ±3σ equivalents and the median) and
histograms over steps (one curve per sampled step, offset by its step). Step times come from the
loop itself; the first step, which compiles the session's plan, is reported apart from the curve.
Runs (`run=` on every method) are drawn in one figure per tag, one colour each. Figures are Bokeh
plots in `jupyter_bokeh` widgets, with BokehJS published inline into the page (no CDN).

Histograms are decoded for a sample of the steps: every step at first, then every 2nd, 4th, ...
step, the interval doubling after each SAMPLES_PER_DOUBLING samples, so a run of any length has
a sample at least every 1% of its steps (or every `histogram_every` steps, if given).

New points reach the browser as Bokeh stream patches once a second. A figure appears only once it
holds its first points, so it never shows empty. A view that is not rendered yet misses patches,
and patches never reach the widget's stored state, so every plot is also re-sent whole (`resync`):
at first every `resync_secs`, then as often as keeps resyncs under RESYNC_SHARE of the loop's time,
and when the loop ends. A training loop pays only for parsing summaries and appending points.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Iterable, Iterator
from typing import Self

import ipywidgets as widgets
import numpy as np
from bokeh.models import ColumnDataSource, CustomJSTransform
from bokeh.plotting import figure
from bokeh.resources import Resources
from bokeh.transform import transform
from jupyter_bokeh import BokehModel

from tfnb.framework.summary_proto import Histogram, SummaryValue, parse_summary

from .progress import ProgressBar

__all__ = ["Dashboard", "flush_after_each_cell", "load_bokehjs", "smooth"]

# TensorBoard's distribution bands, in basis points: the normal distribution's -inf, -3σ ... +3σ, +inf.
BASIS_POINTS = (0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000)
STEP_TIME = "step time (ms)"
RESYNC_SHARE = 0.005  # after the first few, whole-plot resyncs may use at most this share of the loop's time
EARLY_RESYNCS = 3  # views render in the first seconds after display: resync every resync_secs until then
SAMPLES_PER_DOUBLING = 100
HISTOGRAM_BINS = 30
RIDGE_EVERY = 10  # every 10th sampled histogram is drawn in the histograms-over-steps view
RIDGE_HEIGHT = 2.5  # a curve's peak, in gaps between drawn steps
# One colour per run, in the order runs appear (TensorBoard's first run colour is orange too).
RUN_COLOURS = ("#e64a19", "#0077bb", "#009988", "#ee3377", "#33bbee", "#cc3311", "#555555", "#997700")
DEFAULT_RUN = ""
_bokehjs_published = False
_live: weakref.WeakSet = weakref.WeakSet()

SMOOTHING_JS = """
// TensorBoard's debiased exponential moving average, as `smooth` in tfnb/visualizer/dashboard.py
const out = new Float64Array(xs.length);
let average = 0, count = 0;
for (let i = 0; i < xs.length; i++) {
  const value = xs[i];
  if (!Number.isFinite(value)) { out[i] = value; continue; }
  average = average * weight + (1 - weight) * value;
  count += 1;
  out[i] = weight < 1 ? average / (1 - Math.pow(weight, count)) : average;
}
return out;
"""


def load_bokehjs() -> None:
    """Publishes BokehJS, inline, into the notebook page once per kernel; jupyter_bokeh's views need it."""
    global _bokehjs_published
    if not _bokehjs_published:
        from bokeh.io.notebook import load_notebook
        load_notebook(Resources(mode="inline", components=["bokeh"]), hide_banner=True)
        _bokehjs_published = True


def smooth(values: Iterable[float], weight: float) -> list[float]:
    """`values` smoothed as TensorBoard's smoothing slider does at `weight` (0: none, 0.999: most)."""
    average, count, out = 0.0, 0, []
    for value in map(float, values):
        if math.isfinite(value):
            average = average * weight + (1 - weight) * value
            count += 1
            value = average / (1 - weight ** count if weight < 1 else 1)
        out.append(value)
    return out


class _Plot:
    """One Bokeh figure, one data source per run, fed rows that wait in `pending` until `push` streams them.

    Its widget is made at its first push, with the first rows already in the figure.
    """

    columns: tuple[str, ...] = ("step",)
    ragged: tuple[str, ...] = ()  # columns holding a list per row

    def __init__(self, title: str, y_label: str, y_axis_type: str = "linear", x_label: str = "step") -> None:
        self.figure = figure(title=title, height=240, width=360, x_axis_label=x_label, y_axis_label=y_label,
                             y_axis_type=y_axis_type, tools="pan,wheel_zoom,box_zoom,reset,save",
                             toolbar_location="above")
        self.figure.toolbar.logo = None
        self.sources: dict[str, ColumnDataSource] = {}
        self.pending: dict[str, dict[str, list]] = {}
        self.widget: BokehModel | None = None

    def source(self, run: str) -> ColumnDataSource:
        """The run's data source, with its glyphs drawn the first time the run appears."""
        if run not in self.sources:
            # NumPy columns travel as binary buffers; Bokeh would encode a list element by element.
            self.sources[run] = ColumnDataSource({column: [] if column in self.ragged else np.zeros(0)
                                                  for column in self.columns})
            self.pending[run] = {column: [] for column in self.columns}
            self.draw(run, self.sources[run], RUN_COLOURS[(len(self.sources) - 1) % len(RUN_COLOURS)])
        return self.sources[run]

    def draw(self, run: str, source: ColumnDataSource, colour: str) -> None:
        """Adds the glyphs of one run."""

    def points(self, run: str = DEFAULT_RUN) -> int:
        """Rows pushed to the figure so far for `run`."""
        return len(self.sources[run].data["step"]) if run in self.sources else 0

    def push(self) -> bool:
        """Streams the pending rows into the figure's data (a patch message to rendered views); True if any."""
        pushed = False
        for run, pending in self.pending.items():
            if pending["step"]:
                self.sources[run].stream({column: values if column in self.ragged else np.array(values, np.float64)
                                          for column, values in pending.items()})
                self.pending[run] = {column: [] for column in self.columns}
                pushed = True
        if pushed and self.widget is None:
            self.widget = BokehModel(self.figure)
        return pushed

    def resync(self) -> None:
        """Re-sends the whole figure to the widget, so every view and the stored state hold all points."""
        if self.widget is not None:
            self.widget.update_from_model(self.figure)

    def _legend(self, run: str) -> dict:
        return {"legend_label": run} if run else {}


class _ScalarPlot(_Plot):
    columns = ("step", "value")

    def __init__(self, tag: str, weight: float, y_axis_type: str = "linear") -> None:
        super().__init__(tag, tag, y_axis_type)
        self.smoothing = CustomJSTransform(args={"weight": weight}, v_func=SMOOTHING_JS)

    def draw(self, run: str, source: ColumnDataSource, colour: str) -> None:
        self.figure.line("step", "value", source=source, color=colour, alpha=0.3, line_width=1)
        self.figure.line("step", transform("value", self.smoothing), source=source, color=colour, line_width=2,
                         **self._legend(run))

    def add(self, run: str, step: int, value: float) -> None:
        self.source(run)
        self.pending[run]["step"].append(step)
        self.pending[run]["value"].append(value)

    def set_weight(self, weight: float) -> None:
        """Smooths the drawn line at a new weight: one property of the figure's transform, the data untouched."""
        self.smoothing.args = {"weight": weight}


class _DistributionPlot(_Plot):
    columns = ("step",) + tuple(f"p{bp}" for bp in BASIS_POINTS)

    def __init__(self, tag: str) -> None:
        super().__init__(f"{tag} (distribution)", "value")

    def draw(self, run: str, source: ColumnDataSource, colour: str) -> None:
        bands = self.columns[1:]
        outer = len(bands) - 1
        for i in range(len(bands) // 2):
            self.figure.varea("step", bands[i], bands[outer - i], source=source, fill_color=colour,
                              fill_alpha=0.12 + 0.1 * i)
        self.figure.line("step", bands[len(bands) // 2], source=source, color=colour)

    def add(self, run: str, step: int, histogram: Histogram) -> None:
        self.source(run)
        self.pending[run]["step"].append(step)
        fractions = np.array(BASIS_POINTS) / 10000
        for band, value in zip(self.columns[1:], histogram.percentiles(fractions).tolist()):
            self.pending[run][band].append(value)


class _HistogramPlot(_Plot):
    """TensorBoard's histograms in offset mode: one curve per drawn step, later steps lower and in front."""

    columns = ("step", "xs", "ys")
    ragged = ("xs", "ys")

    def __init__(self, tag: str) -> None:
        super().__init__(f"{tag} (histograms)", "step", x_label="value")
        self.figure.y_range.flipped = True
        self._last_step: dict[str, int] = {}

    def draw(self, run: str, source: ColumnDataSource, colour: str) -> None:
        self.figure.patches("xs", "ys", source=source, fill_color=colour, fill_alpha=0.08, line_color=colour,
                            line_width=1, line_alpha=0.8)

    def add(self, run: str, step: int, histogram: Histogram) -> None:
        gap = step - self._last_step.get(run, step - 1)
        self._last_step[run] = step
        centres, density = rebinned(histogram)
        if not len(centres):
            return
        height = RIDGE_HEIGHT * max(gap, 1) * density / max(density.max(), 1e-300)
        self.source(run)
        self.pending[run]["step"].append(step)
        half = (centres[1] - centres[0]) / 2 if len(centres) > 1 else 0.0
        self.pending[run]["xs"].append([centres[0] - half, *centres.tolist(), centres[-1] + half])
        self.pending[run]["ys"].append([step, *(step - height).tolist(), step])


def rebinned(histogram: Histogram, bins: int = HISTOGRAM_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(bin centres, counts per unit of value) of a histogram spread evenly over `bins` bins from its min to
    its max, as TensorBoard redraws TF's exponential buckets."""
    if histogram.num <= 0:
        return np.zeros(0), np.zeros(0)
    low, high = histogram.min, histogram.max
    if high <= low:
        return np.array([low]), np.array([histogram.num])
    edges = np.linspace(low, high, bins + 1)
    lower = np.clip(np.concatenate([[low], histogram.bucket_limit[:-1]]), low, high)
    upper = np.clip(histogram.bucket_limit, low, high)
    cumulative = np.concatenate([[0.0], np.cumsum(histogram.bucket)])
    counts_below = np.interp(edges, np.concatenate([[lower[0]], upper]), cumulative)
    return (edges[:-1] + edges[1:]) / 2, np.diff(counts_below) / np.diff(edges)


class _Sampler:
    """Which steps' histograms a tag keeps: every `every` steps, or, when `every` is None, every step at first
    and then every 2nd, 4th, ... step, the interval doubling after each SAMPLES_PER_DOUBLING samples."""

    def __init__(self, every: int | None) -> None:
        self.every, self.interval = every, every or 1
        self.next_step: int | None = None
        self.taken = 0

    def wants(self, step: int) -> bool:
        """Whether to keep the histogram of `step` (and if so, counts it)."""
        if self.next_step is not None and step < self.next_step:
            return False
        self.taken += 1
        if self.every is None and self.taken % SAMPLES_PER_DOUBLING == 0:
            self.interval *= 2
        self.next_step = step + self.interval
        return True


class Dashboard(widgets.VBox):
    """A live TensorBoard-like panel: scalars with a smoothing slider, distributions, histograms, step times.

    `dash.add_summary(sess.run(merged), step)` plots what summary ops produce (the Dashboard takes
    FileWriter's `add_summary` arguments, and `dash.attach(writer)` feeds both); `dash.add_scalars`
    plots plain numbers; `for batch in dash.progress(batches)` shows a progress bar and step times.
    Give `run="adam"` to any of them to compare runs in one dashboard. Plots update while the loop runs
    in the same cell. tfnb differs from TensorBoard: nothing is read from files; the panel shows what
    this process adds.
    """

    def __init__(self, smoothing: float = 0.6, refresh_secs: float = 1.0, resync_secs: float = 0.5,
                 histogram_every: int | None = None) -> None:
        self._slider = widgets.FloatSlider(value=smoothing, min=0.0, max=0.999, step=0.001, readout_format=".3f",
                                           description="Smoothing")
        self._slider.observe(self._resmooth, "value")
        self._bar = ProgressBar()
        self._first_step = widgets.HTML("")
        self._boxes = {kind: widgets.Box(layout=widgets.Layout(flex_flow="row wrap"))
                       for kind in ("scalars", "distributions", "histograms")}
        super().__init__([widgets.HBox([self._bar, self._slider]), self._first_step, *self._boxes.values()])
        self.refresh_secs, self.resync_secs = refresh_secs, resync_secs
        self.histogram_every = histogram_every
        self._plots: dict[str, _Plot] = {}
        self._samplers: dict[tuple[str, str], _Sampler] = {}
        self.first_step_ms: dict[str, float] = {}
        self._own_seconds = 0.0  # spent in add_summary and add_scalars: not the training loop's time
        self._next_push = self._next_resync = 0.0
        self._resyncs = 0
        self._dirty = False
        self._in_progress = False
        self._last_step: dict[str, tuple[int, float]] = {}
        flush_after_each_cell(self)

    # -- feeding ----------------------------------------------------------------------------------

    def add_summary(self, summary, global_step: int | None = None, run: str = DEFAULT_RUN) -> None:
        """Plots the values of a serialized Summary (what `sess.run` of a summary op returns) at `global_step`."""
        entered = time.perf_counter()
        step = int(global_step or 0)
        for value in parse_summary(bytes(summary)):
            if value.kind == "scalar":
                self._scalar(value.tag).add(run, step, value.value)
            elif value.kind == "histogram":
                self._add_histogram(value, run, step)
        self._added(step, run, entered)

    def add_scalars(self, values: dict, step: int, run: str = DEFAULT_RUN) -> None:
        """Plots plain numbers, e.g. `{"loss": 0.3, "accuracy": 0.9}`, at `step`."""
        entered = time.perf_counter()
        for tag, value in values.items():
            self._scalar(tag).add(run, int(step), float(value))
        self._added(int(step), run, entered)

    def attach(self, writer, run: str = DEFAULT_RUN) -> _Tee:
        """A stand-in for `writer` (a FileWriter) whose `add_summary` also plots here."""
        return _Tee(writer, self, run)

    def progress(self, iterable: Iterable, total: int | None = None, run: str = DEFAULT_RUN) -> Iterator:
        """Yields from `iterable` with a progress bar, plotting each iteration's time as the step time (on a log
        scale); the first step's time (it compiles the session's plan) is reported above the plots instead.
        The dashboard's own work (plotting what the step added) is not counted in the step's time."""
        self._in_progress = True
        started, own = time.perf_counter(), self._own_seconds
        try:
            for index, item in enumerate(self._bar.wrap(iterable, total)):
                yield item
                now = time.perf_counter()
                milliseconds = (now - started - (self._own_seconds - own)) * 1e3
                if index == 0:
                    self._note_first_step(run, milliseconds)
                else:
                    self._scalar(STEP_TIME).add(run, index, milliseconds)
                self._dirty = True
                self._maybe_refresh(now)
                started, own = time.perf_counter(), self._own_seconds
        finally:
            self._in_progress = False
            self.flush()

    # -- what it holds ----------------------------------------------------------------------------

    def flush(self) -> None:
        """Sends every point to the browser and re-sends each plot whole (call when a loop ends)."""
        self._push()
        for plot in self._plots.values():
            plot.resync()
        self._dirty = False

    def points(self, tag: str, run: str = DEFAULT_RUN) -> int:
        """How many points the plot of `tag` holds for `run` in its figure (pending points not counted)."""
        return self._plots[tag].points(run)

    def data(self, tag: str, run: str = DEFAULT_RUN) -> dict[str, np.ndarray]:
        """The columns of `tag`'s plot for `run`, as sent to the browser (a copy)."""
        return {column: np.array(values) for column, values in self._plots[tag].sources[run].data.items()}

    def smoothed(self, tag: str, run: str = DEFAULT_RUN) -> list[float]:
        """The smoothed line of a scalar, as the browser draws it at the slider's weight."""
        return smooth(self._plots[tag].sources[run].data["value"], self._slider.value)

    @property
    def tags(self) -> list[str]:
        """The tags plotted, in the order they first appeared ('histograms/x' for a histogram's second view)."""
        return list(self._plots)

    @property
    def runs(self) -> list[str]:
        """The runs plotted, in the order they first appeared."""
        return list(dict.fromkeys(run for plot in self._plots.values() for run in plot.sources))

    def display(self) -> None:
        """Shows the dashboard in the notebook (loading BokehJS into the page first)."""
        from IPython.display import display
        display(self)

    def _repr_mimebundle_(self, **kwargs):
        load_bokehjs()
        return super()._repr_mimebundle_(**kwargs)

    # -- plots ------------------------------------------------------------------------------------

    def _scalar(self, tag: str) -> _ScalarPlot:
        if tag not in self._plots:
            # a few slow steps (a garbage collection, the browser's first messages) would flatten a linear scale
            self._plots[tag] = _ScalarPlot(tag, self._slider.value, "log" if tag == STEP_TIME else "linear")
        return self._plots[tag]

    def _add_histogram(self, value: SummaryValue, run: str, step: int) -> None:
        sampler = self._samplers.setdefault((value.tag, run), _Sampler(self.histogram_every))
        if not sampler.wants(step):
            return
        histogram = value.value
        if value.tag not in self._plots:
            self._plots[value.tag] = _DistributionPlot(value.tag)
            self._plots[f"histograms/{value.tag}"] = _HistogramPlot(value.tag)
        self._plots[value.tag].add(run, step, histogram)
        if (sampler.taken - 1) % RIDGE_EVERY == 0:
            self._plots[f"histograms/{value.tag}"].add(run, step, histogram)

    def _box_of(self, plot: _Plot) -> widgets.Box:
        if isinstance(plot, _ScalarPlot):
            return self._boxes["scalars"]
        return self._boxes["histograms" if isinstance(plot, _HistogramPlot) else "distributions"]

    def _push(self) -> None:
        for plot in self._plots.values():
            shown = plot.widget is not None
            if plot.push() and not shown:
                box = self._box_of(plot)
                box.children = (*box.children, plot.widget)
                self._resyncs, self._next_resync = 0, 0.0

    # -- timing -----------------------------------------------------------------------------------

    def _added(self, step: int, run: str, entered: float) -> None:
        now = time.perf_counter()
        if not self._in_progress:
            self._note_step_time(step, run, now)
        self._dirty = True
        self._maybe_refresh(now)
        self._own_seconds += time.perf_counter() - entered

    def _note_step_time(self, step: int, run: str, now: float) -> None:
        last = self._last_step.get(run)
        if last is not None and step > last[0]:
            self._scalar(STEP_TIME).add(run, step, (now - last[1]) * 1e3 / (step - last[0]))
        if last is None or step != last[0]:
            self._last_step[run] = (step, now)

    def _note_first_step(self, run: str, milliseconds: float) -> None:
        self.first_step_ms[run] = milliseconds
        runs = "; ".join(f"{name + ': ' if name else ''}{ms:.0f} ms" for name, ms in self.first_step_ms.items())
        self._first_step.value = (f"<small>first step {runs} (it compiles the session's plan: "
                                  f"not drawn in {STEP_TIME})</small>")

    def _maybe_refresh(self, now: float) -> None:
        if now >= self._next_push:
            self._push()
            self._next_push = now + self.refresh_secs
        if not self._next_resync:
            self._next_resync = now + self.resync_secs  # a view renders a moment after it is shown
        elif now >= self._next_resync:
            started = time.perf_counter()
            for plot in self._plots.values():
                plot.resync()
            self._resyncs += 1
            spacing = (time.perf_counter() - started) / RESYNC_SHARE if self._resyncs >= EARLY_RESYNCS else 0.0
            self._next_resync = now + max(self.resync_secs, spacing)

    def _resmooth(self, change: dict) -> None:
        for plot in self._plots.values():
            if isinstance(plot, _ScalarPlot):
                plot.set_weight(change["new"])


class _Tee:
    """A FileWriter stand-in that also sends every summary to a Dashboard; everything else goes to the writer."""

    def __init__(self, writer, dashboard: Dashboard, run: str) -> None:
        self.writer, self.dashboard, self.run = writer, dashboard, run

    def add_summary(self, summary, global_step: int | None = None) -> None:
        """Writes the summary and plots it."""
        self.writer.add_summary(summary, global_step)
        self.dashboard.add_summary(summary, global_step, self.run)

    def close(self) -> None:
        """Closes the writer and sends the dashboard's last points."""
        self.writer.close()
        self.dashboard.flush()

    def __getattr__(self, name: str):
        return getattr(self.writer, name)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


_hook_registered = False


def flush_after_each_cell(view) -> None:
    """Has `view` (a live view with `_dirty` and `flush()`) flushed when a cell ends while it holds unsent points."""
    global _hook_registered
    _live.add(view)
    if _hook_registered:
        return
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.events.register("post_run_cell", _flush_dirty)
        _hook_registered = True


def _flush_dirty(*_result) -> None:
    for view in list(_live):
        if view._dirty:
            view.flush()
