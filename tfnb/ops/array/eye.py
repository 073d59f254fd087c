"""Identity matrices (tf.eye), optionally batched, built from existing ops."""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import name_scope
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops.array.filling import ones_like
from tfnb.ops.array.joining import concat
from tfnb.ops.array.ranges import range  # noqa: A004
from tfnb.ops.array.reshaping import expand_dims, reshape
from tfnb.ops.array.tiling import tile
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import constant_ints
from tfnb.ops.math.cast import cast
from tfnb.ops.math.comparison import equal


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name: str | None = None) -> Tensor:
    """Ones on the main diagonal of a num_rows x num_columns matrix (square if num_columns is None), zeros
    elsewhere; with `batch_shape`, one such matrix per batch index.

    tfnb differs: it compares a row range with a column range where TF builds a MatrixDiag of ones (same values).
    """
    with name_scope(name, "eye", [num_rows, num_columns, batch_shape]) as scope:
        rows = convert_to_tensor(num_rows, dtype=dtypes.int32, name="num_rows")
        columns = rows if num_columns is None else convert_to_tensor(num_columns, dtype=dtypes.int32,
                                                                   name="num_columns")
        on_diagonal = equal(expand_dims(range(rows), 1), range(columns))
        if batch_shape is None:
            return cast(on_diagonal, dtype, name=scope)
        batch = convert_to_tensor(batch_shape, dtype=dtypes.int32, name="batch_shape")
        matrix = reshape(cast(on_diagonal, dtype), concat([ones_like(batch), [rows, columns]], 0))
        matrices = tile(matrix, concat([batch, [1, 1]], 0), name=scope)
        known_batch = constant_ints(batch)
        matrices.set_shape(TensorShape(known_batch if known_batch is not None else None)
                           .concatenate(on_diagonal.shape) if batch.shape.is_fully_defined() else None)
        return matrices
