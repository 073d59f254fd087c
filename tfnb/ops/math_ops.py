"""TF's math_ops module: the public names of the math op families in tfnb/ops/math/, one module each.

Importing it also installs the Tensor operators (tfnb/ops/math/operators.py).
"""

from tfnb.ops.math import operators  # noqa: F401  (installs the Tensor operators)
from tfnb.ops.math.arithmetic import (
    accumulate_n,
    add,
    add_n,
    clip_by_value,
    div,
    divide,
    floordiv,
    floormod,
    maximum,
    minimum,
    mod,
    multiply,
    pow,  # noqa: A004
    realdiv,
    squared_difference,
    subtract,
    truediv,
    truncatediv,
    truncatemod,
)
from tfnb.ops.math.cast import cast, to_double, to_float, to_int32, to_int64
from tfnb.ops.math.comparison import (
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    not_equal,
)
from tfnb.ops.math.matmul import matmul
from tfnb.ops.math.reduce_sum import reduce_sum
from tfnb.ops.math.reductions import (
    arg_max,
    arg_min,
    argmax,
    argmin,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
)
from tfnb.ops.math.scans import cumprod, cumsum
from tfnb.ops.math.select import where, where_v2
from tfnb.ops.math.unary import (
    abs,  # noqa: A004
    ceil,
    conj,
    cos,
    exp,
    expm1,
    floor,
    is_finite,
    is_inf,
    is_nan,
    log,
    log1p,
    negative,
    reciprocal,
    round,  # noqa: A004
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    tan,
    tanh,
)

__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "realdiv", "div", "floordiv", "floormod", "mod",
    "truncatediv", "truncatemod", "pow", "maximum", "minimum", "squared_difference",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "negative", "abs", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "sin", "cos", "tan", "tanh", "sigmoid",
    "floor", "ceil", "round", "sign", "reciprocal", "is_nan", "is_inf", "is_finite", "expm1", "conj",
    "cast", "to_float", "to_double", "to_int32", "to_int64", "where", "where_v2", "clip_by_value",
    "add_n", "accumulate_n",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any", "reduce_all",
    "reduce_logsumexp", "argmax", "argmin", "arg_max", "arg_min", "cumsum", "cumprod", "matmul",
]
