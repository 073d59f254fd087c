"""Threads that fill queues while a training loop runs: tf.train.QueueRunner and tf.train.Coordinator.

A QueueRunner holds a queue's enqueue ops; `create_threads` starts one thread per op, each
running its op in a loop through `Session.run` (steps run concurrently, paper section 7.3). A
Coordinator tells the threads when to stop, collects the first exception and joins them. When the
coordinator stops, the runner closes its queue and cancels waiting enqueues, so no thread hangs;
OutOfRangeError (the input ran out) ends a runner quietly, and its last thread closes the queue.

    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        while not coord.should_stop():
            sess.run(train_op)
    except tf.errors.OutOfRangeError:
        pass
    finally:
        coord.request_stop()
    coord.join(threads)
"""

from __future__ import annotations

import contextlib
import threading
import time

from tfnb.framework.default_session import get_default_session
from tfnb.framework.errors import CancelledError, OutOfRangeError
from tfnb.framework.graph import GraphKeys, add_to_collection

__all__ = ["Coordinator", "QueueRunner", "add_queue_runner", "start_queue_runners"]


class Coordinator:
    """Coordinates the termination of a set of threads: stop requests, the first error, join."""

    def __init__(self, clean_stop_exception_types=None) -> None:
        self._clean_stop = tuple(clean_stop_exception_types if clean_stop_exception_types is not None
                                 else (OutOfRangeError,))
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info = None
        self._registered: set[threading.Thread] = set()
        self._joined = False

    def should_stop(self) -> bool:
        """True once a stop was requested."""
        return self._stop_event.is_set()

    def request_stop(self, ex=None) -> None:
        """Asks every thread to stop; the first exception given (unless a clean-stop type) is re-raised by join."""
        with self._lock:
            if self._stop_event.is_set():
                return
            if ex is not None and not isinstance(ex, self._clean_stop):
                self._exc_info = (type(ex), ex, ex.__traceback__) if isinstance(ex, BaseException) else ex
            self._stop_event.set()

    def clear_stop(self) -> None:
        """Forgets the stop request and the exception, so the coordinator can be used again."""
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop_event.clear()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context in which an exception requests a stop (with it) instead of propagating."""
        try:
            yield
        except BaseException as error:  # noqa: BLE001 (the exception is passed on to join)
            self.request_stop(error)

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Waits until a stop is requested (or `timeout` seconds pass); returns whether it was."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        """Adds a thread for `join` to wait for."""
        with self._lock:
            self._registered.add(thread)

    def join(self, threads=None, stop_grace_period_secs: float = 120, ignore_live_threads: bool = False) -> None:
        """Waits for the threads to end once a stop is requested, then re-raises the recorded exception.

        Threads still alive `stop_grace_period_secs` after the stop raise RuntimeError.
        """
        with self._lock:
            threads = self._registered | set(threads or ())
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        self.request_stop()
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._joined = True
            self._registered = set()
            exc_info = self._exc_info
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])
        alive = [t.name for t in threads if t.is_alive()]
        if alive and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: {' '.join(alive)}")

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Re-raises the exception given to request_stop, if any."""
        with self._lock:
            if self._exc_info is not None:
                raise self._exc_info[1].with_traceback(self._exc_info[2])


class QueueRunner:
    """Holds a queue and the ops that fill it; `create_threads` runs each op in a loop in its own thread."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None) -> None:
        if queue_runner_def is not None:
            raise NotImplementedError("tfnb cannot build a QueueRunner from a QueueRunnerDef")
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._closed_types = tuple(queue_closed_exception_types or (OutOfRangeError,))
        self._lock = threading.Lock()
        self._runs_per_session: dict = {}
        self._exceptions_raised: list[BaseException] = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return list(self._enqueue_ops)

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple:
        return self._closed_types

    @property
    def exceptions_raised(self) -> list[BaseException]:
        """Exceptions the threads raised when they ran without a coordinator."""
        return list(self._exceptions_raised)

    @property
    def name(self) -> str:
        return self._queue.name

    def create_threads(self, sess, coord: Coordinator | None = None, daemon: bool = False,
                       start: bool = False) -> list[threading.Thread]:
        """One thread per enqueue op (plus one closing the queue when `coord` stops); started if `start`."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []  # this session's threads are already running
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon,
                                    name=f"QueueRunnerThread-{self.name}-{op.name}") for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord), daemon=daemon,
                                            name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for thread in threads:
            if coord is not None:
                coord.register_thread(thread)
            if start:
                thread.start()
        return threads

    def _run(self, sess, enqueue_op, coord: Coordinator | None) -> None:
        try:
            enqueue = sess.make_callable(enqueue_op)
            while coord is None or not coord.should_stop():
                try:
                    enqueue()
                except self._closed_types:
                    self._finish(sess, close=True)
                    return
        except BaseException as error:  # noqa: BLE001 (reported to the coordinator, as TF does)
            if coord is None:
                self._exceptions_raised.append(error)
                self._finish(sess, close=False)
                raise
            if not (coord.should_stop() and isinstance(error, CancelledError | RuntimeError)):
                coord.request_stop(error)
        self._finish(sess, close=False)

    def _finish(self, sess, close: bool) -> None:
        """Counts a thread out; the last one to end because the input ran out closes the queue."""
        with self._lock:
            self._runs_per_session[sess] -= 1
            last = self._runs_per_session[sess] == 0
        if close and last:
            with contextlib.suppress(Exception):  # the queue may be closed already
                sess.run(self._close_op)

    def _close_on_stop(self, sess, coord: Coordinator) -> None:
        coord.wait_for_stop()
        with contextlib.suppress(Exception):  # the session may be closed already
            sess.run(self._cancel_op)


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds a QueueRunner to a collection of the default graph (QUEUE_RUNNERS by default)."""
    add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord: Coordinator | None = None, daemon: bool = True, start: bool = True,
                        collection: str = GraphKeys.QUEUE_RUNNERS) -> list[threading.Thread]:
    """Starts the threads of every QueueRunner in the graph's collection; returns them."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to tf.start_queue_runners(sess=sess)")
    threads = []
    for runner in sess.graph.get_collection(collection):
        threads.extend(runner.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
