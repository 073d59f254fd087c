"""tf.map_fn, tf.scan, tf.foldl and tf.foldr: a tf.while_loop over the first axis, reading and writing
TensorArrays, as TF1 builds them."""

from __future__ import annotations

from tfnb.framework import nest
from tfnb.framework.graph import get_default_graph
from tfnb.framework.tensor_shape import Dimension, TensorShape
from tfnb.ops import array_ops
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.control_flow.while_loop import while_loop
from tfnb.ops.tensor_array_ops import TensorArray

__all__ = ["map_fn", "scan", "foldl", "foldr"]


def _flat_structure(structure) -> tuple:
    """(flatten, pack) for a nest, or for a single tensor as a one-element list (TF's map_fn convention)."""
    if isinstance(structure, (list, tuple, dict)):
        return nest.flatten, lambda leaves: nest.pack_sequence_as(structure, leaves)
    return (lambda x: [x]), (lambda leaves: leaves[0])


def _element_count(elems_flat: list):
    """The length of the first axis: static if known, else a Shape op."""
    first = elems_flat[0].shape
    if first.ndims is not None and first.ndims < 1:
        raise ValueError("elems must be a 1+ dimensional Tensor, not a scalar" if len(elems_flat) == 1 else
                         "elements in elems must be 1+ dimensional Tensors, not scalars")
    known = first[0].value if first.ndims else None
    return known if known is not None else array_ops.shape(elems_flat[0])[0]


def _unstacked(elems_flat: list, n, element_shapes: bool = False) -> list[TensorArray]:
    return [TensorArray(e.dtype, size=n, dynamic_size=False, infer_shape=True,
                        element_shape=e.shape[1:] if element_shapes else None).unstack(e) for e in elems_flat]


def _set_leading_dim(results: list, elems_flat: list) -> None:
    count = Dimension(elems_flat[0].shape[0].value if elems_flat[0].shape.ndims else None)
    for elem in elems_flat[1:]:
        count = count.merge_with(Dimension(elem.shape[0].value if elem.shape.ndims else None))
    for r in results:
        r.set_shape(TensorShape([count.value]).concatenate(r.shape[1:]))


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop: bool = True, swap_memory: bool = False,
           infer_shape: bool = True, name: str | None = None):
    """fn applied to each slice of `elems` along its first axis (elems and results may be nests), stacked.

    tfnb differs: swap_memory is accepted and ignored.
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    in_flatten, in_pack = _flat_structure(elems)
    out_flatten, out_pack = (in_flatten, in_pack) if dtype is None else _flat_structure(dtype)
    with get_default_graph().name_scope(name or "map"):
        elems_flat = [convert_to_tensor(e, name="elem") for e in in_flatten(elems)]
        dtype_flat = [e.dtype for e in elems_flat] if dtype is None else out_flatten(dtype)
        n = _element_count(elems_flat)
        elems_ta = _unstacked(elems_flat, n)
        accs_ta = [TensorArray(dt, size=n, dynamic_size=False, infer_shape=infer_shape) for dt in dtype_flat]

        def compute(i, tas):
            values = fn(in_pack([ta.read(i) for ta in elems_ta]))
            nest.assert_same_structure(elems if dtype is None else dtype, values)
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, out_flatten(values))]

        _, accs_ta = while_loop(lambda i, _: i < n, compute, (constant(0), accs_ta),
                                parallel_iterations=parallel_iterations or 10, back_prop=back_prop)
        results = [ta.stack() for ta in accs_ta]
        _set_leading_dim(results, elems_flat)
        return out_pack(results)


def scan(fn, elems, initializer=None, parallel_iterations: int = 10, back_prop: bool = True,
         swap_memory: bool = False, infer_shape: bool = True, reverse: bool = False, name: str | None = None):
    """The running accumulation a = fn(a, x) over the slices x of `elems`, every intermediate a stacked.

    tfnb differs: swap_memory is accepted and ignored.
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    in_flatten, in_pack = _flat_structure(elems)
    out_flatten, out_pack = (in_flatten, in_pack) if initializer is None else _flat_structure(initializer)
    with get_default_graph().name_scope(name or "scan"):
        elems_flat = [convert_to_tensor(e, name="elem") for e in in_flatten(elems)]
        n = _element_count(elems_flat)
        elems_ta = _unstacked(elems_flat, n, element_shapes=True)
        last = n - 1
        if initializer is None:
            a_flat = [ta.read(last if reverse else 0) for ta in elems_ta]
            start = 1
        else:
            a_flat = [convert_to_tensor(a) for a in out_flatten(initializer)]
            start = 0
        accs_ta = [TensorArray(a.dtype, size=n, element_shape=a.shape if infer_shape else None, dynamic_size=False,
                               infer_shape=infer_shape) for a in a_flat]
        if initializer is None:
            accs_ta = [ta.write(last if reverse else 0, a) for ta, a in zip(accs_ta, a_flat)]

        def compute(i, a_flat, tas):
            a_out = fn(out_pack(a_flat), in_pack([ta.read(i) for ta in elems_ta]))
            nest.assert_same_structure(elems if initializer is None else initializer, a_out)
            flat = out_flatten(a_out)
            return (i - 1 if reverse else i + 1), flat, [ta.write(i, v) for ta, v in zip(tas, flat)]

        first = last - start if reverse else constant(start)
        condition = (lambda i, _a, _t: i >= 0) if reverse else (lambda i, _a, _t: i < n)
        _, _, accs_ta = while_loop(condition, compute, (first, a_flat, accs_ta),
                                   parallel_iterations=parallel_iterations, back_prop=back_prop)
        results = [ta.stack() for ta in accs_ta]
        _set_leading_dim(results, elems_flat)
        return out_pack(results)


def foldl(fn, elems, initializer=None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: str | None = None):
    """fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1]); without initializer, starts from elems[0].

    tfnb differs: swap_memory is accepted and ignored.
    """
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, name or "foldl", reverse=False)


def foldr(fn, elems, initializer=None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: str | None = None):
    """foldl from the last slice of `elems` to the first; without initializer, starts from elems[-1].

    tfnb differs: swap_memory is accepted and ignored.
    """
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, name or "foldr", reverse=True)


def _fold(fn, elems, initializer, parallel_iterations: int, back_prop: bool, name: str, reverse: bool):
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with get_default_graph().name_scope(name):
        elems_flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
        n = elems_flat[0].shape[0].value if elems_flat[0].shape.ndims else None
        n = n if n is not None else array_ops.shape(elems_flat[0])[0]
        arrays = nest.pack_sequence_as(elems, _unstacked(elems_flat, n))
        if initializer is None:
            a = nest.pack_sequence_as(elems, [ta.read(n - 1 if reverse else 0) for ta in nest.flatten(arrays)])
            i = n - 2 if reverse else constant(1)
        else:
            a = initializer
            i = n - 1 if reverse else constant(0)

        def compute(i, a):
            a = fn(a, nest.pack_sequence_as(elems, [ta.read(i) for ta in nest.flatten(arrays)]))
            return [i - 1 if reverse else i + 1, a]

        condition = (lambda i, a: i >= 0) if reverse else (lambda i, a: i < n)
        _, result = while_loop(condition, compute, [convert_to_tensor(i), a], parallel_iterations=parallel_iterations,
                               back_prop=back_prop)
        return result
