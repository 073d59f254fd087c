"""tf.data kernels: datasets as values flowing between dataset ops, iterators as session resources.

A dataset op's output (dtype variant) is a Dataset: a description of a sequence of elements, each a tuple
of NumPy arrays (its components), from which any number of independent cursors can be opened. Datasets
live on the host, as TF's input pipelines run on the CPU. An iterator is a resource of the session
(IteratorV2, OneShotIterator): MakeIterator opens a cursor on a dataset, IteratorGetNext advances it and
raises OutOfRangeError at the end. A prefetching cursor fills its buffer on a thread of its own.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable

import numpy as np

from tfnb.framework.errors import FailedPreconditionError, InvalidArgumentError, OutOfRangeError
from tfnb.kernels.queues import resource_handle
from tfnb.kernels.registry import kernel


def _host(value):
    """A NumPy copy of an array, on the host or a device (the dataset keeps what it is given); a resource (a
    captured variable's handle) as it is."""
    if isinstance(value, np.ndarray | np.generic):
        return np.array(value, copy=True)
    return value.get() if hasattr(value, "get") and hasattr(value, "dtype") else value


# -- datasets and their cursors -------------------------------------------------------------------------


class Dataset:
    """A sequence of elements; `cursor()` opens an independent pass over them."""

    def cursor(self) -> Cursor:
        raise NotImplementedError


class Cursor:
    """A position in a dataset: `next()` gives the next element or raises StopIteration at the end."""

    def next(self) -> tuple:
        raise NotImplementedError

    def close(self) -> None:
        """Stops any work done ahead (a prefetching thread); the cursor is not used afterwards."""


class _Slices(Dataset):
    def __init__(self, components: tuple) -> None:
        self.components = components

    def cursor(self) -> Cursor:
        components = self.components
        # c[i, ...] is a 0-d array for a vector, where c[i] would be a NumPy scalar.
        return _PythonCursor(tuple(c[i, ...] for c in components) for i in range(len(components[0])))


class _Single(Dataset):
    def __init__(self, components: tuple) -> None:
        self.components = components

    def cursor(self) -> Cursor:
        return _PythonCursor(iter([self.components]))


class _Range(Dataset):
    def __init__(self, start: int, stop: int, step: int) -> None:
        self.values = range(start, stop, step)

    def cursor(self) -> Cursor:
        return _PythonCursor((np.array(v, np.int64),) for v in self.values)


class _PythonCursor(Cursor):
    def __init__(self, elements) -> None:
        self._elements = elements

    def next(self) -> tuple:
        return tuple(next(self._elements))


class _Mapped(Dataset):
    """Elements passed through a graph function (with the captured values after each element's components)."""

    def __init__(self, source: Dataset, call: Callable, captured: tuple) -> None:
        self.source, self.call, self.captured = source, call, captured

    def cursor(self) -> Cursor:
        return _MapCursor(self.source.cursor(), self.call, self.captured)


class _MapCursor(Cursor):
    def __init__(self, source: Cursor, call: Callable, captured: tuple) -> None:
        self._source, self._call, self._captured = source, call, captured

    def next(self) -> tuple:
        return tuple(np.asarray(v) for v in self._call(*self._source.next(), *self._captured))

    def close(self) -> None:
        self._source.close()


class _Filtered(_Mapped):
    def cursor(self) -> Cursor:
        return _FilterCursor(self.source.cursor(), self.call, self.captured)


class _FilterCursor(_MapCursor):
    def next(self) -> tuple:
        while True:
            element = self._source.next()
            if bool(self._call(*element, *self._captured)[0]):
                return element


class _Batched(Dataset):
    def __init__(self, source: Dataset, size: int, drop_remainder: bool) -> None:
        self.source, self.size, self.drop_remainder = source, size, drop_remainder

    def cursor(self) -> Cursor:
        return _BatchCursor(self.source.cursor(), self.size, self.drop_remainder)


class _BatchCursor(Cursor):
    def __init__(self, source: Cursor, size: int, drop_remainder: bool) -> None:
        self._source, self._size, self._drop_remainder = source, size, drop_remainder

    def next(self) -> tuple:
        elements = []
        try:
            while len(elements) < self._size:
                elements.append(self._source.next())
        except StopIteration:
            if not elements or self._drop_remainder:
                raise
        shapes = {tuple(c.shape for c in element) for element in elements}
        if len(shapes) > 1:
            raise InvalidArgumentError(None, None, "Cannot batch tensors with different shapes in a component: "
                                       f"{sorted(shapes)}")
        return tuple(np.stack(parts) for parts in zip(*elements))

    def close(self) -> None:
        self._source.close()


class _Repeated(Dataset):
    def __init__(self, source: Dataset, count: int) -> None:
        self.source, self.count = source, count

    def cursor(self) -> Cursor:
        return _RepeatCursor(self.source, self.count)


class _RepeatCursor(Cursor):
    """Passes over the source `count` times (-1: forever); an empty source ends the repetition."""

    def __init__(self, source: Dataset, count: int) -> None:
        self._source, self._left = source, count
        self._current = source.cursor() if count else None
        self._produced = False

    def next(self) -> tuple:
        while self._current is not None:
            try:
                element = self._current.next()
                self._produced = True
                return element
            except StopIteration:
                self._left -= 1
                if self._left == 0 or not self._produced:
                    self._current = None
                else:
                    self._current = self._source.cursor()
                    self._produced = False
        raise StopIteration

    def close(self) -> None:
        if self._current is not None:
            self._current.close()


class _Shuffled(Dataset):
    """TF's shuffle: a buffer of `size` elements; each output is a random one of them, replaced by the next."""

    def __init__(self, source: Dataset, size: int, seeds: tuple, reshuffle: bool) -> None:
        self.source, self.size, self.seeds, self.reshuffle = source, size, seeds, reshuffle
        self._passes = itertools.count()

    def cursor(self) -> Cursor:
        # Seeds (0, 0) mean no seed: a new order every pass; with a seed, the same order, or a new one per pass
        # when reshuffling (a repeat opens a new cursor each pass).
        if self.seeds == (0, 0):
            rng = np.random.default_rng()
        else:
            rng = np.random.default_rng([*self.seeds, next(self._passes) if self.reshuffle else 0])
        return _ShuffleCursor(self.source.cursor(), self.size, rng)


class _ShuffleCursor(Cursor):
    def __init__(self, source: Cursor, size: int, rng: np.random.Generator) -> None:
        self._source, self._size, self._rng = source, size, rng
        self._buffer: list = []
        self._exhausted = False

    def next(self) -> tuple:
        while not self._exhausted and len(self._buffer) < self._size:
            try:
                self._buffer.append(self._source.next())
            except StopIteration:
                self._exhausted = True
        if not self._buffer:
            raise StopIteration
        index = int(self._rng.integers(len(self._buffer)))
        self._buffer[index], self._buffer[-1] = self._buffer[-1], self._buffer[index]
        return self._buffer.pop()

    def close(self) -> None:
        self._source.close()


class _Taken(Dataset):
    def __init__(self, source: Dataset, count: int) -> None:
        self.source, self.count = source, count

    def cursor(self) -> Cursor:
        return _TakeCursor(self.source.cursor(), self.count)


class _TakeCursor(Cursor):
    def __init__(self, source: Cursor, count: int) -> None:
        self._source, self._left = source, count

    def next(self) -> tuple:
        if self._left == 0:
            raise StopIteration
        self._left -= 1
        return self._source.next()

    def close(self) -> None:
        self._source.close()


class _Skipped(_Taken):
    def cursor(self) -> Cursor:
        cursor = self.source.cursor()
        for _ in range(self.count) if self.count >= 0 else itertools.count():
            try:
                cursor.next()
            except StopIteration:
                break
        return cursor


class _Zipped(Dataset):
    def __init__(self, sources: list[Dataset]) -> None:
        self.sources = sources

    def cursor(self) -> Cursor:
        return _ZipCursor([s.cursor() for s in self.sources])


class _ZipCursor(Cursor):
    def __init__(self, cursors: list[Cursor]) -> None:
        self._cursors = cursors

    def next(self) -> tuple:
        element = []
        for cursor in self._cursors:  # a loop, not a generator: StopIteration must reach the caller
            element.extend(cursor.next())
        return tuple(element)

    def close(self) -> None:
        for cursor in self._cursors:
            cursor.close()


class _Concatenated(Dataset):
    def __init__(self, first: Dataset, second: Dataset) -> None:
        self.first, self.second = first, second

    def cursor(self) -> Cursor:
        return _ConcatenateCursor(self.first.cursor(), self.second)


class _ConcatenateCursor(Cursor):
    def __init__(self, current: Cursor, following: Dataset | None) -> None:
        self._current, self._following = current, following

    def next(self) -> tuple:
        try:
            return self._current.next()
        except StopIteration:
            if self._following is None:
                raise
            self._current, self._following = self._following.cursor(), None
            return self._current.next()

    def close(self) -> None:
        self._current.close()


class _Prefetched(Dataset):
    def __init__(self, source: Dataset, size: int) -> None:
        self.source, self.size = source, size

    def cursor(self) -> Cursor:
        return _PrefetchCursor(self.source.cursor(), self.size)


_END = object()


class _PrefetchCursor(Cursor):
    """Reads ahead on a thread of its own (started by the first `next`) into a buffer of `size` elements, so
    the input pipeline works while the training step computes."""

    def __init__(self, source: Cursor, size: int) -> None:
        self._source = source
        self._buffer: queue.Queue = queue.Queue(maxsize=max(1, size))
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def next(self) -> tuple:
        if self._thread is None:
            self._thread = threading.Thread(target=self._fill, name="tfnb-prefetch", daemon=True)
            self._thread.start()
        item = self._buffer.get()
        if item is _END:
            self._buffer.put(_END)  # every later call ends too
            raise StopIteration
        if isinstance(item, BaseException):
            self._buffer.put(item)
            raise item
        return item

    def _fill(self) -> None:
        while not self._stopped.is_set():
            try:
                item = self._source.next()
            except StopIteration:
                item = _END
            except Exception as error:  # noqa: BLE001 (handed to the consumer, which raises it)
                item = error
            while not self._stopped.is_set():
                try:
                    self._buffer.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if item is _END or isinstance(item, BaseException):
                return

    def close(self) -> None:
        self._stopped.set()
        self._source.close()


# -- dataset kernels ------------------------------------------------------------------------------------


def _int(value) -> int:
    return int(value)


@kernel("TensorSliceDataset")
def tensor_slice_dataset(node):
    def run(*components):
        copies = tuple(_host(c) for c in components)
        if any(c.ndim == 0 for c in copies):
            raise InvalidArgumentError(None, None, "from_tensor_slices needs components with a first dimension")
        if len({c.shape[0] for c in copies}) > 1:
            raise InvalidArgumentError(None, None, "Dimension 0 in all components must match: "
                                       f"{[c.shape[0] for c in copies]}")
        return _Slices(copies)

    return run


@kernel("TensorDataset")
def tensor_dataset(node):
    return lambda *components: _Single(tuple(_host(c) for c in components))


@kernel("RangeDataset")
def range_dataset(node):
    def run(start, stop, step):
        if _int(step) == 0:
            raise InvalidArgumentError(None, None, "step must be a non-zero integer.")
        return _Range(_int(start), _int(stop), _int(step))
    return run


def _function_dataset(kind: type):
    def factory(node):
        functions, function = node.functions, node.attrs["f"]

        def run(source, *captured):
            return kind(source, functions.instantiate(function), tuple(_host(c) for c in captured))

        return run
    return factory


kernel("MapDataset")(_function_dataset(_Mapped))
kernel("FilterDataset")(_function_dataset(_Filtered))


@kernel("BatchDatasetV2")
def batch_dataset(node):
    def run(source, batch_size, drop_remainder):
        size = _int(batch_size)
        if size <= 0:
            raise InvalidArgumentError(None, None, f"Batch size must be greater than zero, got {size}")
        return _Batched(source, size, bool(drop_remainder))
    return run


@kernel("RepeatDataset")
def repeat_dataset(node):
    return lambda source, count: _Repeated(source, _int(count))


@kernel("ShuffleDataset")
def shuffle_dataset(node):
    reshuffle = node.attrs["reshuffle_each_iteration"]

    def run(source, buffer_size, seed, seed2):
        size = _int(buffer_size)
        if size <= 0:
            raise InvalidArgumentError(None, None, f"buffer_size must be greater than zero, got {size}")
        return _Shuffled(source, size, (_int(seed), _int(seed2)), reshuffle)
    return run


@kernel("TakeDataset")
def take_dataset(node):
    return lambda source, count: _Taken(source, _int(count))


@kernel("SkipDataset")
def skip_dataset(node):
    return lambda source, count: _Skipped(source, _int(count))


@kernel("ZipDataset")
def zip_dataset(node):
    return lambda *sources: _Zipped(list(sources))


@kernel("ConcatenateDataset")
def concatenate_dataset(node):
    return lambda first, second: _Concatenated(first, second)


@kernel("PrefetchDataset")
def prefetch_dataset(node):
    return lambda source, buffer_size: _Prefetched(source, _int(buffer_size))


# -- iterators --------------------------------------------------------------------------------------------


class Iterator:
    """A session's iterator resource: the cursor that MakeIterator last opened (None before)."""

    def __init__(self, name: str, definition: str) -> None:
        self.name = name
        self.definition = definition
        self._cursor: Cursor | None = None
        self._lock = threading.Lock()

    def start(self, dataset: Dataset) -> None:
        with self._lock:
            if self._cursor is not None:
                self._cursor.close()
            self._cursor = dataset.cursor()

    def start_once(self, dataset: Dataset) -> None:
        """Opens a cursor on `dataset` unless one is open (what a one-shot iterator does on each run)."""
        with self._lock:
            if self._cursor is None:
                self._cursor = dataset.cursor()

    def next(self) -> tuple:
        with self._lock:
            if self._cursor is None:
                raise FailedPreconditionError(None, None, "GetNext() failed because the iterator has not been "
                                              "initialized. Ensure that you have run the initializer operation "
                                              "for this iterator before getting the next element.")
            try:
                return self._cursor.next()
            except StopIteration:
                raise OutOfRangeError(None, None, "End of sequence") from None

    def cancel(self) -> None:
        """Stops the cursor's threads (the session closed or its container was reset)."""
        with self._lock:
            if self._cursor is not None:
                self._cursor.close()


def _describe(node) -> str:
    types = ", ".join(d.name for d in node.attrs["output_types"])
    shapes = ", ".join(str(s) for s in node.attrs["output_shapes"])
    return f"Iterator(output_types=[{types}], output_shapes=[{shapes}])"


@kernel("IteratorV2")
def iterator_handle(node):
    definition = _describe(node)
    return resource_handle(node, Iterator, definition, lambda name: Iterator(name, definition))


@kernel("OneShotIterator")
def one_shot_iterator(node):
    handle = iterator_handle(node)

    def run(dataset):
        iterator = handle()
        iterator.start_once(dataset)
        return iterator

    return run


@kernel("MakeIterator")
def make_iterator(node):
    def run(dataset, iterator):
        iterator.start(dataset)
    return run


@kernel("IteratorGetNext")
def iterator_get_next(node):
    xp = node.xp
    to_device = (lambda array: array) if xp is np else xp.asarray
    dtypes = node.output_dtypes

    def run(iterator):
        element = iterator.next()
        values = []
        for value, dtype in zip(element, dtypes):
            array = np.asarray(value)
            values.append(to_device(array if array.dtype == dtype else array.astype(dtype)))

        return values[0] if len(values) == 1 else tuple(values)

    return run
