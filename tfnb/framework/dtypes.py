"""Element types of tensors, with TensorFlow's names (`tf.float32`, `tf.string`, ...)."""

from __future__ import annotations

import numpy as np


class DType:
    """A tensor element type: a name, a NumPy dtype, and its kind."""

    __slots__ = ("name", "np_dtype", "_kind")

    def __init__(self, name: str, np_dtype: np.dtype | None, kind: str) -> None:
        self.name = name
        self.np_dtype = np_dtype
        self._kind = kind

    @property
    def as_numpy_dtype(self) -> type:
        """The NumPy scalar type (`np.float32` for `tf.float32`; `object` for string and resource)."""
        return self.np_dtype.type if self._kind not in ("S", "R") else object

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def real_dtype(self) -> DType:
        """The dtype of the real part: float32 for complex64, float64 for complex128, else itself."""
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    @property
    def is_floating(self) -> bool:
        return self._kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._kind in ("i", "u")

    @property
    def is_unsigned(self) -> bool:
        return self._kind == "u"

    @property
    def is_complex(self) -> bool:
        return self._kind == "c"

    @property
    def is_bool(self) -> bool:
        return self._kind == "b"

    @property
    def is_numeric(self) -> bool:
        return self._kind in ("i", "u", "f", "c")

    @property
    def size(self) -> int:
        """Bytes per element (0 for string and resource)."""
        return self.np_dtype.itemsize if self.np_dtype is not None and self._kind != "S" else 0

    @property
    def min(self):
        return _limits(self).min

    @property
    def max(self):
        return _limits(self).max

    def is_compatible_with(self, other) -> bool:
        return self is as_dtype(other)

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __str__(self) -> str:
        return f"<dtype: '{self.name}'>"

    def __reduce__(self):
        return as_dtype, (self.name,)


def _limits(dtype: DType):
    if dtype.is_floating:
        return np.finfo(dtype.np_dtype)
    if dtype.is_integer:
        return np.iinfo(dtype.np_dtype)
    raise TypeError(f"{dtype.name} has no min or max")


bool_ = DType("bool", np.dtype(np.bool_), "b")
int8 = DType("int8", np.dtype(np.int8), "i")
int16 = DType("int16", np.dtype(np.int16), "i")
int32 = DType("int32", np.dtype(np.int32), "i")
int64 = DType("int64", np.dtype(np.int64), "i")
uint8 = DType("uint8", np.dtype(np.uint8), "u")
uint16 = DType("uint16", np.dtype(np.uint16), "u")
float16 = DType("float16", np.dtype(np.float16), "f")
float32 = DType("float32", np.dtype(np.float32), "f")
float64 = DType("float64", np.dtype(np.float64), "f")
complex64 = DType("complex64", np.dtype(np.complex64), "c")
complex128 = DType("complex128", np.dtype(np.complex128), "c")
string = DType("string", np.dtype(object), "S")
resource = DType("resource", np.dtype(object), "R")
# A dataset (tf.data) flowing between dataset ops; like a resource, its value is a Python object. Not in ALL:
# no op computes on variants but the dataset ops.
variant = DType("variant", np.dtype(object), "R")

half = float16
double = float64

ALL = (bool_, int8, int16, int32, int64, uint8, uint16, float16, float32, float64,
       complex64, complex128, string, resource)
FLOATS = (float16, float32, float64)
COMPLEX = (complex64, complex128)
INTEGERS = (int8, int16, int32, int64, uint8, uint16)
INDEX = (int32, int64)
REAL = INTEGERS + FLOATS
NUMERIC = REAL + COMPLEX
ARRAY = NUMERIC + (bool_,)

_BY_NAME = {d.name: d for d in ALL + (variant,)}
_BY_NAME.update({"bool_": bool_, "half": float16, "double": float64, "float": float32,
                 "int": int32, "bytes": string, "str": string})
_BY_NP = {d.np_dtype: d for d in ALL if d not in (string, resource)}


def as_dtype(value) -> DType:
    """Converts a DType, a name ('float32'), a NumPy dtype or a Python type to a DType."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value in (bytes, str):
        return string
    if value is bool:
        return bool_
    if value is int:
        return int32
    if value is float:
        return float32
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise TypeError(f"Cannot convert {value!r} to a tfnb dtype") from None
    if np_dtype.kind in ("S", "U", "O"):
        return string
    if np_dtype in _BY_NP:
        return _BY_NP[np_dtype]
    raise TypeError(f"tfnb has no dtype for NumPy dtype {np_dtype}")


def dtype_of_value(value) -> DType:
    """The dtype TF would give a Python or NumPy value (Python float -> float32, int -> int32)."""
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype.kind == "i" and value.dtype.itemsize == 8 and not isinstance(value, np.ndarray):
            return int64
        return as_dtype(value.dtype)
    array = np.asarray(value)
    kind = array.dtype.kind
    if kind == "f":
        return float32
    if kind in ("i", "u"):
        inside_int32 = array.size == 0 or (array.min() >= -2**31 and array.max() < 2**31)
        return int32 if inside_int32 else int64
    if kind == "c":
        return complex128
    return as_dtype(array.dtype)


def to_numpy(value, dtype: DType | None = None) -> np.ndarray:
    """`value` as a NumPy array of `dtype` (or TF's default dtype for it), refusing lossy conversions."""
    target = dtype or dtype_of_value(value)
    if target is string:
        array = np.asarray(value, dtype=object)
        return np.vectorize(lambda s: s.encode() if isinstance(s, str) else bytes(s), otypes=[object])(array) \
            if array.size else array
    array = np.asarray(value)
    if array.dtype.kind in ("U", "S", "O") and array.size and isinstance(array.flat[0], (str, bytes)):
        raise TypeError(f"Expected {target.name}, got {value!r} of type '{type(value).__name__}' instead.")
    if dtype is not None and not isinstance(value, np.ndarray | np.generic):
        if array.size and (target.is_integer and array.dtype.kind == "f" or target.is_bool and array.dtype.kind != "b"):
            raise TypeError(f"Expected {target.name}, got {value!r} of type '{type(value).__name__}' instead.")
        if target.is_integer and array.size and (array.min() < target.min or array.max() > target.max):
            raise TypeError(f"Value {value!r} is out of range for dtype {target.name}")
    return array.astype(target.np_dtype, copy=False)
