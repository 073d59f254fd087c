"""tf.cond and tf.case, built from Switch and Merge as in TF1; and the gradients of a cond's Switches and Merges."""

from __future__ import annotations

from tfnb.framework import nest
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import register_gradient
from tfnb.framework.tensor import Tensor
from tfnb.ops.array.identity import identity
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.control_flow.context import CondContext
from tfnb.ops.control_flow.primitives import merge, switch

__all__ = ["cond", "case"]


def cond(pred, true_fn=None, false_fn=None, strict: bool = False, name: str | None = None, fn1=None, fn2=None):
    """true_fn() if pred else false_fn(); only ops created inside a branch are conditional (as TF1)."""
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("true_fn and false_fn must be callable")
    graph = get_default_graph()
    with graph.name_scope(name or "cond"):
        if isinstance(pred, bool):
            raise TypeError("'pred' must not be a Python bool.")
        pred = convert_to_tensor(pred)
        false_switch, true_switch = switch(pred, pred)
        pivots = (identity(false_switch, name="switch_f"), identity(true_switch, name="switch_t"))
        pred_id = identity(pred, name="pred_id")
        branches = []
        for branch, fn in ((1, true_fn), (0, false_fn)):
            context = CondContext(graph, graph._control_flow_context, pred_id, pivots[branch], branch)
            with context:
                result = fn()
                leaves = [context.route(convert_to_tensor(leaf)) for leaf in nest.flatten(result)]
            branches.append((result, leaves))
        (true_result, true_leaves), (false_result, false_leaves) = branches
        nest.assert_same_structure(true_result, false_result)
        outputs = []
        for false_leaf, true_leaf in zip(false_leaves, true_leaves):
            if false_leaf.dtype is not true_leaf.dtype:
                raise ValueError(f"Outputs of true_fn and false_fn must have the same type: "
                                 f"{true_leaf.dtype.name}, {false_leaf.dtype.name}")
            outputs.append(merge([false_leaf, true_leaf], name="Merge")[0])
    packed = nest.pack_sequence_as(true_result, outputs)
    if not strict and isinstance(packed, list | tuple) and len(packed) == 1 and not isinstance(true_result, dict):
        return packed[0]
    return packed


def case(pred_fn_pairs, default=None, exclusive: bool = False, strict: bool = False, name: str = "case"):
    """The fn of the first pair whose predicate is true, else default() (nested conds, as TF1).

    tfnb differs: `exclusive=True` does not check at run time that at most one predicate is true.
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    for pred, fn in pairs:
        if not isinstance(pred, Tensor):
            raise TypeError(f"pred must be a Tensor, got: {pred!r}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    if default is None:
        if not pairs:
            raise ValueError("case needs at least one pred_fn pair or a default")
        *pairs, (_, default) = pairs
    graph = get_default_graph()
    with graph.name_scope(name):
        result = default
        for pred, fn in reversed(pairs):
            result = _bind_cond(pred, fn, result, strict)
        return result() if callable(result) else result


def _bind_cond(pred, fn, otherwise, strict):
    return lambda: cond(pred, fn, otherwise, strict=strict)


# -- gradients ------------------------------------------------------------------------------------

def _cond_context_of(op):
    """The cond branch context a Merge's inputs come from (the predicate lives there)."""
    for tensor in op.inputs:
        context = tensor.op._control_flow_context
        while context is not None and not isinstance(context, CondContext):
            context = context.outer
        if context is not None:
            return context
    return None


@register_gradient("Merge")
def _merge_grad(op, grad, _index_grad):
    """A cond's Merge sends its gradient back into the branch that ran: Switch(grad, pred)."""
    context = _cond_context_of(op)
    if context is None:
        raise LookupError(f"No gradient for Merge '{op.name}': only tf.cond's Merges have one (a tf.while_loop is "
                          "differentiated as a whole from its Exits, tfnb/autodiff/while_grad.py)")
    return list(switch(grad, context.pred, name="cond_grad"))


@register_gradient("Switch")
def _switch_grad(op, false_grad, true_grad):
    """A cond's Switch joins the gradients of both branches; only the taken one is alive."""
    if op.inputs[1].op.type == "LoopCond":
        raise LookupError(f"No gradient for the loop Switch '{op.name}': a tf.while_loop is differentiated as a whole "
                          "from its Exits, so tensors inside its body cannot be the xs of tf.gradients")
    return [merge([false_grad, true_grad], name="cond_grad")[0], None]
