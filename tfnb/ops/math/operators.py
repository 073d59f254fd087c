"""The Tensor operators (`+`, `*`, `@`, `<`, `&`, `-x`, ...), installed on Tensor when tfnb is imported.

As in TF1: binary operators convert a Python operand to the tensor's dtype and name their op in
lower case ("add", "sub"); `==` and `!=` stay identity comparisons so tensors can be dict keys.
Indexing (`tensor[...]`) is installed with the strided slices, in tfnb/ops/array/slicing.py.
"""

from __future__ import annotations

from tfnb.framework.tensor import Tensor
from tfnb.ops.math.arithmetic import add, floordiv, floormod, multiply, subtract, truediv
from tfnb.ops.math.arithmetic import pow as power
from tfnb.ops.math.comparison import (
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
)
from tfnb.ops.math.matmul import matmul
from tfnb.ops.math.unary import abs as absolute
from tfnb.ops.math.unary import negative

_OPERATORS = {
    "__add__": lambda x, y: add(x, y, name="add"),
    "__radd__": lambda y, x: add(x, y, name="add"),
    "__sub__": lambda x, y: subtract(x, y, name="sub"),
    "__rsub__": lambda y, x: subtract(x, y, name="sub"),
    "__mul__": lambda x, y: multiply(x, y, name="mul"),
    "__rmul__": lambda y, x: multiply(x, y, name="mul"),
    "__truediv__": lambda x, y: truediv(x, y),
    "__rtruediv__": lambda y, x: truediv(x, y),
    "__floordiv__": lambda x, y: floordiv(x, y),
    "__rfloordiv__": lambda y, x: floordiv(x, y),
    "__mod__": lambda x, y: floormod(x, y, name="mod"),
    "__rmod__": lambda y, x: floormod(x, y, name="mod"),
    "__pow__": lambda x, y: power(x, y, name="pow"),
    "__rpow__": lambda y, x: power(x, y, name="pow"),
    "__matmul__": lambda x, y: matmul(x, y, name="matmul"),
    "__rmatmul__": lambda y, x: matmul(x, y, name="matmul"),
    "__lt__": lambda x, y: less(x, y),
    "__le__": lambda x, y: less_equal(x, y),
    "__gt__": lambda x, y: greater(x, y),
    "__ge__": lambda x, y: greater_equal(x, y),
    "__and__": lambda x, y: logical_and(x, y, name="and"),
    "__rand__": lambda y, x: logical_and(x, y, name="and"),
    "__or__": lambda x, y: logical_or(x, y, name="or"),
    "__ror__": lambda y, x: logical_or(x, y, name="or"),
    "__xor__": lambda x, y: logical_xor(x, y, name="xor"),
    "__rxor__": lambda y, x: logical_xor(x, y, name="xor"),
    "__neg__": lambda x: negative(x),
    "__abs__": lambda x: absolute(x),
    "__invert__": lambda x: logical_not(x),
}
for _name, _fn in _OPERATORS.items():
    Tensor._override_operator(_name, _fn)
