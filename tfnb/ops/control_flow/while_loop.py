"""tf.while_loop, built from Enter, Merge, LoopCond, Switch, NextIteration and Exit as in TF1.

    loop var -> Enter -> Merge -> cond -> LoopCond -> Switch -(true)-> body -> NextIteration -> Merge
                                                       '-(false)-> Exit -> result
"""

from __future__ import annotations

from collections.abc import Mapping

from tfnb.framework import nest
from tfnb.framework.graph import get_default_graph
from tfnb.framework.tensor_shape import TensorShape, as_shape
from tfnb.ops import accumulator_ops  # noqa: F401  (registers the ops a loop's gradient saves values with)
from tfnb.ops.array.identity import identity
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.control_flow.context import WhileContext
from tfnb.ops.control_flow.primitives import (
    enter,
    exit,
    loop_cond,
    merge,
    next_iteration,
    switch,
)
from tfnb.ops.math.comparison import logical_and
from tfnb.ops.tensor_array_ops import TensorArray, arrays_like, flows_of

__all__ = ["while_loop"]


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations: int = 10, back_prop: bool = True,
               swap_memory: bool = False, name: str | None = None, maximum_iterations=None,
               return_same_structure: bool = False):
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`, inside the graph (one frame).

    The results take the structure `body` returns, a single one bare unless `return_same_structure` (as TF1).
    A TensorArray among the loop variables is carried as its flow tensor, as in TF1.
    tfnb differs: swap_memory is accepted and ignored.
    """
    if any(isinstance(v, TensorArray) for v in nest.flatten(loop_vars)):
        return _carrying_tensor_arrays(cond, body, loop_vars, shape_invariants, parallel_iterations=parallel_iterations,
                                       back_prop=back_prop, swap_memory=swap_memory, name=name,
                                       maximum_iterations=maximum_iterations,
                                       return_same_structure=return_same_structure)
    if not callable(cond) or not callable(body):
        raise TypeError("cond and body must be callable")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    graph = get_default_graph()
    with graph.name_scope(name or "while") as scope:
        if not loop_vars:
            raise ValueError("'loop_vars' must be provided.")
        if maximum_iterations is not None:
            cond, body, loop_vars = _bounded(cond, body, loop_vars, maximum_iterations,
                                             len(loop_vars) == 1 and not return_same_structure)
            if shape_invariants is not None:
                shape_invariants = (as_shape([]), shape_invariants)
        leaves = [convert_to_tensor(v) for v in nest.flatten(loop_vars)]
        invariants = ([as_shape(s) for s in nest.flatten(shape_invariants)] if shape_invariants is not None
                      else [v.shape for v in leaves])
        context = WhileContext(graph, graph._control_flow_context, scope.rstrip("/"), parallel_iterations, back_prop)
        enters = [enter(v, context.frame_name, parallel_iterations=parallel_iterations, name="Enter") for v in leaves]
        for entered in enters:
            entered.op._control_flow_context = context
        with context:
            merges = [merge([e, e], name="Merge")[0] for e in enters]
            for merged, invariant in zip(merges, invariants):
                merged._shape = invariant
            context.pivot = merges[0]
            predicate = convert_to_tensor(cond(*nest.pack_sequence_as(loop_vars, merges)))
            condition = loop_cond(predicate, name="LoopCond")
            context.loop_cond = condition
            switches = [switch(m, condition, name="Switch") for m in merges]
            body_inputs = [identity(true_side, name="Identity") for _, true_side in switches]
            context.pivot = body_inputs[0]
            packed_inputs = nest.pack_sequence_as(loop_vars, body_inputs)
            returned = body(*packed_inputs)
            if not _is_nested(returned):
                returned = [returned]
            # As TF1, the outer level is compared as lists: loop_vars are usually a list, body results a tuple.
            _check_structure(list(packed_inputs), list(returned))
            results = [context.route(convert_to_tensor(r)) for r in nest.flatten(returned)]
            for merged, result, entered in zip(merges, results, leaves):
                _check_invariant(entered, merged, result)
                merged.op._update_input(1, next_iteration(result, name="NextIteration"))
        exits = [exit(false_side, name="Exit") for false_side, _ in switches]
    context.enters, context.body_inputs, context.results, context.exits = enters, body_inputs, results, exits
    packed = nest.pack_sequence_as(returned, exits)
    if maximum_iterations is not None:
        return packed[1]
    return packed[0] if len(exits) == 1 and not return_same_structure else packed


def _carrying_tensor_arrays(cond, body, loop_vars, shape_invariants, **options):
    """while_loop over the flows of the TensorArrays among loop_vars; cond and body see TensorArrays."""
    if shape_invariants is not None:
        shape_invariants = nest.pack_sequence_as(shape_invariants, [
            TensorShape([]) if isinstance(v, TensorArray) else s
            for v, s in zip(nest.flatten(loop_vars), nest.flatten(shape_invariants))])

    def flow_cond(*args):
        return cond(*arrays_like(loop_vars, args))

    def flow_body(*args):
        return flows_of(body(*arrays_like(loop_vars, args)))

    return arrays_like(loop_vars, while_loop(flow_cond, flow_body, flows_of(loop_vars), shape_invariants, **options))


def _bounded(cond, body, loop_vars, maximum_iterations, single: bool):
    """cond, body and loop_vars with an iteration counter in front, stopping at `maximum_iterations` (as TF1)."""
    limit = convert_to_tensor(maximum_iterations, name="maximum_iterations")
    if limit.shape.ndims != 0:
        raise ValueError(f"'maximum_iterations' must be a scalar. Received shape: {limit.shape}")
    counter = constant(0, dtype=limit.dtype, name="iteration_counter")
    if single:  # a single loop variable goes to cond and body bare
        return (lambda i, v: logical_and(i < limit, cond(v)), lambda i, v: (i + 1, body(v)),
                (counter, loop_vars[0]))
    return lambda i, v: logical_and(i < limit, cond(*v)), lambda i, v: (i + 1, body(*v)), (counter, loop_vars)


def _is_nested(structure) -> bool:
    return isinstance(structure, list | tuple | Mapping)


def _sequence_kind(structure):
    """What TF's nest compares when it checks sequence types: namedtuples by name and fields, mappings alike."""
    if isinstance(structure, Mapping):
        return Mapping
    if hasattr(structure, "_fields"):
        return type(structure).__name__, tuple(structure._fields)
    return list if isinstance(structure, list) else type(structure)


def _check_structure(entering, returned) -> None:
    """As TF's nest.assert_same_structure: ValueError for another nesting, TypeError for another sequence type."""
    if _is_nested(entering) != _is_nested(returned):
        raise ValueError(f"The two structures don't have the same nested structure: the loop variables are "
                         f"{entering!r}, the body returns {returned!r}")
    if not _is_nested(entering):
        return
    if _sequence_kind(entering) != _sequence_kind(returned):
        raise TypeError(f"The two structures don't have the same sequence type: the loop variables have "
                        f"{type(entering).__name__}, the body returns {type(returned).__name__}")
    if isinstance(entering, Mapping) and set(entering) != set(returned):
        raise ValueError(f"The two structures don't have the same set of keys: {sorted(entering)} and "
                         f"{sorted(returned)}")
    if len(entering) != len(returned):
        raise ValueError(f"The two structures don't have the same number of elements: the loop variables have "
                         f"{len(entering)}, the body returns {len(returned)}")
    if isinstance(entering, Mapping):
        entering, returned = [entering[k] for k in sorted(entering)], [returned[k] for k in sorted(returned)]
    for inner_entering, inner_returned in zip(entering, returned):
        _check_structure(inner_entering, inner_returned)


def _check_invariant(entered, merged, result) -> None:
    if result.dtype is not merged.dtype:
        raise TypeError(f"Loop variable {entered.name} enters the loop as {merged.dtype.name} but the body "
                        f"returns {result.dtype.name}")
    if not merged.shape.is_compatible_with(result.shape) or (
            merged.shape.ndims is not None and result.shape.ndims is None):
        raise ValueError(f"Input tensor '{entered.name}' enters the loop with shape {merged.shape}, but has shape "
                         f"{result.shape} after one iteration. To allow the shape to vary across iterations, use "
                         f"the `shape_invariants` argument of tf.while_loop to specify a less-specific shape.")
