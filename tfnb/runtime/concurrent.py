"""Devices that work at the same time: each device's partition runs on a thread of its own.

As in the 2015 paper (section 3.2), every device has its executor; here that is a thread running
the device's partition, a Recv waiting in the step's rendezvous for the value its Send left. The
calling thread runs the first device's partition and the session's inter-op threads run the others.
Each partition's order is a slice of one order in which every node comes after its inputs, so a Recv
never waits for a Send that waits for it. When one device fails, the step is aborted on all (their
Recvs stop waiting) and the first error is the one raised.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from tfnb.runtime.rendezvous import StepAborted


class InterOpThreads:
    """A session's threads for device partitions (`ConfigProto.inter_op_parallelism_threads`), started on first use."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable, *args) -> Future:
        """fn(*args) on one of the threads, in a copy of the calling thread's context (NumPy's settings for the run)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.count, thread_name_prefix="tfnb-inter-op")
        return self._pool.submit(contextvars.copy_context().run, fn, *args)

    def shutdown(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None


def run_partitions(first: Callable, others: list[Callable], threads: InterOpThreads, step) -> list:
    """[first(), *others()] with `first` on this thread and the others on `threads`; aborts the step on a failure."""
    futures = [threads.submit(_aborting, fn, step) for fn in others]
    results, errors = [None], []
    try:
        results[0] = first()
    except BaseException as error:  # the other devices must stop waiting for this one
        step.rendezvous.abort()
        errors.append(error)
    for future in futures:
        try:
            results.append(future.result())
        except BaseException as error:
            errors.append(error)
    if errors:
        raise next((e for e in errors if not isinstance(e, StepAborted)), errors[0])
    return results


def _aborting(fn: Callable, step):
    try:
        return fn()
    except BaseException:
        step.rendezvous.abort()
        raise
