"""Kernels of the checks a graph makes of its values: CheckNumerics and Assert."""

from __future__ import annotations

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.host import to_host
from tfnb.kernels.registry import kernel


@kernel("CheckNumerics")
def check_numerics(node):
    xp, message = node.xp, node.attrs["message"]

    def check(x):
        if bool(xp.isfinite(x).all()):
            return x
        found = [kind for kind, test in (("Inf", xp.isinf), ("NaN", xp.isnan)) if bool(test(x).any())]
        raise InvalidArgumentError(None, None, f"{message} : Tensor had {' and '.join(found)} values")
    return check


@kernel("Assert")
def assert_(node):
    summarize = node.attrs["summarize"]

    def check(condition, *data):
        if condition.ndim != 0:
            raise InvalidArgumentError(None, None, f"In[0] should be a scalar: {list(condition.shape)}")
        if not bool(condition):
            shown = " ".join(f"[{summarize_value(np.asarray(to_host(value)), summarize)}]" for value in data)
            raise InvalidArgumentError(None, None, f"assertion failed: {shown}")
    return check


def summarize_value(array: np.ndarray, limit: int) -> str:
    """TF's summary of a tensor in an Assert message: its first `limit` elements (all if negative), rows bracketed."""
    limit = array.size if limit < 0 else limit
    flat = [_element_text(item) for item in array.reshape(-1)[:limit]]
    text = " ".join(flat) if array.ndim <= 1 else _rows_text(array.shape, flat, 0)[0]
    return text + ("..." if array.size > limit else "")


def _rows_text(shape: tuple, flat: list[str], start: int) -> tuple[str, int]:
    """The block of `shape` whose first element is flat[start], as TF prints it, and where the next block starts.

    Innermost rows list their elements separated by spaces; outer rows are bracketed and run together.
    Elements past the end of `flat` are not printed: a row cut short ends in '...', rows not begun are left out.
    """
    if len(shape) == 1:
        items = flat[start:start + shape[0]]
        return " ".join(items) + ("..." if len(items) < shape[0] else ""), start + len(items)
    parts = []
    for _ in range(shape[0]):
        if start >= len(flat):
            break
        inner, start = _rows_text(shape[1:], flat, start)
        parts.append(f"[{inner}]")
    return "".join(parts), start


def _element_text(item) -> str:
    if isinstance(item, bytes):
        return item.decode("utf-8", "backslashreplace")
    if isinstance(item, np.bool_ | bool):
        return "1" if item else "0"
    if isinstance(item, np.floating):
        return _float_text(item)
    return str(item)


def _float_text(value: np.floating) -> str:
    """The shortest of TF's two precisions that reads back as the same value (6 or 9 digits for float32)."""
    short, long = (6, 9) if value.dtype.itemsize <= 4 else (15, 17)
    text = f"{value:.{short}g}"
    return text if type(value)(text) == value else f"{value:.{long}g}"
