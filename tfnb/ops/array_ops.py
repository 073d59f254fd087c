"""TF's array_ops module: the public names of the array op families in tfnb/ops/array/, one module each."""

from tfnb.ops.array.eye import eye
from tfnb.ops.array.filling import fill, ones, ones_like, zeros, zeros_like
from tfnb.ops.array.gathering import gather
from tfnb.ops.array.identity import identity, stop_gradient
from tfnb.ops.array.joining import concat, split
from tfnb.ops.array.one_hot import one_hot
from tfnb.ops.array.packing import stack, unstack
from tfnb.ops.array.permuting import invert_permutation, reverse, reverse_sequence, reverse_v2, transpose
from tfnb.ops.array.placeholders import placeholder, placeholder_with_default
from tfnb.ops.array.ranges import lin_space, linspace, range  # noqa: A004
from tfnb.ops.array.reshaping import expand_dims, reshape, squeeze
from tfnb.ops.array.shapes import rank, shape, size
from tfnb.ops.array.slicing import newaxis, pad, slice, strided_slice  # noqa: A004
from tfnb.ops.array.tiling import tile

__all__ = ["placeholder", "placeholder_with_default", "identity", "stop_gradient", "newaxis", "reshape", "transpose",
           "concat", "stack", "unstack", "split", "slice", "strided_slice", "gather", "expand_dims", "squeeze",
           "tile", "pad", "fill", "zeros", "ones", "zeros_like", "ones_like", "range", "shape", "size", "rank",
           "one_hot", "reverse", "reverse_v2", "invert_permutation", "eye", "linspace", "lin_space",
           "reverse_sequence"]
