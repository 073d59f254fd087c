"""tf.summary: ops that serialize `Summary` protocol buffers each step, and writers of event files.

`sess.run` of a summary op returns the Summary's bytes; `FileWriter.add_summary` writes them for
TensorBoard, and `tfnb.visualizer.Dashboard.add_summary` plots them live in the notebook. The ops
themselves (their rows and constructors) are in tfnb/ops/summary_ops.py.
"""

from __future__ import annotations

import contextlib
import re
import threading

from tfnb.framework.graph import (
    GraphKeys,
    add_to_collections,
    get_collection,
    get_default_graph,
    name_scope,
)
from tfnb.framework.tensor import Tensor
from tfnb.io.event_file import FileWriter
from tfnb.ops.summary_ops import histogram_summary, merge_summary, scalar_summary

__all__ = ["scalar", "histogram", "merge", "merge_all", "FileWriter", "FileWriterCache"]


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
        summary = scalar_summary(tag, tensor, name=scope)
    return _collect(summary, collections, [GraphKeys.SUMMARIES])


def histogram(name: str, values, collections=None, family: str | None = None) -> Tensor:
    """A summary of the distribution of `values` in TF's exponential buckets; non-finite values fail the run."""
    with _summary_scope(name, family, [values]) as (tag, scope):
        summary = histogram_summary(tag, values, name=scope)
    return _collect(summary, collections, [GraphKeys.SUMMARIES])


def merge(inputs, collections=None, name: str | None = None) -> Tensor:
    """One Summary holding every value of `inputs` (string tensors of Summaries); tags must be distinct."""
    with name_scope(name, "Merge", inputs):
        summary = merge_summary(inputs, name=name or "MergeSummary")
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
