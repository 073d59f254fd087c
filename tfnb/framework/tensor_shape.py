"""Static shapes whose rank or dimensions may be unknown (`TensorShape`, `Dimension`)."""

from __future__ import annotations

from collections.abc import Iterable


class Dimension:
    """One dimension of a static shape; `value` is an int or None when unknown (TF1 style)."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        if isinstance(value, Dimension):
            value = value.value
        if value is not None:
            value = int(value)
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
        self.value = value

    def __int__(self) -> int:
        if self.value is None:
            raise ValueError("Cannot convert an unknown Dimension to an int")
        return self.value

    __index__ = __int__

    def __eq__(self, other) -> bool | None:
        other = _value(other)
        if self.value is None or other is None:
            return None
        return self.value == other

    def __ne__(self, other) -> bool | None:
        equal = self.__eq__(other)
        return None if equal is None else not equal

    def __hash__(self) -> int:
        return hash(self.value)

    def __lt__(self, other):
        other = _value(other)
        return None if self.value is None or other is None else self.value < other

    def __bool__(self) -> bool:
        return bool(self.value)

    def _arith(self, other, fn):
        other = _value(other)
        return Dimension(None if self.value is None or other is None else fn(self.value, other))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def is_compatible_with(self, other) -> bool:
        other = _value(other)
        return self.value is None or other is None or self.value == other

    def merge_with(self, other) -> Dimension:
        other = _value(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self.value} and {other} are not compatible")
        return Dimension(self.value if self.value is not None else other)

    def __repr__(self) -> str:
        return f"Dimension({self.value})"

    def __str__(self) -> str:
        return "?" if self.value is None else str(self.value)


def _value(dim) -> int | None:
    return dim.value if isinstance(dim, Dimension) else (None if dim is None else int(dim))


class TensorShape:
    """A static shape: `dims` is a tuple of int-or-None, or None when even the rank is unknown."""

    __slots__ = ("_dims",)

    def __init__(self, dims=None) -> None:
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif dims is None:
            self._dims = None
        elif isinstance(dims, Iterable) and not isinstance(dims, (str, bytes)):
            self._dims = tuple(_value(d) for d in dims)
            if any(d is not None and d < 0 for d in self._dims):
                raise ValueError(f"Shape {list(self._dims)} has a negative dimension")
        else:
            self._dims = (_value(dims),)

    @property
    def dims(self) -> list[Dimension] | None:
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def ndims(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self) -> list:
        """The dimensions as a list of int-or-None; raises if the rank is unknown."""
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self) -> tuple | None:
        return self._dims

    def is_fully_defined(self) -> bool:
        return self._dims is not None and None not in self._dims

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        count = 1
        for d in self._dims:
            count *= d
        return count

    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape(a if a is not None else b for a, b in zip(self._dims, other._dims))

    def concatenate(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def with_rank(self, rank: int) -> TensorShape:
        if self._dims is None:
            return TensorShape([None] * rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self.dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return Dimension(self._dims[key])

    def __eq__(self, other) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __repr__(self) -> str:
        return f"TensorShape({None if self._dims is None else list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        return "(" + ", ".join("?" if d is None else str(d) for d in self._dims) + (",)" if len(self._dims) == 1 else ")")


def as_shape(shape) -> TensorShape:
    """Converts a TensorShape, a list of ints/None, or None (unknown) to a TensorShape."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: int | None = None) -> TensorShape:
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape(())
