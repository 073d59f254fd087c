"""Dashboard: a training loop's summaries, live in the notebook, as TensorBoard shows them.

Scalars are drawn raw (faint) and smoothed by TensorBoard's debiased exponential moving average;
histograms over steps as distribution bands (the percentiles TensorBoard's distributions draw:
min, ±1σ, ±2σ, ±3σ equivalents and the median); step times from the loop itself. Figures are Bokeh
plots in `jupyter_bokeh` widgets, with BokehJS published inline into the page (no CDN).

New points reach the browser as Bokeh stream patches once a second. A view that is not
rendered yet misses patches, and patches never reach the widget's stored state, so every plot is
also re-sent whole (`resync`): each second for the first seconds after a plot appears (while views
render), then as often as keeps resyncs under RESYNC_SHARE of the loop's time, and when the loop
ends. A training loop pays only for parsing summaries and appending points (a few µs per value).
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Iterable, Iterator

import ipywidgets as widgets
import numpy as np
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure
from bokeh.resources import Resources
from jupyter_bokeh import BokehModel

from tfnb.framework.summary_proto import SummaryValue, parse_summary

from .progress import ProgressBar

__all__ = ["Dashboard", "load_bokehjs", "smooth"]

# TensorBoard's distribution bands, in basis points: the normal distribution's -inf, -3σ ... +3σ, +inf.
BASIS_POINTS = (0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000)
STEP_TIME = "step time (ms)"
RESYNC_SHARE = 0.005  # after the first few, whole-plot resyncs may use at most this share of the loop's time
EARLY_RESYNCS = 3  # views render in the first seconds after display: resync each second until then
_RAW, _SMOOTHED, _BAND = "#ffab91", "#e64a19", "#ff7043"
_bokehjs_published = False
_live: weakref.WeakSet = weakref.WeakSet()


def load_bokehjs() -> None:
    """Publishes BokehJS, inline, into the notebook page once per kernel; jupyter_bokeh's views need it."""
    global _bokehjs_published
    if not _bokehjs_published:
        from bokeh.io.notebook import load_notebook
        load_notebook(Resources(mode="inline", components=["bokeh"]), hide_banner=True)
        _bokehjs_published = True


class _Smoother:
    """TensorBoard's scalar smoothing: an exponential moving average divided by its bias (1 - weight**n)."""

    def __init__(self, weight: float) -> None:
        self.weight, self.average, self.count = weight, 0.0, 0

    def __call__(self, value: float) -> float:
        if not math.isfinite(value):
            return value
        self.average = self.average * self.weight + (1 - self.weight) * value
        self.count += 1
        return self.average / (1 - self.weight ** self.count if self.weight < 1 else 1)


def smooth(values: Iterable[float], weight: float) -> list[float]:
    """`values` smoothed as TensorBoard's smoothing slider does at `weight` (0: none, 0.999: most)."""
    smoother = _Smoother(weight)
    return [smoother(float(v)) for v in values]


class _Plot:
    """One Bokeh figure in its own widget, fed rows that wait in `pending` until `push` streams them."""

    def __init__(self, title: str, columns: tuple[str, ...], y_label: str) -> None:
        self.figure = figure(title=title, height=230, width=340, x_axis_label="step", y_axis_label=y_label,
                             tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above")
        self.figure.toolbar.logo = None
        # NumPy columns travel as binary buffers; Bokeh would encode a list element by element.
        self.source = ColumnDataSource({column: np.zeros(0) for column in columns})
        self.pending: dict[str, list] = {column: [] for column in columns}
        self.widget = BokehModel(self.figure)

    @property
    def points(self) -> int:
        """Rows pushed to the figure so far."""
        return len(self.source.data["step"])

    def push(self) -> None:
        """Streams the pending rows into the figure's data (a patch message to rendered views)."""
        if self.pending["step"]:
            self.source.stream({column: np.array(values, np.float64) for column, values in self.pending.items()})
            self.pending = {column: [] for column in self.pending}

    def resync(self) -> None:
        """Re-sends the whole figure to the widget, so every view and the stored state hold all points."""
        self.widget.update_from_model(self.figure)


class _ScalarPlot(_Plot):
    def __init__(self, tag: str, weight: float) -> None:
        super().__init__(tag, ("step", "value", "smoothed"), tag)
        self.figure.line("step", "value", source=self.source, color=_RAW, line_width=1)
        self.figure.line("step", "smoothed", source=self.source, color=_SMOOTHED, line_width=2)
        self._smoother = _Smoother(weight)

    def add(self, step: int, value: float) -> None:
        self.pending["step"].append(step)
        self.pending["value"].append(value)
        self.pending["smoothed"].append(self._smoother(value))

    def resmooth(self, weight: float) -> None:
        """Smooths every point again at a new weight."""
        self._smoother = _Smoother(weight)
        data = dict(self.source.data)
        data["smoothed"] = np.array([self._smoother(v) for v in data["value"].tolist()])
        self.pending["smoothed"] = [self._smoother(v) for v in self.pending["value"]]
        self.source.data = data


class _DistributionPlot(_Plot):
    def __init__(self, tag: str) -> None:
        self.bands = tuple(f"p{bp}" for bp in BASIS_POINTS)
        super().__init__(tag, ("step",) + self.bands, tag)
        outer = len(self.bands) - 1
        for i in range(len(self.bands) // 2):
            self.figure.varea("step", self.bands[i], self.bands[outer - i], source=self.source,
                              fill_color=_BAND, fill_alpha=0.15 + 0.1 * i)
        self.figure.line("step", self.bands[len(self.bands) // 2], source=self.source, color=_SMOOTHED)
        self._latest: tuple[int, SummaryValue] | None = None

    def add(self, step: int, histogram: SummaryValue) -> None:
        # Only the latest histogram of each refresh is decoded and drawn (TensorBoard samples too, keeping 500).
        self._latest = (step, histogram)

    def push(self) -> None:
        if self._latest is not None:
            step, histogram = self._latest
            self.pending["step"].append(step)
            fractions = np.array(BASIS_POINTS) / 10000
            for band, value in zip(self.bands, histogram.value.percentiles(fractions).tolist()):
                self.pending[band].append(value)
            self._latest = None
        super().push()


class Dashboard(widgets.VBox):
    """A live TensorBoard-like panel: scalars with a smoothing slider, distributions, step times.

    `dash.add_summary(sess.run(merged), step)` plots what summary ops produce (the Dashboard takes
    FileWriter's `add_summary` arguments, and `dash.attach(writer)` feeds both); `dash.add_scalars`
    plots plain numbers; `for batch in dash.progress(batches)` shows a progress bar and step times.
    Plots update while the loop runs in the same cell. tfnb differs from TensorBoard: nothing is read
    from files; the panel shows what this process adds.
    """

    def __init__(self, smoothing: float = 0.6, refresh_secs: float = 1.0, resync_secs: float = 1.0) -> None:
        self._slider = widgets.FloatSlider(value=smoothing, min=0.0, max=0.999, step=0.001, readout_format=".3f",
                                           description="Smoothing", continuous_update=False)
        self._slider.observe(self._resmooth, "value")
        self._bar = ProgressBar()
        self._scalar_box = widgets.Box(layout=widgets.Layout(flex_flow="row wrap"))
        self._distribution_box = widgets.Box(layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__([widgets.HBox([self._bar, self._slider]), self._scalar_box, self._distribution_box])
        self.refresh_secs, self.resync_secs = refresh_secs, resync_secs
        self._plots: dict[str, _Plot] = {}
        self._next_push = self._next_resync = 0.0
        self._resyncs = 0
        self._dirty = False
        self._in_progress = False
        self._last_step: tuple[int, float] | None = None
        _live.add(self)
        _flush_after_each_cell()

    # -- feeding ----------------------------------------------------------------------------------

    def add_summary(self, summary, global_step: int | None = None) -> None:
        """Plots the values of a serialized Summary (what `sess.run` of a summary op returns) at `global_step`."""
        step = int(global_step or 0)
        for value in parse_summary(bytes(summary)):
            if value.kind == "scalar":
                self._scalar(value.tag).add(step, value.value)
            elif value.kind == "histogram":
                self._distribution(value.tag).add(step, value)
        self._added(step)

    def add_scalars(self, values: dict, step: int) -> None:
        """Plots plain numbers, e.g. `{"loss": 0.3, "accuracy": 0.9}`, at `step`."""
        for tag, value in values.items():
            self._scalar(tag).add(int(step), float(value))
        self._added(int(step))

    def attach(self, writer) -> _Tee:
        """A stand-in for `writer` (a FileWriter) whose `add_summary` also plots here."""
        return _Tee(writer, self)

    def progress(self, iterable: Iterable, total: int | None = None) -> Iterator:
        """Yields from `iterable` with a progress bar, plotting each iteration's time as the step time."""
        self._in_progress = True
        started = time.perf_counter()
        try:
            for index, item in enumerate(self._bar.wrap(iterable, total)):
                yield item
                now = time.perf_counter()
                self._scalar(STEP_TIME).add(index, (now - started) * 1e3)
                started = now
                self._dirty = True
                self._maybe_refresh(now)
        finally:
            self._in_progress = False
            self.flush()

    # -- drawing ----------------------------------------------------------------------------------

    def flush(self) -> None:
        """Sends every point to the browser and re-sends each plot whole (call when a loop ends)."""
        for plot in self._plots.values():
            plot.push()
            plot.resync()
        self._dirty = False

    def points(self, tag: str) -> int:
        """How many points the plot of `tag` holds in its figure (pending points not counted)."""
        return self._plots[tag].points

    @property
    def tags(self) -> list[str]:
        """The tags plotted, in the order they first appeared."""
        return list(self._plots)

    def display(self) -> None:
        """Shows the dashboard in the notebook (loading BokehJS into the page first)."""
        from IPython.display import display
        display(self)

    def _repr_mimebundle_(self, **kwargs):
        load_bokehjs()
        return super()._repr_mimebundle_(**kwargs)

    def _scalar(self, tag: str) -> _ScalarPlot:
        if tag not in self._plots:
            self._add_plot(tag, _ScalarPlot(tag, self._slider.value), self._scalar_box)
        return self._plots[tag]

    def _distribution(self, tag: str) -> _DistributionPlot:
        if tag not in self._plots:
            self._add_plot(tag, _DistributionPlot(tag), self._distribution_box)
        return self._plots[tag]

    def _add_plot(self, tag: str, plot: _Plot, box: widgets.Box) -> None:
        self._plots[tag] = plot
        box.children = (*box.children, plot.widget)
        self._resyncs, self._next_resync = 0, 0.0

    def _added(self, step: int) -> None:
        now = time.perf_counter()
        if not self._in_progress:
            self._note_step_time(step, now)
        self._dirty = True
        self._maybe_refresh(now)

    def _note_step_time(self, step: int, now: float) -> None:
        if self._last_step is not None and step > self._last_step[0]:
            last_step, last_time = self._last_step
            self._scalar(STEP_TIME).add(step, (now - last_time) * 1e3 / (step - last_step))
        if self._last_step is None or step != self._last_step[0]:
            self._last_step = (step, now)

    def _maybe_refresh(self, now: float) -> None:
        if now >= self._next_push:
            for plot in self._plots.values():
                plot.push()
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
                plot.resmooth(change["new"])


class _Tee:
    """A FileWriter stand-in that also sends every summary to a Dashboard; everything else goes to the writer."""

    def __init__(self, writer, dashboard: Dashboard) -> None:
        self.writer, self.dashboard = writer, dashboard

    def add_summary(self, summary, global_step: int | None = None) -> None:
        """Writes the summary and plots it."""
        self.writer.add_summary(summary, global_step)
        self.dashboard.add_summary(summary, global_step)

    def close(self) -> None:
        """Closes the writer and sends the dashboard's last points."""
        self.writer.close()
        self.dashboard.flush()

    def __getattr__(self, name: str):
        return getattr(self.writer, name)

    def __enter__(self) -> _Tee:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


_hook_registered = False


def _flush_after_each_cell() -> None:
    """Registers (once) an IPython hook that flushes every dashboard with unsent points when a cell ends."""
    global _hook_registered
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
    for dashboard in list(_live):
        if dashboard._dirty:
            dashboard.flush()
