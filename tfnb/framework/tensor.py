"""Tensor: a symbolic handle to one output of an operation (`op:i`)."""

from __future__ import annotations

from tfnb.framework import dtypes as _dtypes
from tfnb.framework.default_session import default_session_for
from tfnb.framework.tensor_shape import TensorShape, as_shape


class Tensor:
    """Output `value_index` of `op`, with a dtype and a static shape whose dims may be unknown.

    Arithmetic, comparison and `[]` operators build ops (installed by tfnb.ops.math_ops and
    array_ops). As in TF1, `==` compares identity, so tensors can be dict keys.
    tfnb differs: a tensor whose first dim is known has a len and iterates over its rows (TF1 raises TypeError).
    """

    __slots__ = ("op", "value_index", "dtype", "_shape", "__weakref__")

    def __init__(self, op, value_index: int, dtype: _dtypes.DType, shape: TensorShape) -> None:
        self.op = op
        self.value_index = value_index
        self.dtype = dtype
        self._shape = as_shape(shape)

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self):
        return self.op.graph

    @property
    def device(self) -> str:
        return self.op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        """Refines the static shape; raises ValueError if `shape` is incompatible with it."""
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list:
        """The operations that take this tensor as an input."""
        return [op for op in self.op.graph.get_operations() if any(t is self for t in op.inputs)]

    def eval(self, feed_dict=None, session=None):
        """Runs the default (or given) session to compute this tensor."""
        return default_session_for(self.graph, session).run(self, feed_dict)

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self.dtype.name}>"

    def __str__(self) -> str:
        shape = f", shape={self._shape}" if self._shape.ndims is not None else ""
        device = f", device={self.device}" if self.device else ""
        return f'Tensor("{self.name}"{shape}, dtype={self.dtype.name}{device})'

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `tf.cond` "
                        "or run the tensor in a Session to get its value.")

    def __iter__(self):
        dims = self._shape.as_tuple()
        if dims is None or not dims or dims[0] is None:
            raise TypeError(f"Tensor {self.name} is not iterable: its first dimension is unknown.")
        return iter(self[i] for i in range(dims[0]))

    def __len__(self) -> int:
        dims = self._shape.as_tuple()
        if dims is None or not dims or dims[0] is None:
            raise TypeError(f"len is not defined for Tensor {self.name} of shape {self._shape}.")
        return dims[0]

    __array_priority__ = 100

    @classmethod
    def _override_operator(cls, name: str, fn) -> None:
        """Installs an operator (e.g. `__add__`) that builds an op; used by the ops modules."""
        setattr(cls, name, fn)
