"""Clipping by norm (tf.clip_by_norm, tf.clip_by_global_norm, tf.global_norm), built from existing ops as TF
builds them; sparse gradients (IndexedSlices) are scaled row by row, as dense ones are."""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import name_scope
from tfnb.framework.indexed_slices import IndexedSlices
from tfnb.framework.tensor import Tensor
from tfnb.ops import array_ops, math_ops, nn_ops
from tfnb.ops.constant_op import constant, convert_to_tensor

__all__ = ["clip_by_norm", "clip_by_global_norm", "global_norm", "clip_by_average_norm"]


def _values(t) -> Tensor:
    return t.values if isinstance(t, IndexedSlices) else t


def _like(t, values: Tensor):
    """`values` in the form of `t`: an IndexedSlices with t's indices if t is one, else `values`."""
    return IndexedSlices(values, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else values


def clip_by_norm(t, clip_norm, axes=None, name: str | None = None):
    """t * clip_norm / max(l2norm(t, axes), clip_norm): t rescaled so its L2 norm is at most clip_norm."""
    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = convert_to_tensor(_values(t), name="t")
        square_sum = math_ops.reduce_sum(values * values, axes, keepdims=True)
        # sqrt's gradient at 0 is infinite: take it only where the sum is positive.
        positive = square_sum > 0
        safe_sum = math_ops.where(positive, square_sum, array_ops.ones_like(square_sum))
        norm = math_ops.where(positive, math_ops.sqrt(safe_sum), square_sum)
        scaled = values * clip_norm
        clipped = array_ops.identity(scaled / math_ops.maximum(norm, clip_norm), name=scope)
        clipped.set_shape(values.shape)
        return _like(t, clipped)


def global_norm(t_list, name: str | None = None) -> Tensor:
    """sqrt(sum of the squared L2 norms of the tensors in t_list); None entries are skipped."""
    if not isinstance(t_list, (list, tuple)) or isinstance(t_list, str):
        raise TypeError("t_list should be a sequence")
    present = [t for t in t_list if t is not None]
    with name_scope(name, "global_norm", present) as scope:
        halves = [nn_ops.l2_loss(convert_to_tensor(_values(t), name=f"t_{i}")) for i, t in enumerate(present)]
        squared = math_ops.reduce_sum(array_ops.stack(halves)) * 2.0
        return math_ops.sqrt(squared, name=scope)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name: str | None = None) -> tuple[list, Tensor]:
    """(each tensor times clip_norm / max(global_norm, clip_norm), the global norm); NaN everywhere if the
    norm is not finite, None entries kept."""
    if not isinstance(t_list, (list, tuple)) or isinstance(t_list, str):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    norm = global_norm(t_list, name) if use_norm is None else convert_to_tensor(use_norm)
    with name_scope(name, "clip_by_global_norm", [t for t in t_list if t is not None] + [clip_norm]) as scope:
        clip_norm = convert_to_tensor(clip_norm, dtype=norm.dtype, name="clip_norm")
        finite_scale = clip_norm * math_ops.minimum(1.0 / norm, constant(1.0, dtype=norm.dtype) / clip_norm)
        scale = math_ops.where(math_ops.is_finite(norm), finite_scale,
                               constant(float("nan"), dtype=norm.dtype))
        clipped = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            values = convert_to_tensor(_values(t), name=f"t_{i}")
            scaled = array_ops.identity(values * math_ops.cast(scale, values.dtype), name=f"{scope}_{i}")
            clipped.append(_like(t, scaled))
        return clipped, norm


def clip_by_average_norm(t, clip_norm, name: str | None = None) -> Tensor:
    """t * clip_norm / max(l2norm(t) / size(t), clip_norm) (deprecated in TF1)."""
    with name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t, name="t")
        count = math_ops.cast(array_ops.size(t), dtypes.float32)
        inverse_norm = math_ops.rsqrt(math_ops.reduce_sum(t * t))
        scale = math_ops.minimum(count * inverse_norm, 1.0 / clip_norm)
        return array_ops.identity(t * clip_norm * scale, name=scope)
