"""Plan rewrites (2015 paper, section 5.1): common-subexpression elimination and constant folding.

Ops whose outputs depend on their input's shape alone (OnesLike, Shape, ...) fold when that shape is
known statically, whatever computes the input, unless the input comes from inside a loop or a cond
branch (then it may be dead, or differ per iteration, and the folded constant would not be).
The paper's control-flow primitives are never merged, folded or dropped.

They work on a plan's ordered ops and never change the graph: the result says which tensors
stand for which (`substitutes`) and which values are known before the run (`folded`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor

MAX_FOLDED_BYTES = 10 * 1024 * 1024


@dataclass
class Rewritten:
    """The ops left to run, in order, and how the removed ones' outputs are provided."""

    ops: list[Operation]
    substitutes: dict[Tensor, Tensor] = field(default_factory=dict)
    folded: dict[Tensor, object] = field(default_factory=dict)
    replaced_ops: dict[Operation, Operation] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)

    def resolve(self, tensor: Tensor) -> Tensor:
        """The tensor that provides `tensor`'s value after the rewrites."""
        return self.substitutes.get(tensor, tensor)


def rewrite(ordered: list[Operation], feeds, evaluate: Callable, cse: bool = True, fold: bool = True,
            fetches=(), targets=()) -> Rewritten:
    """Merges identical stateless ops, evaluates ops whose inputs are all known constants, then drops the
    stateless ops that nothing left reads (inputs of folded ops) unless `fetches` or `targets` need them.

    `evaluate(op, input_values)` runs op's CPU kernel once; an op whose kernel fails is kept, so the
    error is raised when the plan runs, attributed as usual.
    """
    fed = set(feeds)
    result = Rewritten([])
    seen: dict[tuple, Operation] = {}
    replaced_ops = result.replaced_ops
    conditional = _inside_control_flow(ordered)
    for op in ordered:
        inputs = [result.substitutes.get(t, t) for t in op.inputs]
        if cse and not op.op_def.stateful and not op.op_def.control_flow and not any(t in fed for t in op.outputs):
            key = _cse_key(op, inputs, replaced_ops)
            original = seen.get(key) if key is not None else None
            if original is not None:
                _substitute(result, op, original, replaced_ops)
                continue
            if key is not None:
                seen[key] = op
        if fold and _foldable(op, inputs, fed, result.folded, conditional):
            values = _evaluate(evaluate, op, [result.folded[t] if t in result.folded
                                              else _const_value(t) if t.op.type == "Const"
                                              else np.zeros(t.shape.as_tuple(), t.dtype.np_dtype) for t in inputs])
            if values is not None:
                for tensor, value in zip(op.outputs, values):
                    result.folded[tensor] = value
                result.removed[op.name] = "folded"
                continue
        result.ops.append(op)
    if fold:
        _drop_unused(result, fetches, targets)
    return result


def _drop_unused(result: Rewritten, fetches, targets) -> None:
    """Removes stateless ops whose outputs no kept op reads, nothing fetches, and no kept op waits on."""
    needed = {result.resolve(t) for t in fetches}
    waited_on = {result.replaced_ops.get(op, op) for op in targets}
    kept = []
    for op in reversed(result.ops):
        if op in waited_on or op.op_def.stateful or op.op_def.control_flow or any(t in needed for t in op.outputs):
            kept.append(op)
            needed.update(result.resolve(t) for t in op.inputs)
            waited_on.update(result.replaced_ops.get(c, c) for c in op._control_inputs)
        else:
            result.removed[op.name] = "unused after folding"
    result.ops = kept[::-1]


def _substitute(result: Rewritten, op: Operation, original: Operation, replaced_ops: dict) -> None:
    for mine, theirs in zip(op.outputs, original.outputs):
        result.substitutes[mine] = result.substitutes.get(theirs, theirs)
    replaced_ops[op] = original
    result.removed[op.name] = f"same as {original.name}"


def _cse_key(op: Operation, inputs, replaced_ops) -> tuple | None:
    try:
        attrs = tuple(sorted((k, _hashable(v)) for k, v in op.attrs.items()))
    except TypeError:
        return None
    controls = tuple(sorted(id(replaced_ops.get(c, c)) for c in op._control_inputs))
    return (op.type, tuple(id(t) for t in inputs), controls, attrs, op.device)


def _hashable(value):
    if isinstance(value, np.ndarray):
        data = value.tobytes() if value.dtype != object else repr(value.tolist()).encode()
        return ("array", str(value.dtype), value.shape, hashlib.sha1(data).hexdigest())
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    hash(value)
    return value


def _inside_control_flow(ordered: list[Operation]) -> set[Operation]:
    """The ops downstream of a control-flow primitive: their values may be dead or change per iteration."""
    inside: set[Operation] = set()
    for op in ordered:
        sources = [t.op for t in op.inputs] + list(op._control_inputs)
        if op.op_def.control_flow or any(s in inside or s.op_def.control_flow for s in sources):
            inside.add(op)
    return inside


def _foldable(op: Operation, inputs, fed, folded, conditional: set[Operation]) -> bool:
    if not op.op_def.foldable or op.op_def.stateful or not inputs or op._control_inputs:
        return False
    if any(t in fed for t in op.outputs) or any(t.dtype.name == "resource" for t in op.outputs):
        return False
    if op.op_def.reads_shape_only:
        tensor = inputs[0]
        return tensor in folded or (tensor.shape.is_fully_defined() and tensor.dtype.np_dtype.kind in "biufc"
                                    and tensor.op not in conditional)
    return all(t in folded or (t.op.type == "Const" and t not in fed) for t in inputs)


def _const_value(tensor: Tensor):
    return tensor.op.attrs["value"]


def _evaluate(evaluate: Callable, op: Operation, values: list) -> tuple | None:
    try:
        with np.errstate(all="ignore"):
            outputs = evaluate(op, values)
    except Exception:  # left in the plan: the run reports it with the op's name and line
        return None
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    if sum(int(getattr(o, "nbytes", 0)) for o in outputs) > MAX_FOLDED_BYTES:
        return None
    for output in outputs:
        if isinstance(output, np.ndarray):
            output.flags.writeable = False
    return outputs
