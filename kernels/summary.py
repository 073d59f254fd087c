"""Summary kernels: values in, a serialized `Summary` protocol buffer out (a 0-d NumPy object array of bytes).

Summaries are host data whatever the device: values on a GPU are copied to NumPy first.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.summary_proto import (
    Histogram,
    histogram_value,
    parse_summary,
    scalar_value,
)
from tfnb.kernels.registry import kernel


def _host(array) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)  # CuPy's .get() copies to the host


def _text(tag) -> str:
    return tag.decode() if isinstance(tag, bytes) else str(tag)


def _serialized(data: bytes) -> np.ndarray:
    return np.array(data, dtype=object)


@kernel("ScalarSummary", fresh_output=True)
def scalar_summary(node):
    def summarize(tags, values):
        values = _host(values)
        if tags.shape != values.shape:
            raise InvalidArgumentError(None, None, f"tags and values not the same shape: {list(tags.shape)} != "
                                       f"{list(values.shape)}")
        return _serialized(b"".join(scalar_value(_text(t), float(v)) for t, v in zip(tags.flat, values.flat)))
    return summarize


@kernel("HistogramSummary", fresh_output=True)
def histogram_summary(node):
    def summarize(tag, values):
        values = _host(values).astype(np.float64)
        if not np.isfinite(values).all():
            raise InvalidArgumentError(None, None, f"Nan in summary histogram for: {node.name}")
        return _serialized(histogram_value(_text(tag[()]), Histogram.of(values)))
    return summarize


@kernel("MergeSummary", fresh_output=True)
def merge_summary(node):
    def merge(*inputs):
        summaries = [s for array in inputs for s in array.flat]
        tags = set()
        for summary in summaries:
            try:
                parsed = parse_summary(summary)
            except ValueError:
                raise InvalidArgumentError(None, None, "Could not parse one of the summary inputs") from None
            for value in parsed:
                if value.tag and value.tag in tags:
                    raise InvalidArgumentError(None, None, f"Duplicate tag {value.tag} found in summary inputs")
                tags.add(value.tag)
        # A Summary is a sequence of `value` fields, so concatenated Summaries are their merge.
        return _serialized(b"".join(summaries))
    return merge
