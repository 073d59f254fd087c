"""The intra-op threads: the cores that the kernels of one run share.

As in TF, the session owns the threads that a kernel splits its work across
(`ConfigProto.intra_op_parallelism_threads`, 0 for one per core). NumPy's BLAS has threads of its
own, and after each call they spin for a while, holding the cores that any other thread would
use: with two owners of the cores, both are slow. So each run has one owner:

- a plan with a kernel registered `parallel=True` (convolution, pooling) runs with BLAS in one
  thread, and its kernels spread their parts over the session's threads (`parallel_parts`), or run
  independent tasks side by side (`side_by_side`); a plan's pool may run on one thread beside a
  convolution's split (`run_beside`);
- any other plan leaves the cores to BLAS, limited to intra_op_parallelism_threads when that is set.
"""

from __future__ import annotations

import collections
import contextvars
import os
import sys
import threading
from collections.abc import Callable

import numpy as np
import threadpoolctl

# Below this many element operations, splitting a kernel across threads costs more than it saves.
PARALLEL_WORK = 1 << 19


class _RunState(threading.local):
    """Per thread: `widths`, the thread counts of the (nested) runs it is executing, and `beside`, a task for the
    next split's first helper (run_beside). Set in every thread before its first read: a getattr that misses raises
    and catches an AttributeError inside, about 1 us on this project's machine, and run_width is read several times
    per kernel."""

    def __init__(self) -> None:
        self.widths: list[int] = []
        self.beside: _Beside | None = None


_run = _RunState()


def default_width() -> int:
    """One thread per core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not every platform has affinity masks
        return os.cpu_count() or 1


def run_width() -> int:
    """How many threads the kernels of the current run may split their work across."""
    widths = _run.widths
    return widths[-1] if widths else 1


def even_slices(count: int, parts: int) -> list[slice]:
    """`parts` consecutive slices covering range(count), their lengths differing by at most one."""
    return [slice(count * i // parts, count * (i + 1) // parts) for i in range(parts)]


def parallel_parts(fn, n: int, work: float) -> list:
    """[fn(part) for consecutive slices covering range(n)], one slice per thread of the run.

    The calling thread runs the first part, helper threads the others, each in a copy of the calling thread's
    context: NumPy's settings for the run (KernelNumpyState) hold in every part. Parts must write disjoint data.
    Work below `PARALLEL_WORK` element operations, or a run with one thread, runs in the calling thread
    alone. A part runs with one thread: a split inside it runs in the part's own thread, as it does in a
    helper. If a part raises, the first error is raised once every part has ended.
    """
    width = min(run_width(), n)
    if width < 2 or work < PARALLEL_WORK:
        return [fn(slice(0, n))]
    parts = even_slices(n, width)
    helpers = _HELPERS.take(width - 1)
    beside, _run.beside = _run.beside, None
    for helper, part in zip(helpers, parts[1:]):
        helper.start(fn if beside is None else beside.before(fn), part, contextvars.copy_context())
        beside = None
    _run.widths.append(1)
    try:
        first = fn(parts[0])
    finally:
        _run.widths.pop()
        outcomes = [helper.outcome() for helper in helpers]
        _HELPERS.give_back(helpers)
    for _, error in outcomes:
        if error is not None:
            raise error
    return [first] + [result for result, _ in outcomes]


def run_beside(task: Callable[[], object], then: Callable[[], object]) -> tuple:
    """(task(), then()): task run by a helper thread at the start of then's first split across the run's threads,
    before the helper takes its part, so that where then's parts are taken in turns (in_turns), the helper takes
    fewer of them. For a task that a second core speeds up little (a pool: a few passes over memory) beside one
    that splits its work (a convolution), as TF's inter-op threads run independent ops at once.

    Where then's split runs tasks side by side (side_by_side), the task is one more of them, taken by the thread
    that ends its first task first. Where then never splits its work, the task runs after it, in the calling
    thread. An error of the task is raised once then has ended.
    """
    beside = _Beside(task)
    _run.beside = beside
    try:
        result = then()
    finally:
        _run.beside = None
    if not beside.started:
        beside.run()
    value, error = beside.outcome
    if error is not None:
        raise error
    return value, result


class _Beside:
    """A task that the first helper of the next split runs before its part, or side_by_side runs as one more task
    (run_beside)."""

    def __init__(self, task: Callable[[], object]) -> None:
        self.task = task
        self.started = False
        self.outcome: tuple = (None, None)

    def run(self) -> None:
        self.started = True
        try:
            self.outcome = (self.task(), None)
        except Exception as error:  # raised by run_beside, in the calling thread
            self.outcome = (None, error)

    def before(self, fn: Callable[[slice], object]) -> Callable[[slice], object]:
        def task_then_part(part: slice):
            self.run()
            return fn(part)

        return task_then_part


def side_by_side(tasks: list, work: float, waits: list | None = None) -> list:
    """[task() for task in tasks], the run's threads each taking the next task when done with the last, each task
    in one thread.

    For kernels made of independent parts of similar cost (a convolution's input and filter gradients, at the
    shapes where this measured faster: kernels/conv/choice.run_gradients): each runs alone on its core, where
    splitting each across the threads in turn would hand work back and forth between them twice. A split inside a
    task runs in the task's thread (parallel_parts). A task waiting to run beside (run_beside) is taken last, by
    the thread that ends its first task first: it fills the time that the shorter task leaves that core idle.

    `waits[i]` holds the positions of the tasks that task i reads the values of: a thread takes the first task
    not yet taken whose waits have ended, and where none has, waits for a task to end. A task that raises is
    raised once every task has ended; the tasks waiting for it never run.
    """
    beside, _run.beside = _run.beside, None
    jobs = list(tasks) + ([] if beside is None else [beside.run])
    needs = [set(waited) for waited in waits] if waits else [set() for _ in tasks]
    needs += [set()] * (len(jobs) - len(needs))
    results: list = [None] * len(jobs)
    untaken, ended, failed, state = list(range(len(jobs))), set(), set(), threading.Condition()

    def next_ready() -> int | None:
        """The first untaken task whose waits have ended, taken; None once none is left."""
        with state:
            while untaken:
                for index in untaken:
                    if needs[index] & failed:  # it would read a value that was never made
                        untaken.remove(index)
                        failed.add(index)
                        break
                    if needs[index] <= ended:
                        untaken.remove(index)
                        return index
                else:
                    state.wait()
            return None

    def take_turns(_):
        while (index := next_ready()) is not None:
            try:
                results[index] = jobs[index]()
            except BaseException:
                with state:
                    failed.add(index)
                    state.notify_all()
                raise
            with state:
                ended.add(index)
                state.notify_all()

    parallel_parts(take_turns, len(tasks), work)
    return results[:len(tasks)]


class _Helper:
    """A thread that runs one part at a time beside the calling thread (NumPy and BLAS release the GIL).

    It is handed a part and hands back the outcome through two locks used as binary semaphores, the least
    a call can cost: waking the thread on the other core is most of it (about 50 µs on a 2-core VM,
    where a thread pool's futures took 55).
    """

    def __init__(self) -> None:
        self._go, self._done = threading.Lock(), threading.Lock()
        self._go.acquire()
        self._done.acquire()
        self._task: tuple = ()
        self._outcome: tuple = (None, None)
        threading.Thread(target=self._serve, name="tfnb-intra-op", daemon=True).start()

    def start(self, fn, part: slice, context: contextvars.Context) -> None:
        self._task = (fn, part, context)
        self._go.release()

    def outcome(self) -> tuple:
        """(result, None) or (None, error) of the part started last, once it has ended."""
        self._done.acquire()
        outcome, self._outcome = self._outcome, (None, None)  # the helper keeps no reference to the result
        return outcome

    def _serve(self) -> None:
        while True:
            self._go.acquire()
            (fn, part, context), self._task = self._task, ()
            try:
                self._outcome = (context.run(fn, part), None)
            except BaseException as error:  # handed to the calling thread, which raises it
                self._outcome = (None, error)
            del fn, context  # an idle helper keeps no kernel closure, nor the arrays it holds
            self._done.release()


class _IdleHelpers:
    """The process's helper threads that no call is using; a call takes what it needs and makes the rest.

    Calls from several threads at once (devices run their partitions concurrently) take different helpers.
    A forked child has none of its parent's threads, so the helpers are kept per process id.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._idle: list[_Helper] = []

    def take(self, count: int) -> list[_Helper]:
        with self._lock:
            if self._pid != os.getpid():
                self._pid, self._idle = os.getpid(), []
            taken = self._idle[max(0, len(self._idle) - count):]
            del self._idle[len(self._idle) - len(taken):]
        return taken + [_Helper() for _ in range(count - len(taken))]

    def give_back(self, helpers: list[_Helper]) -> None:
        with self._lock:
            if self._pid == os.getpid():
                self._idle.extend(helpers)


_HELPERS = _IdleHelpers()


class _BlasLimits:
    """BLAS thread limits held by overlapping runs, process-wide: the smallest one held applies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: collections.Counter = collections.Counter()
        self._libraries: list = []
        self._modules_seen = -1
        self._defaults: list[int] = []
        self.limit: int | None = None  # the limit that applies now (None: BLAS's own thread count)

    def acquire(self, threads: int) -> None:
        with self._lock:
            if not self._held:
                # A BLAS library arrives with an extension module: look again only when modules were imported.
                if len(sys.modules) != self._modules_seen:
                    self._modules_seen = len(sys.modules)
                    self._libraries = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
                self._defaults = [library.num_threads for library in self._libraries]
            self._held[threads] += 1
            self._apply()

    def release(self, threads: int) -> None:
        with self._lock:
            self._held[threads] -= 1
            if not self._held[threads]:
                del self._held[threads]
            self._apply()

    def _apply(self) -> None:
        limit = self.limit = min(self._held) if self._held else None
        for library, default in zip(self._libraries, self._defaults):
            wanted = default if limit is None else min(limit, default)
            if library.num_threads != wanted:
                library.set_num_threads(wanted)


_blas_limits = _BlasLimits()


def blas_in_one_thread() -> bool:
    """Whether a run holds BLAS to one thread: its kernels' products then run in the thread that calls them, on
    one core's caches, also where that thread is one of several (a part of a split, a task side by side)."""
    return _blas_limits.limit == 1


class RunThreads:
    """Context of a plan's runs: kernels split work across `width` threads while BLAS keeps `blas_threads`.

    One instance serves every run of a plan, in any thread.
    """

    __slots__ = ("width", "blas_threads")

    def __init__(self, width: int, blas_threads: int) -> None:
        self.width = width
        self.blas_threads = blas_threads

    def __enter__(self) -> RunThreads:
        _blas_limits.acquire(self.blas_threads)
        _run.widths.append(self.width)
        return self

    def __exit__(self, *exc) -> None:
        _run.widths.pop()
        _blas_limits.release(self.blas_threads)


# NumPy's ufuncs copy an operand through buffers of this many elements (8192 by default) where its contiguous runs
# are shorter than about half a buffer: a pool's strided taps, rows of a window that tile it. With 2048, the CNN
# benchmark's pools took 0.77x the time forward and 0.87x backward (one thread), its training step 0.983x; the
# paper's four models and the MLP 0.995-1.007x, inside the noise (alternating steps in one process).
KERNEL_BUFSIZE = 2048


class KernelNumpyState:
    """NumPy's settings while a run's kernels run, in the calling thread and in the threads that work for it
    (parallel_parts, tfnb/runtime/concurrent.py), restored after: no floating-point warnings (an inf or NaN that a
    kernel computes is its value, as in TF) and ufunc buffers of KERNEL_BUFSIZE elements. One per run."""

    __slots__ = ("_errstate",)

    def __enter__(self) -> None:
        self._errstate = np.errstate(all="ignore")
        self._errstate.__enter__()
        np.setbufsize(KERNEL_BUFSIZE)

    def __exit__(self, *exc) -> None:
        self._errstate.__exit__(*exc)  # restores the buffer size too


def run_threads(configured: int, parallel_kernels: bool) -> RunThreads | None:
    """The threads of a plan's runs (None: leave BLAS as it is) for a session's intra_op_parallelism_threads."""
    width = configured or default_width()
    if parallel_kernels and width > 1:
        return RunThreads(width, 1)
    if configured:
        return RunThreads(1, configured)
    return None
