"""The op registry: one table row per op type (shape rule, gradient, cost, statefulness, examples).

Kernels live apart, in `tfnb.kernels`; everything else the system knows about an op type is here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.errors import NotFoundError
from tfnb.framework.tensor_shape import TensorShape


@dataclass(frozen=True)
class Example:
    """A small case for the generic op tests: build the op from tensors, compare with NumPy.

    Each input is a shape (sampled in every dtype the op claims) or a fixed NumPy array.
    `dtypes` narrows the op's claimed dtypes for this case; `low`/`high` bound sampled values.
    """

    build: Callable
    reference: Callable
    inputs: tuple = ()
    dtypes: tuple | None = None
    low: float = -3.0
    high: float = 3.0
    atol: float = 1e-6
    differentiable: bool = True


@dataclass
class OpDef:
    """Everything tfnb knows about one op type, apart from its kernels.

    infer(op) returns one (DType, TensorShape) per output. cost(op) estimates compute cost in
    flops-equivalents for the placer. forwards_input is the index of an input that the kernel may
    return unchanged (so a fetch of the output may alias variable state), or None.

    What the compile pipeline (tfnb/runtime) may do with the op:
    - foldable: constant folding may run it ahead of time once its inputs are known;
    - reads_shape_only: its outputs depend on its first input's shape alone, so it folds whenever
      that shape is static (Grappler's shape materialization);
    - control_flow: one of the paper's control-flow primitives (Switch, Merge, Enter, Exit,
      NextIteration, LoopCond), which executors treat specially; never folded, merged or dropped;
    - reads_state_only: stateful only because it reads a resource (a variable's value), which it
      never changes.

    attrs maps each attr a node of this type carries to its type, in TF's attr type names ('int',
    'float', 'bool', 'string', 'type', 'shape', 'tensor', 'list(int)', ...; a trailing '?' allows
    None), and 'count' for an int that counts a node's inputs or outputs (0 to MAX_COUNT). A GraphDef
    node must carry exactly these (and any internal '_' attrs), as in TF's OpDef.
    """

    type: str
    infer: Callable
    dtypes: tuple = dtypes.ARRAY
    stateful: bool = False
    cost: Callable | None = None
    gradient: Callable | None = None
    forwards_input: int | None = None
    examples: list[Example] = field(default_factory=list)
    foldable: bool = True
    reads_shape_only: bool = False
    control_flow: bool = False
    reads_state_only: bool = False
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def writes_state(self) -> bool:
        """Whether the op may change a resource it is given (an assign, an optimizer update, a queue op)."""
        return self.stateful and not self.reads_state_only


_OPS: dict[str, OpDef] = {}


def register_op(type_name: str, infer: Callable, *, dtypes: Sequence = dtypes.ARRAY,
                stateful: bool = False, cost: Callable | None = None,
                forwards_input: int | None = None, examples: Sequence[Example] = (), foldable: bool = True,
                reads_shape_only: bool = False, control_flow: bool = False,
                reads_state_only: bool = False, attrs: dict[str, str] | None = None) -> OpDef:
    """Adds an op type to the registry and returns its definition (fields: see OpDef)."""
    if type_name in _OPS:
        raise KeyError(f"Op type {type_name!r} is already registered")
    for attr, attr_type in (attrs or {}).items():
        if _element_type(attr_type) not in _ATTR_VALUE_CHECKS:
            raise ValueError(f"Op type {type_name!r}: attr {attr!r} has unknown type {attr_type!r}")
    op_def = OpDef(type_name, infer, tuple(dtypes), stateful, cost, None, forwards_input, list(examples),
                   foldable and not control_flow, reads_shape_only, control_flow, reads_state_only, dict(attrs or {}))
    _OPS[type_name] = op_def
    return op_def


# The most inputs or outputs a node may count: far more than any real graph has, few enough to build.
MAX_COUNT = 2**16

# What a value of each of TF's attr types is, once decoded from a GraphDef.
_ATTR_VALUE_CHECKS = {
    "int": lambda v: type(v) is int,
    "count": lambda v: type(v) is int and 0 <= v <= MAX_COUNT,
    "float": lambda v: type(v) in (float, int),
    "bool": lambda v: type(v) is bool,
    "string": lambda v: type(v) is str,
    "type": lambda v: isinstance(v, dtypes.DType),
    "shape": lambda v: isinstance(v, TensorShape),
    "tensor": lambda v: isinstance(v, np.ndarray),
    # A traced function (its graph and outputs), as dataset ops hold; no GraphDef holds one.
    "func": lambda v: hasattr(v, "graph") and hasattr(v, "outputs"),
}


def _element_type(attr_type: str) -> str:
    """'int' for 'int', 'list(int)' and 'int?'."""
    attr_type = attr_type.removesuffix("?")
    return attr_type[5:-1] if attr_type.startswith("list(") and attr_type.endswith(")") else attr_type


def _attr_fits(attr_type: str, value) -> bool:
    if attr_type.endswith("?"):
        return value is None or _attr_fits(attr_type[:-1], value)
    check = _ATTR_VALUE_CHECKS[_element_type(attr_type)]
    if attr_type.startswith("list("):
        return type(value) in (list, tuple) and all(check(item) for item in value)
    return check(value)


def attr_problems(op_def: OpDef, attrs: dict) -> list[str]:
    """What is wrong with `attrs` for a node of `op_def`'s type: missing, unknown or mistyped attrs (TF's wording)."""
    signature = f"Op<name={op_def.type}; " + "; ".join(f"attr={k}:{t}" for k, t in op_def.attrs.items()) + ">"
    missing = [name for name in op_def.attrs if name not in attrs]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        return [f"NodeDef missing attr{plural} {', '.join(repr(m) for m in missing)} from {signature}"]
    problems = [f"NodeDef mentions attr '{name}' not in {signature}" for name in attrs
                if name not in op_def.attrs and not name.startswith("_")]
    for name, attr_type in op_def.attrs.items():
        if not _attr_fits(attr_type, attrs[name]):
            problems.append(f"attr '{name}' must be of type {attr_type}, got {type(attrs[name]).__name__} "
                            f"{attrs[name]!r:.80}")
    return problems


def get_op_def(type_name: str) -> OpDef:
    """The definition of an op type; raises NotFoundError for an unknown type."""
    try:
        return _OPS[type_name]
    except KeyError:
        raise NotFoundError(None, None, f"Op type {type_name!r} is not registered") from None


def registered_ops() -> dict[str, OpDef]:
    """All registered op definitions, by type name."""
    return dict(_OPS)


def default_cost(op) -> float:
    """Cost estimate: one unit per output element (unknown dims count as 1)."""
    total = 0.0
    for tensor in op.outputs:
        dims = tensor.shape.as_tuple() or ()
        total += float(np.prod([d or 1 for d in dims]))
    return total


def register_gradient(op_type: str) -> Callable:
    """Decorator setting the gradient rule `fn(op, *output_grads) -> input grads` of an op type."""

    def register(fn: Callable) -> Callable:
        get_op_def(op_type).gradient = fn
        return fn

    return register


def no_gradient(fn_op, *grads):
    """The gradient rule of an op that is not differentiable: no gradient for any input."""
    return [None] * len(fn_op.inputs)


def not_differentiable(*op_types: str) -> None:
    """Declares op types through which no gradient flows (comparisons, argmax, shapes, ...)."""
    for op_type in op_types:
        get_op_def(op_type).gradient = no_gradient
