"""Input readers (paper section 4.5): ops that read data from files where it is needed, in TF1 style.

    filenames = tf.train.string_input_producer(["a.csv", "b.csv"], num_epochs=1)
    key, line = tf.TextLineReader(skip_header_lines=1).read(filenames)
    x, label = tf.decode_csv(line, record_defaults=[[0.0], [0]])
    xs, labels = tf.train.batch([x, label], batch_size=32)

and, for NumPy shards, `tfnb.input.readers.NpyShardReader("train-*.npz", batch_size=32, shuffle=True)`.
A reader is a resource, as a queue is: it keeps its place in the files across steps, and queue
runner threads (tf.train.start_queue_runners) read ahead while the training loop runs.
"""

from __future__ import annotations

import glob
import os
import tempfile

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.errors import NotFoundError
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape
from tfnb.input.input_pipeline import batch, shuffle_batch, string_input_producer
from tfnb.kernels.readers import load_shard
from tfnb.ops.array_ops import stack
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.data_flow_ops import FIFOQueue, QueueBase, _as_type_list

__all__ = ["ReaderBase", "TextLineReader", "decode_csv"]

CSV_DTYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


# -- shape rules --------------------------------------------------------------------------------------


def _check_resources(op, count: int) -> None:
    for index in range(count):
        if op.inputs[index].dtype is not dtypes.resource:
            raise TypeError(f"Input {index} of {op.type} must be a resource handle, got {op.inputs[index].dtype.name}")


def _infer_handle(op):
    return [(dtypes.resource, TensorShape([]))]


def _infer_read(op):
    _check_resources(op, 2)
    shape = TensorShape([] if op.type == "ReaderReadV2" else [None])
    return [(dtypes.string, shape), (dtypes.string, shape)]


def _infer_npy_read(op):
    _check_resources(op, 2)
    rows = [(t, TensorShape([None]).concatenate(s)) for t, s in zip(op.attrs["component_types"], op.attrs["shapes"])]
    return [(dtypes.string, TensorShape([None]))] + rows


def _infer_counter(op):
    _check_resources(op, 1)
    return [(dtypes.int64, TensorShape([]))]


def _infer_decode_csv(op):
    records, defaults = op.inputs[0], op.inputs[1:]
    if records.dtype is not dtypes.string:
        raise TypeError(f"decode_csv takes string records, got {records.dtype.name}")
    for index, (default, dtype) in enumerate(zip(defaults, op.attrs["OUT_TYPE"])):
        if default.dtype not in CSV_DTYPES:
            raise TypeError(f"Record default {index} has dtype {default.dtype.name}; decode_csv reads "
                            + ", ".join(d.name for d in CSV_DTYPES))
        if default.shape.ndims is not None and default.shape.ndims > 1:
            raise ValueError(f"Record default {index} must be a scalar or a vector of at most one element, "
                             f"got shape {default.shape}")
    return [(dtype, records.shape) for dtype in op.attrs["OUT_TYPE"]]


# -- examples: small files written once per process -----------------------------------------------------


_example_dir: tempfile.TemporaryDirectory | None = None


def _example_file(name: str) -> str:
    """A small file for the registry's examples, in a temporary directory removed when Python exits."""
    global _example_dir
    if _example_dir is None:
        _example_dir = tempfile.TemporaryDirectory(prefix="tfnb-reader-examples-")
    path = os.path.join(_example_dir.name, name)
    if not os.path.exists(path):
        if name.endswith(".txt"):
            with open(path, "wb") as file:
                file.write(b"header\nfirst\r\nsecond\n")
        elif name.endswith(".npz"):
            np.savez(path, x=np.arange(6, dtype=np.int32).reshape(3, 2), y=np.array([0.5, 1.5, 2.5]))
        else:
            np.save(path, np.arange(6, dtype=np.int32).reshape(3, 2))
    return path


def _work(name: str):
    """A closed queue holding one file name, and the op that filled and closed it."""
    queue = FIFOQueue(1, [dtypes.string])
    with get_default_graph().control_dependencies([queue.enqueue(_example_file(name))]):
        return queue, queue.close()


def _read_line(then):
    """The key and line that a TextLineReader reads first, and `then(reader)` evaluated after the read."""
    queue, closed = _work("lines.txt")
    reader = TextLineReader(skip_header_lines=1)
    with get_default_graph().control_dependencies([closed]):
        key, value = reader.read(queue)
    with get_default_graph().control_dependencies([value.op]):
        return [stack([key, value]), then(reader)]


def _produced_after_reset(reader):
    with get_default_graph().control_dependencies([reader.reset()]):
        return reader.num_records_produced()


def _read_lines():
    queue, closed = _work("lines.txt")
    with get_default_graph().control_dependencies([closed]):
        return list(TextLineReader(skip_header_lines=1).read_up_to(queue, 5))


def _line_reference(count: int = 1):
    path = _example_file("lines.txt")
    return [np.array([f"{path}:2".encode(), b"first"], dtype=object), np.array(count, np.int64)]


def _read_rows(name: str):
    queue, closed = _work(name)
    reader = NpyReader.for_shard(_example_file(name))
    with get_default_graph().control_dependencies([closed]):
        keys, rows = reader.read_up_to(queue, 2)
    return [keys] + rows


def _rows_reference(name: str):
    path = _example_file(name)
    keys = np.array([f"{path}:0".encode(), f"{path}:1".encode()], dtype=object)
    rows = [np.arange(4, dtype=np.int32).reshape(2, 2)]
    return [keys] + rows + ([np.array([0.5, 1.5])] if name.endswith(".npz") else [])


def _csv_reference(records):
    return [np.array([1, 7], np.int32), np.array([2.5, 0.0], np.float32), np.array([b"a", b"q"], dtype=object)]


_LINE = Example(lambda: _read_line(TextLineReader.num_records_produced), _line_reference, differentiable=False)
_LINES = Example(_read_lines, lambda: [np.array([f"{_example_file('lines.txt')}:{i}".encode() for i in (2, 3)],
                                                dtype=object), np.array([b"first", b"second"], dtype=object)],
                 differentiable=False)
_ROWS = [Example(lambda name=name: _read_rows(name), lambda name=name: _rows_reference(name), differentiable=False)
         for name in ("rows.npy", "rows.npz")]
_STRING = (dtypes.string,)

register_op("TextLineReaderV2", _infer_handle, dtypes=_STRING, stateful=True, examples=[_LINE, _LINES],
            attrs={"container": "string", "shared_name": "string", "skip_header_lines": "int"})
register_op("NpyReaderV2", _infer_handle, dtypes=_STRING, stateful=True, examples=_ROWS,
            attrs={"names": "list(string)", "component_types": "list(type)", "shapes": "list(shape)",
                   "container": "string", "shared_name": "string"})
register_op("ReaderReadV2", _infer_read, dtypes=_STRING, stateful=True, examples=[_LINE])
register_op("ReaderReadUpToV2", _infer_read, dtypes=_STRING, stateful=True, examples=[_LINES])
register_op("NpyReaderReadUpTo", _infer_npy_read, dtypes=_STRING, stateful=True, examples=_ROWS,
            attrs={"component_types": "list(type)", "shapes": "list(shape)"})
register_op("ReaderNumRecordsProducedV2", _infer_counter, dtypes=_STRING, stateful=True, examples=[_LINE])
register_op("ReaderNumWorkUnitsCompletedV2", _infer_counter, dtypes=_STRING, stateful=True, examples=[
    Example(lambda: _read_line(TextLineReader.num_work_units_completed), lambda: _line_reference(0),
            differentiable=False)])
register_op("ReaderResetV2", lambda op: _check_resources(op, 1) or [], dtypes=_STRING, stateful=True, examples=[
    Example(lambda: _read_line(_produced_after_reset), lambda: _line_reference(0), differentiable=False)])
register_op("DecodeCSV", _infer_decode_csv, dtypes=_STRING, examples=[
    Example(lambda r: decode_csv(r, [[0], [0.0], ["q"]]), _csv_reference,
            inputs=(np.array([b"1,2.5,a", b'7,,""'], dtype=object),), differentiable=False),
    Example(lambda r: decode_csv(r, [[0], [0.0], ["q"]], field_delim=";", select_cols=[0, 2, 3], na_value="NA"),
            _csv_reference, inputs=(np.array([b"1;x;2.5;a", b"7;y;NA;"], dtype=object),), differentiable=False)],
            attrs={"OUT_TYPE": "list(type)", "field_delim": "string", "use_quote_delim": "bool", "na_value": "string",
                   "select_cols": "list(int)"})
not_differentiable("TextLineReaderV2", "NpyReaderV2", "ReaderReadV2", "ReaderReadUpToV2", "NpyReaderReadUpTo",
                   "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2", "DecodeCSV")


# -- readers --------------------------------------------------------------------------------------------


def _queue_ref(queue) -> Tensor:
    return queue.queue_ref if isinstance(queue, QueueBase) else queue


class ReaderBase:
    """A reader: a resource that reads records from the files a queue names, keeping its place across steps."""

    def __init__(self, reader_ref: Tensor, supports_serialize: bool = False) -> None:
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self) -> Tensor:
        """The handle tensor that every op of this reader takes as input."""
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        return self._supports_serialize

    def read(self, queue, name: str | None = None) -> tuple[Tensor, Tensor]:
        """The next record and its key, as string scalars; takes the next file from `queue` when one ends."""
        op = self._op("ReaderReadV2", (self._reader_ref, _queue_ref(queue)), None, name)
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name: str | None = None) -> tuple[Tensor, Tensor]:
        """Up to `num_records` (keys, records), across files; fewer only when `queue` is closed and empty."""
        count = convert_to_tensor(num_records, dtype=dtypes.int64)
        op = self._op("ReaderReadUpToV2", (self._reader_ref, _queue_ref(queue), count), None, name)
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name: str | None = None) -> Tensor:
        """An int64 scalar: how many records this reader has produced."""
        return self._op("ReaderNumRecordsProducedV2", (self._reader_ref,), None, name).outputs[0]

    def num_work_units_completed(self, name: str | None = None) -> Tensor:
        """An int64 scalar: how many files this reader has finished."""
        return self._op("ReaderNumWorkUnitsCompletedV2", (self._reader_ref,), None, name).outputs[0]

    def reset(self, name: str | None = None) -> Operation:
        """An op returning the reader to its initial state (no file open, counts zero)."""
        return self._op("ReaderResetV2", (self._reader_ref,), None, name)

    @staticmethod
    def _op(op_type: str, inputs, attrs, name) -> Operation:
        return get_default_graph().create_op(op_type, inputs, attrs, name)


def _reader_op(op_type: str, name: str | None, **attrs) -> Tensor:
    attrs.update(container="", shared_name="")
    return get_default_graph().create_op(op_type, (), attrs, name).outputs[0]


class TextLineReader(ReaderBase):
    """A reader whose records are the lines of text files (without '\\n' or '\\r\\n'); keys are 'file:line'."""

    def __init__(self, skip_header_lines: int | None = None, name: str | None = None) -> None:
        super().__init__(_reader_op("TextLineReaderV2", name, skip_header_lines=int(skip_header_lines or 0)))


class NpyReader(ReaderBase):
    """A reader whose records are the rows of .npy shards, or of the named arrays of .npz shards (tfnb only).

    Every shard must hold arrays of the given dtypes and row shapes; keys are 'file:row'.
    """

    def __init__(self, dtypes, shapes, names=None, name: str | None = None) -> None:
        self._types = tuple(_as_type_list(dtypes))
        self._shapes = tuple(as_shape(s) for s in shapes)
        self._names = tuple(names or ())
        if len(self._shapes) != len(self._types) or (self._names and len(self._names) != len(self._types)):
            raise ValueError("NpyReader needs one shape (and, for .npz shards, one name) per dtype")
        super().__init__(_reader_op("NpyReaderV2", name, names=self._names, component_types=self._types,
                                    shapes=self._shapes))

    @classmethod
    def for_shard(cls, path: str, name: str | None = None) -> NpyReader:
        """A reader for shards like the one at `path` (same array names, dtypes and row shapes)."""
        names, types, shapes = shard_signature(path)
        return cls(types, shapes, names or None, name)

    @property
    def names(self) -> list[str] | None:
        """The array names of .npz shards (None for .npy shards)."""
        return list(self._names) or None

    def read(self, queue, name: str | None = None):
        """The next row (a tensor, or a list for .npz shards) and its key."""
        keys, rows = self.read_up_to(queue, 1, name)
        return keys[0], [r[0] for r in rows]

    def read_up_to(self, queue, num_records, name: str | None = None):
        """Up to `num_records` keys and rows (a list of tensors, one per array), across shards."""
        count = convert_to_tensor(num_records, dtype=dtypes.int64)
        attrs = {"component_types": self._types, "shapes": self._shapes}
        op = self._op("NpyReaderReadUpTo", (self._reader_ref, _queue_ref(queue), count), attrs, name)
        return op.outputs[0], list(op.outputs[1:])


def shard_signature(path: str) -> tuple[tuple, tuple, tuple]:
    """(array names, dtypes, row shapes) of a .npy shard (no names) or .npz shard (names sorted)."""
    arrays = load_shard(path)
    named = arrays if isinstance(arrays, dict) else {"": arrays}
    names = sorted(named)
    for key in names:
        if named[key].ndim == 0:
            raise ValueError(f"{path}: array '{key}' is a scalar; a shard holds rows (an array of rank 1 or more)")
    types = tuple(dtypes.as_dtype(named[k].dtype) for k in names)
    shapes = tuple(TensorShape(named[k].shape[1:]) for k in names)
    return (tuple(names) if isinstance(arrays, dict) else ()), types, shapes


class NpyShardReader:
    """Batches of rows read from .npy or .npz shards by queue-runner threads (tfnb only).

    `batch` is a tensor (.npy shards) or a dict of tensors by array name (.npz shards), dequeued
    `batch_size` rows at a time; the last batch of the last epoch may be smaller. Files come from a
    glob pattern (sorted) or a list; the first one fixes the dtypes and row shapes. Start the
    threads with `tf.train.start_queue_runners`; with `num_epochs`, run
    `tf.local_variables_initializer()` first. Shuffling shuffles the file order and, through a
    RandomShuffleQueue of `capacity` rows keeping `min_after_dequeue`, the rows.
    """

    def __init__(self, file_pattern_or_list, batch_size: int, shuffle: bool = False, seed: int | None = None,
                 num_epochs: int | None = None, capacity: int | None = None, min_after_dequeue: int | None = None,
                 num_threads: int = 1, allow_smaller_final_batch: bool = True, name: str = "npy_shard_reader") -> None:
        self.files = _matching_files(file_pattern_or_list)
        capacity = capacity or 8 * batch_size
        with name_scope(name):
            self.filename_queue = string_input_producer(self.files, num_epochs=num_epochs, shuffle=shuffle, seed=seed)
            self.reader = NpyReader.for_shard(self.files[0])
            _, rows = self.reader.read_up_to(self.filename_queue, batch_size)
            names = self.reader.names
            tensors = dict(zip(names, rows)) if names else rows
            if shuffle:
                after = capacity // 2 if min_after_dequeue is None else min_after_dequeue
                batched = shuffle_batch(tensors, batch_size, capacity, after, num_threads, seed, enqueue_many=True,
                                        allow_smaller_final_batch=allow_smaller_final_batch)
            else:
                batched = batch(tensors, batch_size, num_threads, capacity, enqueue_many=True,
                                allow_smaller_final_batch=allow_smaller_final_batch)
        self.batch = batched


def _matching_files(file_pattern_or_list) -> list[str]:
    if isinstance(file_pattern_or_list, (str, os.PathLike)):
        pattern = os.fspath(file_pattern_or_list)
        files = sorted(glob.glob(pattern))
        if not files:
            raise NotFoundError(None, None, f"No files match {pattern}")
        return files
    files = [os.fspath(f) for f in file_pattern_or_list]
    if not files:
        raise ValueError("NpyShardReader needs at least one file")
    return files


# -- CSV ------------------------------------------------------------------------------------------------


def decode_csv(records, record_defaults, field_delim: str = ",", use_quote_delim: bool = True,
               name: str | None = None, na_value: str = "", select_cols=None) -> list[Tensor]:
    """Parses CSV `records` (strings) into one tensor per column, typed by `record_defaults`.

    An empty default ([]) makes its column required. Errors name the record; for lines read by a
    TextLineReader they also name the file and line (tfnb only).
    """
    if len(field_delim) != 1:
        raise ValueError(f"field_delim should be only one character, got {field_delim!r}")
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if any(b <= a for a, b in zip(select_cols, select_cols[1:])) or (select_cols and select_cols[0] < 0):
            raise ValueError("select_cols is not strictly increasing or has a negative index")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    records = convert_to_tensor(records, dtype=dtypes.string)
    defaults = [_default(d, i) for i, d in enumerate(record_defaults)]
    attrs = {"OUT_TYPE": tuple(d.dtype for d in defaults), "field_delim": field_delim,
             "use_quote_delim": bool(use_quote_delim), "na_value": na_value, "select_cols": tuple(select_cols or ())}
    return list(get_default_graph().create_op("DecodeCSV", (records, *defaults), attrs, name).outputs)


def _default(value, index: int) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (list, tuple)) and not value:
        return constant([], dtypes.float32, name=f"record_default_{index}")
    return convert_to_tensor(value, name=f"record_default_{index}")
