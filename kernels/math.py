"""Elementwise math, reduction, scan and matmul kernels, written once against the array namespace `xp`.

Where the array namespace's function already returns the inferred dtype, the kernel *is* that
function (`_ufunc("Pow", lambda xp: xp.power)`): no wrapper on the per-call path.
Every kernel here returns arrays it has just allocated (ufuncs, reductions and products do), or that
only it holds (a float MatMul's reused output), so each is registered `fresh_output` (kernels/registry.py).
"""

from __future__ import annotations

import operator

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.conv.scratch import Scratch
from tfnb.kernels.long_rows import add_channels_into, relu_into
from tfnb.kernels.products import matmul_into
from tfnb.kernels.registry import Epilogue, Update, kernel, simple_kernel
from tfnb.kernels.training import adam_by_product, descend_by_product, momentum_by_product

# -- elementwise, bound directly ------------------------------------------------------------------

def _scalar_fast(op_type: str, python_operator, ufunc_name: str) -> None:
    """Registers a binary kernel: Python's operator when the output is 0-d, else the ufunc itself.

    On NumPy scalars (the values of 0-d computations, e.g. a loop counter) operators are ten times
    faster than the ufunc; on arrays calling the ufunc directly saves the operator's dispatch.
    """
    def factory(node):
        if node.output_shapes and node.output_shapes[0] == ():
            return python_operator
        return getattr(node.xp, ufunc_name)
    kernel(op_type, fresh_output=True, elementwise=True)(factory)


def _ufunc(op_type: str, fn_of_xp) -> None:
    """Registers a kernel that is one of the namespace's ufuncs (or `where`): an elementwise kernel."""
    simple_kernel(op_type, fn_of_xp, fresh_output=True, elementwise=True)


_scalar_fast("Add", operator.add, "add")
_scalar_fast("Sub", operator.sub, "subtract")
_scalar_fast("Mul", operator.mul, "multiply")
_ufunc("Pow", lambda xp: xp.power)
_ufunc("Maximum", lambda xp: xp.maximum)
_ufunc("Minimum", lambda xp: xp.minimum)
_scalar_fast("Equal", operator.eq, "equal")
_scalar_fast("NotEqual", operator.ne, "not_equal")
_scalar_fast("Less", operator.lt, "less")
_scalar_fast("LessEqual", operator.le, "less_equal")
_scalar_fast("Greater", operator.gt, "greater")
_scalar_fast("GreaterEqual", operator.ge, "greater_equal")
_ufunc("LogicalAnd", lambda xp: xp.logical_and)
_ufunc("LogicalOr", lambda xp: xp.logical_or)
_ufunc("LogicalNot", lambda xp: xp.logical_not)
_ufunc("Neg", lambda xp: xp.negative)
_ufunc("Abs", lambda xp: xp.abs)
_ufunc("ComplexAbs", lambda xp: xp.abs)
_ufunc("Exp", lambda xp: xp.exp)
_ufunc("Log", lambda xp: xp.log)
_ufunc("Log1p", lambda xp: xp.log1p)
_ufunc("Sqrt", lambda xp: xp.sqrt)
_ufunc("Square", lambda xp: xp.square)
_ufunc("Sin", lambda xp: xp.sin)
_ufunc("Cos", lambda xp: xp.cos)
_ufunc("Tan", lambda xp: xp.tan)
_ufunc("Tanh", lambda xp: xp.tanh)
_ufunc("Floor", lambda xp: xp.floor)
_ufunc("Ceil", lambda xp: xp.ceil)
_ufunc("Round", lambda xp: xp.rint)  # rint rounds halves to even, as TF's Round
_ufunc("Sign", lambda xp: xp.sign)
_ufunc("Reciprocal", lambda xp: xp.reciprocal)
_ufunc("IsNan", lambda xp: xp.isnan)
_ufunc("IsInf", lambda xp: xp.isinf)
_ufunc("IsFinite", lambda xp: xp.isfinite)
_ufunc("Expm1", lambda xp: xp.expm1)
_ufunc("Conj", lambda xp: xp.conj)
_ufunc("SelectV2", lambda xp: xp.where)
simple_kernel("Where", lambda xp: xp.argwhere, fresh_output=True)


@kernel("Rsqrt", fresh_output=True, elementwise=True)
def rsqrt(node):
    xp = node.xp
    return lambda x: xp.reciprocal(xp.sqrt(x))


@kernel("SquaredDifference", fresh_output=True, elementwise=True)
def squared_difference(node):
    xp = node.xp
    if node.input_dtypes[0].kind == "c":
        def complex_squared_difference(x, y):
            difference = xp.subtract(x, y)
            return difference * xp.conj(difference)
        return complex_squared_difference
    return lambda x, y: xp.square(xp.subtract(x, y))


@kernel("Sigmoid", fresh_output=True, elementwise=True)
def sigmoid(node):
    xp = node.xp
    # Stable as it stands: for very negative x, exp(-x) overflows to inf and 1 / (1 + inf) is exactly 0 (the
    # session runs kernels with floating-point warnings off), never NaN; elsewhere it is accurate to the last bits.
    # Forms that avoid the overflow need a select, which costs NumPy several times more.
    if xp is not np:  # ufuncs and scalars only: a device may compile it with its neighbours (xp.fuse)
        return lambda x: 1 / (1 + xp.exp(-x))

    def into(x, out):
        """The four passes in one array: on an LSTM's gate (128x128), 0.87x the time of four fresh arrays."""
        xp.negative(x, out=out)
        xp.exp(out, out=out)
        out += 1
        return xp.reciprocal(out, out=out)

    def run(x):
        return into(x, xp.empty_like(x))

    run.inplace = lambda x: into(x, x)
    return run


@kernel("SigmoidGrad", fresh_output=True, elementwise=True)
def sigmoid_grad(node):
    xp = node.xp
    if xp is not np:
        return lambda y, dy: dy * y * (1 - y)

    def run(y, dy):
        out = xp.subtract(1, y)
        out *= y
        out *= dy
        return out

    return run


@kernel("TanhGrad", fresh_output=True, elementwise=True)
def tanh_grad(node):
    xp = node.xp
    if xp is not np:
        return lambda y, dy: dy * (1 - y * y)

    def run(y, dy):
        out = xp.multiply(y, y)
        xp.subtract(1, out, out=out)
        out *= dy
        return out

    return run


# -- division -------------------------------------------------------------------------------------


def _integer_division(fn, xp):
    """`fn(x, y)` for integers, raising InvalidArgumentError when a divisor is 0, as TF does (NumPy returns 0)."""

    def divide(x, y):
        # count_nonzero is the cheapest check: a few percent of the division, less than np.errstate on small arrays.
        if xp.count_nonzero(y) != y.size:
            raise InvalidArgumentError(None, None, "Integer division by zero")
        return fn(x, y)

    return divide


def _truncate_divide(xp):
    """Integer division rounding toward zero, as C divides: x - fmod(x, y) is an exact multiple of y."""
    return lambda x, y: (x - xp.fmod(x, y)) // y


def _is_integer(node) -> bool:
    return node.input_dtypes[0].kind in "iu"


def _floating(input_dtypes: tuple) -> bool:
    """Whether a division is elementwise on these inputs: integer division checks its divisors first."""
    return input_dtypes[0].kind not in "iu"


@kernel("RealDiv", fresh_output=True, elementwise=_floating)
def real_div(node):
    xp = node.xp
    return _integer_division(_truncate_divide(xp), xp) if _is_integer(node) else xp.true_divide


@kernel("TruncateDiv", fresh_output=True, elementwise=_floating)
def truncate_div(node):
    xp = node.xp
    if _is_integer(node):
        return _integer_division(_truncate_divide(xp), xp)
    return lambda x, y: xp.trunc(xp.true_divide(x, y))


@kernel("FloorDiv", fresh_output=True, elementwise=_floating)
def floor_div(node):
    xp = node.xp
    if _is_integer(node):
        return _integer_division(xp.floor_divide, xp)
    return lambda x, y: xp.floor(xp.true_divide(x, y))  # TF: floor(x / y); NumPy's // differs slightly


@kernel("FloorMod", fresh_output=True, elementwise=_floating)
def floor_mod(node):
    xp = node.xp
    return _integer_division(xp.remainder, xp) if _is_integer(node) else xp.remainder


@kernel("TruncateMod", fresh_output=True, elementwise=_floating)
def truncate_mod(node):
    xp = node.xp
    return _integer_division(xp.fmod, xp) if _is_integer(node) else xp.fmod


# -- cast, select, add_n --------------------------------------------------------------------------


@kernel("Cast", fresh_output=True)
def cast(node):
    source, target = node.input_dtypes[0], node.output_dtypes[0]
    if source.kind == "c" and target.kind not in "cb":
        return lambda x: x.real.astype(target)  # TF keeps the real part; NumPy would warn
    return lambda x: x.astype(target)


@kernel("Select", fresh_output=True)
def select(node):
    xp = node.xp

    def run(condition, x, y):
        if x.shape != y.shape:
            raise InvalidArgumentError(None, None, f"'then' and 'else' must have the same size, but are "
                                       f"{list(x.shape)} and {list(y.shape)}")
        if condition.shape != x.shape:
            if condition.ndim == 1 and x.ndim > 1 and condition.shape[0] == x.shape[0]:
                condition = condition.reshape(condition.shape + (1,) * (x.ndim - 1))  # picks whole rows
            elif condition.ndim != 0:
                raise InvalidArgumentError(None, None, f"condition of shape {list(condition.shape)} must be a "
                                           f"scalar, a vector of size {x.shape[:1]} or of shape {list(x.shape)}")
        return xp.where(condition, x, y)

    return run


@kernel("AddN", fresh_output=True)
def add_n(node):
    xp = node.xp
    if node.attrs["N"] == 2:
        return xp.add

    def add_all(first, *rest):
        total = xp.add(first, rest[0]) if rest else first.copy()
        for term in rest[1:]:
            total += term  # the first add made a fresh array: summing into it in place saves allocations
        return total

    return add_all


# -- reductions -----------------------------------------------------------------------------------


def _axes(axes, ndim: int) -> tuple:
    """Reduction axes as NumPy takes them: distinct and non-negative (TF accepts repeats and negatives)."""
    result = set()
    for axis in axes.reshape(-1).tolist():
        if not -ndim <= axis < ndim:
            raise InvalidArgumentError(None, None, f"Invalid reduction dimension {axis} for input with {ndim} "
                                       f"dimension(s)")
        result.add(axis % ndim)
    return tuple(result)


def _axes_remembered():
    """_axes, remembering its last answer by the axes' dtype and bytes: a step's reduction reads the same axes (a
    Const's) every run, and comparing a few bytes costs less than reading them again."""
    last = (None, b"", -1, ())

    def axes_of(axes, ndim: int) -> tuple:
        nonlocal last
        data = axes.tobytes()
        if data == last[1] and ndim == last[2] and axes.dtype == last[0]:
            return last[3]
        result = _axes(axes, ndim)
        last = (axes.dtype, data, ndim, result)  # one assignment: a run in another thread reads a consistent entry
        return result

    return axes_of


def _reducer(node, ufunc, xp_function, dtype=None):
    """The kernel `(x, axes) -> reduced x`; NumPy's ufunc.reduce skips the Python wrapper of np.sum and friends."""
    reduce = ufunc.reduce if node.xp is np else xp_function
    keep, axes_of = node.attrs["keep_dims"], _axes_remembered()
    if dtype is None:
        return lambda x, axes: reduce(x, axis=axes_of(axes, x.ndim), keepdims=keep)
    return lambda x, axes: reduce(x, axis=axes_of(axes, x.ndim), dtype=dtype, keepdims=keep)


@kernel("Sum", fresh_output=True)
def reduce_sum(node):
    return _reducer(node, np.add, node.xp.sum, node.output_dtypes[0])  # dtype: NumPy would widen integers


@kernel("Prod", fresh_output=True)
def reduce_prod(node):
    return _reducer(node, np.multiply, node.xp.prod, node.output_dtypes[0])


@kernel("Any", fresh_output=True)
def reduce_any(node):
    return _reducer(node, np.logical_or, node.xp.any)


@kernel("All", fresh_output=True)
def reduce_all(node):
    return _reducer(node, np.logical_and, node.xp.all)


def _extremum(node, ufunc, xp_function, identity):
    """Max or Min; over no elements TF gives the identity (NumPy raises), e.g. -inf for Max of floats."""
    xp = node.xp
    reduce = _reducer(node, ufunc, xp_function)
    zeros = _reducer(node, np.add, xp.sum, node.output_dtypes[0])  # an empty sum has the result's shape

    def run(x, axes):
        return reduce(x, axes) if x.size else xp.full_like(zeros(x, axes), identity)

    return run


@kernel("Max", fresh_output=True)
def reduce_max(node):
    dtype = node.output_dtypes[0]
    return _extremum(node, np.maximum, node.xp.max, -np.inf if dtype.kind == "f" else np.iinfo(dtype).min)


@kernel("Min", fresh_output=True)
def reduce_min(node):
    dtype = node.output_dtypes[0]
    return _extremum(node, np.minimum, node.xp.min, np.inf if dtype.kind == "f" else np.iinfo(dtype).max)


@kernel("Mean", fresh_output=True)
def reduce_mean(node):
    xp, dtype = node.xp, node.output_dtypes[0]
    if dtype.kind in "iu":
        total = _reducer(node, np.add, xp.sum, dtype)
        truncate = _truncate_divide(xp)

        def integer_mean(x, axes):
            sums = total(x, axes)
            count = x.size // max(sums.size, 1)
            if count == 0:
                return sums
            # The sum wraps in the input dtype, as in TF; the division is exact in int64, truncating toward 0.
            return truncate(sums.astype(np.int64), count).astype(dtype)

        return integer_mean
    total = _reducer(node, np.add, xp.sum, np.float32 if dtype == np.float16 else dtype)

    def mean(x, axes):
        sums = total(x, axes)
        return (sums / (x.size // max(sums.size, 1))).astype(dtype, copy=False)  # 0 / 0 is NaN, as in TF

    return mean


def _axis(axis, ndim: int) -> int:
    """One axis as a non-negative int, checked against the input's rank."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise InvalidArgumentError(None, None, f"Expected axis in the range [{-ndim}, {ndim}), but got {axis}")
    return axis % ndim


def _arg_reduction(node, fn):
    out = node.output_dtypes[0]
    return lambda x, axis: fn(x, axis=_axis(axis, x.ndim)).astype(out, copy=False)


@kernel("ArgMax", fresh_output=True)
def arg_max(node):
    return _arg_reduction(node, node.xp.argmax)


@kernel("ArgMin", fresh_output=True)
def arg_min(node):
    return _arg_reduction(node, node.xp.argmin)


# -- scans ----------------------------------------------------------------------------------------


def _scan(node, ufunc, xp_function, identity: int):
    """Cumsum or Cumprod along an axis; exclusive shifts in the identity, reverse scans from the end."""
    xp, dtype = node.xp, node.output_dtypes[0]
    scan = ufunc.accumulate if xp is np else xp_function
    exclusive, reverse = node.attrs["exclusive"], node.attrs["reverse"]

    def run(x, axis):
        axis = _axis(axis, x.ndim)
        if reverse:
            x = xp.flip(x, axis)
        out = scan(x, axis=axis, dtype=dtype)
        if exclusive:
            shifted = xp.empty_like(out)
            before = (slice(None),) * axis
            shifted[before + (slice(0, 1),)] = identity
            shifted[before + (slice(1, None),)] = out[before + (slice(None, -1),)]
            out = shifted
        return xp.flip(out, axis) if reverse else out

    return run


@kernel("Cumsum", fresh_output=True)
def cumsum(node):
    return _scan(node, np.add, node.xp.cumsum, 0)


@kernel("Cumprod", fresh_output=True)
def cumprod(node):
    return _scan(node, np.multiply, node.xp.cumprod, 1)


# -- matmul ---------------------------------------------------------------------------------------


# A weight gradient read only by its gradient-descent, momentum or Adam update is computed into the variable
# (with_descent, with_momentum, with_adam); an input gradient of those weights is computed in the same pass over them
# (with_weight_update, with_momentum_update, with_adam_update).
@kernel("MatMul", fresh_output=True,
        epilogues=(Epilogue(("ResourceApplyGradientDescent",), "with_descent", input=2),
                   Epilogue(("ResourceApplyMomentum",), "with_momentum", input=3, attrs=(("use_nesterov", False),)),
                   Epilogue(("ResourceApplyAdam",), "with_adam", input=9),
                   Epilogue(("Add", "Relu"), "with_add_relu"), Epilogue(("Add",), "with_add"),
                   Epilogue(("BiasAdd", "Relu"), "with_bias_relu"), Epilogue(("BiasAdd",), "with_bias"),
                   Epilogue(("ReluGrad",), "with_relu_grad")),
        updates=(Update(("MatMul", "ResourceApplyGradientDescent"), "with_weight_update", weight=1, shared=(0, 1)),
                 Update(("MatMul", "ResourceApplyMomentum"), "with_momentum_update", weight=1, shared=(0, 1)),
                 Update(("MatMul", "ResourceApplyAdam"), "with_adam_update", weight=1, shared=(0, 1))))
def mat_mul(node):
    xp = node.xp
    transpose_a, transpose_b = node.attrs["transpose_a"], node.attrs["transpose_b"]
    if node.output_dtypes[0] in (np.float32, np.float64):
        return _blas_mat_mul(xp, transpose_a, transpose_b, node.output_dtypes[0])
    if not transpose_a and not transpose_b:
        return xp.matmul
    # .T is a view: BLAS multiplies transposed operands without copying them.
    return lambda a, b: xp.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


def _relu_masked(xp, out, features):
    """ReluGrad(out, features): out times the mask of features > 0, in place where the mask has out's shape."""
    mask = features > out.dtype.type(0)
    return xp.multiply(out, mask, out=out) if mask.shape == out.shape else out * mask


def _blas_mat_mul(xp, transpose_a: bool, transpose_b: bool, dtype):
    """A float MatMul into an output reused from step to step (kernels/conv/scratch.py), in cache-sized
    blocks and across the run's threads (kernels/products.py).

    A fully connected layer's weight gradient is as large as its weights: fresh memory every step
    would cost page faults comparable to the product itself.
    """
    scratch = Scratch(xp)

    def run(a, b):
        a, b = (a.T if transpose_a else a), (b.T if transpose_b else b)
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] or a.dtype != dtype or b.dtype != dtype:
            return xp.matmul(a, b)  # raises NumPy's error for what the shape rules could not see
        return matmul_into(xp, a, b, scratch.output((a.shape[0], b.shape[1]), dtype))

    def operands(a, b, update: str) -> tuple:
        """The product's operands, of the kernel's dtype, for an optimizer's update fused with it."""
        a, b = (a.T if transpose_a else a), (b.T if transpose_b else b)
        if a.dtype != dtype or b.dtype != dtype:
            raise InvalidArgumentError(None, None, f"MatMul of {a.dtype} and {b.dtype} into a {dtype} {update}")
        return a, b

    def fused_update(update_by_product, update: str):
        """An epilogue variant: the optimizer's update by the product a @ b, its other arguments after a and b in
        update_by_product's order, the product never whole in memory."""
        return lambda a, b, *args: update_by_product(xp, *args, *operands(a, b, update))

    def with_add(a, b, addend, relu: bool = False):
        """Add(a @ b, addend) (then Relu), in place on the product where addend broadcasts to its shape: a dense
        layer's bias (and activation) in the pass that reads the product from the cache."""
        out = run(a, b)
        # A bias of one value per column, else any addend broadcasting to the product's shape.
        if addend.dtype == out.dtype and (addend.shape == out.shape[-1:]
                                          or xp.broadcast_shapes(out.shape, addend.shape) == out.shape):
            add_channels_into(xp, out, addend, out)
        else:
            out = xp.add(out, addend)
        if relu:
            relu_into(xp, out, out)
        return out

    def with_bias(a, b, bias, relu: bool = False):
        """BiasAdd(a @ b, bias) (then Relu): tf.layers.dense, an unrolled RNN cell's gates. A bias
        that is not one value per column raises, and the lines then run one by one: BiasAdd's error."""
        if bias.shape != (b.shape[0] if transpose_b else b.shape[-1],):
            raise InvalidArgumentError(None, None, "Must provide as many biases as the last dimension of the input")
        return with_add(a, b, bias, relu)

    def with_relu_grad(a, b, features):
        """ReluGrad(a @ b, features): the product times the mask of features > 0, in place."""
        return _relu_masked(xp, run(a, b), features)

    def weight_update(update_by_product):
        """For a line computing an input gradient dy @ w.T (then its ReluGrad) whose w is the value of the variable
        that a later line updates by the weight gradient x.T @ dy, computed by `update_by_product(xp, *the update's
        arguments but the product's, x.T, dy, input_gradient)` (Update): a variant giving a function that computes
        both, each band of the variable read once, from the weights before their update; None for other lines."""
        def variant(fused_ops: tuple, update_attrs: dict):
            if (transpose_a or not transpose_b or fused_ops not in (("MatMul",), ("MatMul", "ReluGrad"))
                    or not update_attrs.get("transpose_a") or update_attrs.get("transpose_b")):
                return None
            relu = len(fused_ops) == 2

            def run_with_update(dy, *rest):
                """The line's output, or None (nothing written) where the arrays do not fit: the lines then run one by
                one, and an error names the op that fails."""
                features, (x, update_dy, *update) = (rest[0], rest[1:]) if relu else (None, rest)
                if not (dy.dtype == x.dtype == update_dy.dtype == dtype and dy.ndim == x.ndim == update_dy.ndim == 2
                        ) or (relu and features.shape != (dy.shape[0], x.shape[1])):
                    return None
                out = scratch.output((dy.shape[0], x.shape[1]), dtype)
                update_by_product(xp, *update, x.T, update_dy, input_gradient=(dy, out))
                return _relu_masked(xp, out, features) if relu else out

            return run_with_update

        return variant

    run.with_descent = fused_update(descend_by_product, "descent")
    run.with_momentum = fused_update(momentum_by_product, "momentum")
    run.with_adam = fused_update(adam_by_product, "Adam")
    run.with_weight_update = weight_update(descend_by_product)
    run.with_momentum_update = weight_update(momentum_by_product)
    run.with_adam_update = weight_update(adam_by_product)
    run.with_add = with_add
    run.with_add_relu = lambda a, b, addend: with_add(a, b, addend, relu=True)
    run.with_bias = with_bias
    run.with_bias_relu = lambda a, b, bias: with_bias(a, b, bias, relu=True)
    run.with_relu_grad = with_relu_grad
    return run


@kernel("BatchMatMulV2", fresh_output=True)
def batch_mat_mul(node):
    xp = node.xp
    adjoint_a, adjoint_b = node.attrs["adj_x"], node.attrs["adj_y"]
    if not adjoint_a and not adjoint_b:
        return xp.matmul
    conjugate = node.input_dtypes[0].kind == "c"

    def adjoint(m):
        m = xp.swapaxes(m, -1, -2)
        return xp.conj(m) if conjugate else m

    return lambda a, b: xp.matmul(adjoint(a) if adjoint_a else a, adjoint(b) if adjoint_b else b)
