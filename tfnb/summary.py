"""tf.summary: ops that serialize `Summary` protocol buffers each step, and writers of event files.

`sess.run` of a summary op returns the Summary's bytes; `FileWriter.add_summary` writes them for
TensorBoard, and `tfnb.visualizer.Dashboard.add_summary` plots them live in the notebook.
"""

from __future__ import annotations

import contextlib
import re
import threading

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import (
    GraphKeys,
    add_to_collections,
    get_collection,
    get_default_graph,
    name_scope,
)
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.io.event_file import FileWriter
from tfnb.ops.array_ops import reshape
from tfnb.ops.constant_op import convert_to_tensor

__all__ = ["scalar", "histogram", "merge", "merge_all", "FileWriter", "FileWriterCache"]

_SCALAR = TensorShape([])


def _create(op_type: str, inputs, name: str) -> Tensor:
    return get_default_graph().create_op(op_type, inputs, None, name).outputs[0]


def _clean_tag(name: str | None) -> str | None:
    """`name` with characters TensorBoard does not allow in tags replaced by '_' and no leading '/'."""
    if name is None:
        return None
    return re.sub(r"[^-/\w\.]", "_", name).lstrip("/")


@contextlib.contextmanager
def _summary_scope(name: str, family: str | None, values):
    """Yields (tag, scope) as TF1 does: the tag is the unique scope name, with `family/` in front if given."""
    name, family = _clean_tag(name), _clean_tag(family)
    with name_scope(name if family is None else f"{family}/{name}", values=values) as scope:
        yield (scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"), scope


def _collect(summary: Tensor, collections, default: list[str]) -> Tensor:
    add_to_collections(default if collections is None else collections, summary)
    return summary


def scalar(name: str, tensor, collections=None, family: str | None = None) -> Tensor:
    """A summary of one real number: a scalar string tensor holding a serialized Summary."""
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        summary = _create("ScalarSummary", [convert_to_tensor(tag, name="tags"), convert_to_tensor(tensor)], scope)
    return _collect(summary, collections, [GraphKeys.SUMMARIES])


def histogram(name: str, values, collections=None, family: str | None = None) -> Tensor:
    """A summary of the distribution of `values` in TF's exponential buckets; non-finite values fail the run."""
    with _summary_scope(name, family, [values]) as (tag, scope):
        summary = _create("HistogramSummary", [convert_to_tensor(tag, name="tag"), convert_to_tensor(values)], scope)
    return _collect(summary, collections, [GraphKeys.SUMMARIES])


def merge(inputs, collections=None, name: str | None = None) -> Tensor:
    """One Summary holding every value of `inputs` (string tensors of Summaries); tags must be distinct."""
    with name_scope(name, "Merge", inputs):
        summary = _create("MergeSummary", [convert_to_tensor(s) for s in inputs], name or "MergeSummary")
    return _collect(summary, collections, [])


def merge_all(key: str = GraphKeys.SUMMARIES, scope: str | None = None, name: str | None = None) -> Tensor | None:
    """A merge of every summary in collection `key` of the default graph, or None if there are none."""
    summaries = get_collection(key, scope)
    return merge(summaries, name=name) if summaries else None


class FileWriterCache:
    """One FileWriter per log directory, shared by everything that writes there."""

    _writers: dict[str, FileWriter] = {}
    _lock = threading.Lock()

    @classmethod
    def get(cls, logdir: str) -> FileWriter:
        """The cached FileWriter for `logdir`, created (with the default graph) on first use."""
        with cls._lock:
            if logdir not in cls._writers:
                cls._writers[logdir] = FileWriter(logdir, graph=get_default_graph())
            return cls._writers[logdir]

    @classmethod
    def clear(cls) -> None:
        """Closes and forgets every cached FileWriter."""
        with cls._lock:
            for writer in cls._writers.values():
                writer.close()
            cls._writers.clear()


# -- registry rows --------------------------------------------------------------------------------


def _infer_scalar_summary(op):
    tags, values = op.inputs
    if tags.dtype is not dtypes.string:
        raise TypeError(f"ScalarSummary tags must be string, got {tags.dtype.name}")
    if values.dtype not in dtypes.REAL:
        raise TypeError(f"ScalarSummary values must be a real number type, got {values.dtype.name}")
    if not tags.shape.is_compatible_with(values.shape):
        raise ValueError(f"tags and values not the same shape: {tags.shape} != {values.shape}")
    return [(dtypes.string, _SCALAR)]


def _infer_histogram_summary(op):
    tag, values = op.inputs
    if tag.dtype is not dtypes.string or not tag.shape.is_compatible_with(_SCALAR):
        raise ValueError(f"HistogramSummary tag must be a scalar string, got {tag.dtype.name} {tag.shape}")
    if values.dtype not in dtypes.REAL:
        raise TypeError(f"HistogramSummary values must be a real number type, got {values.dtype.name}")
    return [(dtypes.string, _SCALAR)]


def _infer_merge_summary(op):
    if not op.inputs:
        raise ValueError("MergeSummary needs at least one input")
    for tensor in op.inputs:
        if tensor.dtype is not dtypes.string:
            raise TypeError(f"MergeSummary inputs must be string, got {tensor.dtype.name}")
    return [(dtypes.string, _SCALAR)]


def _one(summary: Tensor) -> Tensor:
    # A fetched 0-d string is bytes, which the generic op test cannot check as tf.string; a 1-vector it can.
    return reshape(summary, [1])


def _expected(hex_text: str) -> np.ndarray:
    """The serialized Summary in `hex_text` as a string vector of one (what `_one` makes of it)."""
    return np.array([bytes.fromhex(hex_text)], dtype=object)


_LOSS_TAG = np.array(b"loss", dtype=object)
_W_TAG = np.array(b"w", dtype=object)
_W_VALUES = np.array([1.0, 2.0, 2.0, -0.5, 0.0], np.float32)
# Serialized by TensorFlow 2.21's tf.compat.v1.summary ops for the same inputs.
_LOSS_HALF = "0a0b0a046c6f7373150000003f"
_W_HISTOGRAM = (
    "0ac7010a01772ac10109000000000000e0bf1100000000000000401900000000000014402100000000000012402900000000"
    "008022403248b03125ee8091e0bffae55a25d31fdebf000000000000000011ea2d819997713d08996919155aed3f2b14facd"
    "be24f03fdc94cd2e8d75ff3fe011f10c744d0140ffffffffffffef7f3a480000000000000000000000000000f03f00000000"
    "00000000000000000000f03f0000000000000000000000000000f03f000000000000000000000000000000400000000000000000")

register_op("ScalarSummary", _infer_scalar_summary, dtypes=dtypes.REAL, examples=[
    Example(lambda tag, x: _one(_create("ScalarSummary", [tag, x], "loss")), lambda tag, x: _expected(_LOSS_HALF),
            inputs=(_LOSS_TAG, np.array(0.5, np.float32)), dtypes=(dtypes.float32,), differentiable=False),
    Example(lambda tag, x: _one(_create("ScalarSummary", [tag, x], "loss")), lambda tag, x: _expected(_LOSS_HALF),
            inputs=(_LOSS_TAG, np.array(0.5, np.float64)), dtypes=(dtypes.float64,), differentiable=False),
])
register_op("HistogramSummary", _infer_histogram_summary, dtypes=dtypes.REAL, examples=[
    Example(lambda tag, x: _one(_create("HistogramSummary", [tag, x], "w")), lambda tag, x: _expected(_W_HISTOGRAM),
            inputs=(_W_TAG, _W_VALUES), dtypes=(dtypes.float32,), differentiable=False),
])
register_op("MergeSummary", _infer_merge_summary, dtypes=(dtypes.string,), examples=[
    Example(lambda a, b: _one(_create("MergeSummary", [a, b], "merged")),
            lambda a, b: _expected(_LOSS_HALF + _W_HISTOGRAM),
            inputs=(np.array(bytes.fromhex(_LOSS_HALF), dtype=object),
                    np.array(bytes.fromhex(_W_HISTOGRAM), dtype=object)),
            differentiable=False),
])
not_differentiable("ScalarSummary", "HistogramSummary", "MergeSummary")
