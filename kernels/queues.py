"""Queue kernels: FIFO, padding FIFO and random-shuffle queues that steps share (paper section 4.6).

A queue is a resource in the session's container, as a variable is: its handle op creates it on
first use and finds it afterwards. Enqueues wait for room and dequeues for elements on one
condition variable, with `RunOptions.timeout_in_ms` as their deadline. Nothing is lost when a
step fails or is cancelled: a dequeue takes all its elements at once or none, and an enqueue adds
elements as room appears (as TF does), so one that fails part way leaves those it added.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from tfnb.framework.errors import (
    CancelledError,
    DeadlineExceededError,
    InvalidArgumentError,
    OutOfRangeError,
)
from tfnb.kernels.registry import kernel

_CREATION_LOCK = threading.Lock()


def deadline_of(step) -> float | None:
    """The monotonic time at which a blocked op of this step gives up: the run's deadline (None: wait forever)."""
    return step.deadline


def _shape_text(dims) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


class Queue:
    """A FIFO queue of elements, each a tuple of arrays (its components), stored as enqueued chunks."""

    kind = "FIFOQueue"

    def __init__(self, name: str, capacity: int, dtypes: tuple, shapes: tuple | None, definition: str) -> None:
        self.name = name
        self.capacity = capacity if capacity >= 0 else None
        self.dtypes = dtypes
        self.shapes = shapes
        self.definition = definition
        self._condition = threading.Condition()
        self._size = 0
        self._closing = False  # close() ran: new enqueues fail, those already waiting may finish
        self._closed = False  # closed for dequeues too: one that would wait fails instead
        self._cancels = 0  # close(cancel_pending_enqueues=True) calls so far; a waiting enqueue watches it
        self._aborted = False  # the session closed or the container was reset
        self._active: set[int] = set()
        self._tickets = itertools.count()
        self._chunks: deque = deque()

    # -- what kernels call ------------------------------------------------------------------------

    def size(self) -> int:
        return self._size

    def is_closed(self) -> bool:
        return self._closed

    def enqueue(self, components: tuple, count: int, deadline: float | None) -> None:
        """Adds `count` elements (components with a leading batch dimension of `count`), waiting for room."""
        self._validate(components, count)
        with self._condition:
            if self._closing:
                raise CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")
            ticket, cancels = next(self._tickets), self._cancels
            self._active.add(ticket)
            try:
                self._add(components, count, deadline, cancels)
            finally:
                self._active.discard(ticket)
                if self._closing:
                    self._condition.notify_all()

    def dequeue(self, n: int, deadline: float | None, up_to: bool = False) -> tuple:
        """Removes `n` elements (fewer with `up_to` once closed), waiting for them; components batched."""
        with self._condition:
            self._check_aborted("Dequeue")
            while not self._can_take(n):
                if self._closed:
                    if up_to and self._size:
                        n = self._size
                        break
                    raise OutOfRangeError(None, None, f"{self.kind} '{self.name}' is closed and has insufficient "
                                          f"elements (requested {n}, current size {self._size})")
                self._wait(deadline, "Dequeue")
            pieces = self._take(n)
            self._size -= n
            self._condition.notify_all()
        return self._combine(pieces) if pieces else self._empty()

    def close(self, cancel_pending_enqueues: bool, deadline: float | None) -> None:
        """Stops enqueues; without cancelling, the enqueues already waiting finish first (as in TF)."""
        with self._condition:
            if cancel_pending_enqueues:
                self._closing = self._closed = True
                self._cancels += 1
            else:
                if self._closing:
                    raise CancelledError(None, None, f"Queue '{self.name}' is already closed.")
                self._closing = True
                pending = set(self._active)
                while not pending.isdisjoint(self._active) and not self._closed:
                    self._wait(deadline, "Close")
                self._closed = True
            self._condition.notify_all()

    def cancel(self) -> None:
        """Ends every waiting op with CancelledError (the session closed or its container was reset)."""
        with self._condition:
            self._aborted = self._closing = self._closed = True
            self._condition.notify_all()

    # -- waiting ----------------------------------------------------------------------------------

    def _add(self, components: tuple, count: int, deadline, cancels: int) -> None:
        # Elements go in as room appears, as in TF: waiting for room for all of them could wait forever
        # for a consumer that is itself waiting for more elements.
        done = 0
        while done < count:
            self._check_aborted("Enqueue")
            if self._cancels != cancels:
                raise CancelledError(None, None, "Enqueue operation was cancelled")
            room = count - done if self.capacity is None else min(count - done, self.capacity - self._size)
            if room > 0:
                self._put(components, done, done + room)
                self._size += room
                done += room
                self._condition.notify_all()
            else:
                self._wait(deadline, "Enqueue")

    def _wait(self, deadline: float | None, operation: str) -> None:
        if deadline is None:
            self._condition.wait()
        else:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DeadlineExceededError(None, None, "Timed out waiting for notification")
            self._condition.wait(remaining)
        self._check_aborted(operation)

    def _check_aborted(self, operation: str) -> None:
        if self._aborted:
            raise CancelledError(None, None, f"{operation} operation was cancelled")

    # -- storage: chunks of elements, each the components of one enqueue --------------------------

    def _can_take(self, n: int) -> bool:
        return self._size >= n

    def _put(self, components: tuple, start: int, stop: int) -> None:
        whole = start == 0 and stop == len(components[0])
        self._chunks.append([components if whole else tuple(c[start:stop] for c in components), 0])

    def _take(self, n: int) -> list[tuple]:
        pieces = []
        while n:
            chunk = self._chunks[0]
            components, start = chunk
            length = len(components[0]) - start
            count = min(n, length)
            pieces.append(tuple(c[start:start + count] for c in components))
            if count == length:
                self._chunks.popleft()
            else:
                chunk[1] = start + count
            n -= count
        return pieces

    def _combine(self, pieces: list[tuple]) -> tuple:
        if len(pieces) == 1:
            return pieces[0]
        try:
            return tuple(np.concatenate(parts) for parts in zip(*pieces))
        except ValueError:
            shapes = sorted({str(list(p.shape[1:])) for parts in zip(*pieces) for p in parts})
            raise InvalidArgumentError(None, None, f"{self.kind} '{self.name}' cannot batch elements of different "
                                       f"shapes {', '.join(shapes)}; give the queue shapes") from None

    def _empty(self) -> tuple:
        shapes = self.shapes or [()] * len(self.dtypes)
        return tuple(np.empty((0,) + tuple(d or 0 for d in s), dtype) for s, dtype in zip(shapes, self.dtypes))

    def _validate(self, components: tuple, count: int) -> None:
        if any(len(c) != count for c in components):
            sizes = ", ".join(str(len(c)) for c in components)
            raise InvalidArgumentError(None, None, "All input tensors must have the same size in the 0th dimension "
                                       f"(got {sizes})")
        if self.shapes is None:
            return
        for index, (array, dims) in enumerate(zip(components, self.shapes)):
            if not self._fits(array.shape[1:], dims):
                raise InvalidArgumentError(None, None, f"Shape mismatch in tuple component {index}. Expected "
                                           f"{_shape_text(dims)}, got {list(array.shape[1:])}")

    @staticmethod
    def _fits(shape: tuple, dims: tuple) -> bool:
        return shape == dims


class PaddingQueue(Queue):
    """A FIFO queue whose batches pad each component with zeros (b'' for strings) to the largest element."""

    kind = "PaddingFIFOQueue"

    @staticmethod
    def _fits(shape: tuple, dims: tuple) -> bool:
        return len(shape) == len(dims) and all(d is None or d == s for d, s in zip(dims, shape))

    def _combine(self, pieces: list[tuple]) -> tuple:
        count = sum(len(p[0]) for p in pieces)
        return tuple(_padded(parts, count) for parts in zip(*pieces))


def _padded(parts: tuple, count: int):
    """The parts (arrays with a leading batch dim) stacked into one batch, padded to the largest shape."""
    shape = tuple(max(sizes) for sizes in zip(*(p.shape[1:] for p in parts)))
    if len(parts) == 1 and parts[0].shape[1:] == shape:
        return parts[0]
    first = parts[0]
    out = np.full((count,) + shape, b"", dtype=object) if first.dtype == object else np.zeros((count,) + shape,
                                                                                              first.dtype)
    row = 0
    for part in parts:
        out[(slice(row, row + len(part)),) + tuple(slice(0, s) for s in part.shape[1:])] = part
        row += len(part)
    return out


class RandomShuffleQueue(Queue):
    """A queue that dequeues elements in random order and keeps `min_after_dequeue` until closed."""

    kind = "RandomShuffleQueue"

    def __init__(self, name: str, capacity: int, dtypes: tuple, shapes: tuple | None, definition: str,
                 min_after_dequeue: int, seeds: tuple) -> None:
        super().__init__(name, capacity, dtypes, shapes, definition)
        self.min_after_dequeue = min_after_dequeue
        self._elements: list[tuple] = []
        self._rng = np.random.default_rng(list(seeds) if any(seeds) else None)

    def _can_take(self, n: int) -> bool:
        return self._size >= n and (self._closed or self._size - n >= self.min_after_dequeue)

    def _put(self, components: tuple, start: int, stop: int) -> None:
        self._elements.extend(tuple(c[i:i + 1] for c in components) for i in range(start, stop))

    def _take(self, n: int) -> list[tuple]:
        elements = self._elements
        taken = []
        for _ in range(n):
            index = int(self._rng.integers(len(elements)))
            elements[index], elements[-1] = elements[-1], elements[index]
            taken.append(elements.pop())
        return taken


# -- kernels ----------------------------------------------------------------------------------------


def _describe(node) -> str:
    """The queue's definition as text; a shared queue must be requested with the same one."""
    attrs = node.attrs
    types = ", ".join(d.name for d in attrs["component_types"])
    shapes = ", ".join(str(s) for s in attrs["shapes"])
    extra = f", min_after_dequeue={attrs['min_after_dequeue']}" if "min_after_dequeue" in attrs else ""
    return f"{node.op_type}(capacity={attrs['capacity']}, component_types=[{types}], shapes=[{shapes}]{extra})"


def _make_queue(node, name: str, definition: str) -> Queue:
    attrs = node.attrs
    dtypes = tuple(d.np_dtype for d in attrs["component_types"])
    shapes = tuple(s.as_tuple() for s in attrs["shapes"]) or None
    if node.op_type == "RandomShuffleQueueV2":
        return RandomShuffleQueue(name, attrs["capacity"], dtypes, shapes, definition, attrs["min_after_dequeue"],
                                  (attrs["seed"], attrs["seed2"]))
    kind = PaddingQueue if node.op_type == "PaddingFIFOQueueV2" else Queue
    return kind(name, attrs["capacity"], dtypes, shapes, definition)


def resource_handle(node, kind: type, definition: str, make: Callable[[str], object]) -> Callable[[], object]:
    """A handle op's kernel: the `kind` resource named by the op in its container, `make(name)` on first use.

    The name is the op's shared_name, else its own name. The resource's `definition` must match the
    op's, so ops sharing a resource agree on what it is.
    """
    name = node.attrs["shared_name"] or node.name
    container = node.resources.container(node.attrs["container"])

    def handle():
        resource = container.get(name)
        if resource is None:
            with _CREATION_LOCK:
                resource = container.get(name)
                if resource is None:
                    resource = container[name] = make(name)
        if not isinstance(resource, kind):
            raise InvalidArgumentError(None, None, f"Resource '{name}' in container '{node.attrs['container']}' "
                                       f"is not a {kind.__name__}")
        if resource.definition != definition:
            raise InvalidArgumentError(None, None, f"Shared resource '{name}' is {resource.definition}, but "
                                       f"{node.name} requests {definition}")
        return resource
    return handle


def queue_handle(node):
    """The kernel of FIFOQueueV2, PaddingFIFOQueueV2 and RandomShuffleQueueV2."""
    definition = _describe(node)
    return resource_handle(node, Queue, definition, lambda name: _make_queue(node, name, definition))


for _type in ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2"):
    kernel(_type)(queue_handle)


def _host_copy(xp):
    """A function copying a device array into a NumPy array that the queue owns."""
    if xp is np:
        return lambda array: np.array(array, copy=True)
    return xp.asnumpy


def _to_device(xp):
    return (lambda array: array) if xp is np else xp.asarray


@kernel("QueueEnqueueV2", needs_step=True)
def queue_enqueue(node):
    copy = _host_copy(node.xp)

    def run(step, queue, *components):
        queue.enqueue(tuple(copy(c)[None] for c in components), 1, deadline_of(step))
    return run


@kernel("QueueEnqueueManyV2", needs_step=True)
def queue_enqueue_many(node):
    copy = _host_copy(node.xp)

    def run(step, queue, *components):
        if any(c.ndim == 0 for c in components):
            raise InvalidArgumentError(None, None, "enqueue_many takes components with a batch dimension, got a scalar")
        queue.enqueue(tuple(copy(c) for c in components), len(components[0]), deadline_of(step))
    return run


def _dequeue_kernel(count_of, up_to: bool, single: bool):
    """A dequeue kernel: `count_of(n)` elements (None: one element, without a batch dimension)."""
    def factory(node):
        to_device, dtypes = _to_device(node.xp), node.output_dtypes

        def outputs(queue, batch):
            if queue.dtypes != dtypes:
                raise InvalidArgumentError(None, None, f"Queue '{queue.name}' holds {list(map(str, queue.dtypes))}, "
                                           f"not {list(map(str, dtypes))}")
            values = tuple(to_device(c) for c in batch)
            return values[0] if len(values) == 1 else values

        if single:
            return lambda step, queue: outputs(queue, (c[0, ...] for c in queue.dequeue(1, deadline_of(step))))
        return lambda step, queue, n: outputs(queue, queue.dequeue(count_of(n), deadline_of(step), up_to))
    return factory


def _count(n) -> int:
    count = int(n)
    if count < 0:
        raise InvalidArgumentError(None, None, f"Dequeue requested a negative number of elements: {count}")
    return count


kernel("QueueDequeueV2", needs_step=True)(_dequeue_kernel(None, False, True))
kernel("QueueDequeueManyV2", needs_step=True)(_dequeue_kernel(_count, False, False))
kernel("QueueDequeueUpToV2", needs_step=True)(_dequeue_kernel(_count, True, False))


@kernel("QueueCloseV2", needs_step=True)
def queue_close(node):
    cancel = node.attrs["cancel_pending_enqueues"]
    return lambda step, queue: queue.close(cancel, deadline_of(step))


@kernel("QueueSizeV2", fresh_output=True)
def queue_size(node):
    to_device = _to_device(node.xp)
    return lambda queue: to_device(np.array(queue.size(), np.int32))


@kernel("QueueIsClosedV2", fresh_output=True)
def queue_is_closed(node):
    to_device = _to_device(node.xp)
    return lambda queue: to_device(np.array(queue.is_closed()))
