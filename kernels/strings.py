"""Kernels of string ops: StringToNumber, parsing as TF does."""

from __future__ import annotations

import functools
import re

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.registry import kernel

# What TF's StringToNumber accepts, ASCII only, with surrounding spaces: decimal or hexadecimal, inf and nan for
# floats; an optional sign and decimal digits for integers.
_SPACE = r"[ \t\n\v\f\r]*"
_FLOAT = re.compile(_SPACE + r"([+-]?)(?:([0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|"
                    r"inf|infinity|nan)|0[xX]([0-9a-fA-F]+))" + _SPACE, re.IGNORECASE)
_INTEGER = re.compile(_SPACE + r"[+-]?[0-9]+" + _SPACE)


def _fail(text: str):
    raise InvalidArgumentError(None, None, f"StringToNumberOp could not correctly convert string: {text}")


def _parse_float(text: str) -> float:
    match = _FLOAT.fullmatch(text)
    if match is None:
        _fail(text)
    sign, decimal, hexadecimal = match.groups()
    magnitude = float(decimal) if decimal is not None else float(int(hexadecimal, 16))
    return -magnitude if sign == "-" else magnitude


def _parse_integer(text: str, info: np.iinfo) -> int:
    if _INTEGER.fullmatch(text) is None:
        _fail(text)
    value = int(text)
    if not info.min <= value <= info.max:
        _fail(text)
    return value


@kernel("StringToNumber", fresh_output=True)
def string_to_number(node):
    # Strings live on the host as NumPy object arrays whatever the device; the numbers go to the device.
    xp, np_dtype = node.xp, node.attrs["out_type"].np_dtype
    parse = functools.partial(_parse_integer, info=np.iinfo(np_dtype)) if np_dtype.kind == "i" else _parse_float

    def run(strings):
        texts = [s.decode("utf-8", "replace") if isinstance(s, bytes) else str(s) for s in strings.reshape(-1)]
        with np.errstate(over="ignore"):  # a float too large for float32 is inf, as in TF
            numbers = np.array([parse(text) for text in texts], dtype=np.float64 if np_dtype.kind == "f" else object)
            return xp.asarray(numbers.astype(np_dtype).reshape(strings.shape))
    return run
