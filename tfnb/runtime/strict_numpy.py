"""A device array namespace that behaves like CuPy's, on NumPy: the GPU path, checked on any machine.

A kernel written against `xp` must not hand its arrays to NumPy: CuPy's arrays refuse implicit
conversion (`np.asarray(gpu_array)` is a TypeError) and NumPy's functions and ufuncs refuse them, and
CuPy's reductions and element reads give 0-d arrays, not Python or NumPy scalars. A StrictArray does
the same, holding a NumPy array inside, and the namespace (`STRICT_XP`) wraps NumPy's functions so
that they take and give StrictArrays, as CuPy's take and give device arrays. A session with
`device_count={"STRICT": 1}` has a device `/device:STRICT:0` using it: every registry example runs
there in the tests, so a kernel that would break on a GPU breaks on every machine.

`STRICT_XP.fuse(fn)` stands for `cupy.fuse`: it calls `fn` on FusionValues, which, as CuPy's fusion
variables, allow only ufuncs, `where`, `clip` and operators on the function's arguments and scalars, so a
chain of kernels that CuPy could not compile into one kernel fails here too (tfnb/runtime/fusion.py).
"""

from __future__ import annotations

import operator
import types

import numpy as np

_REFUSED = ("Implicit conversion to a NumPy array is not allowed: this array lives on a device (as CuPy's do). "
            "Use .get() to copy it to the host.")


_HOST_ARRAYS = ("A host (NumPy) array was given where a device array is needed, which CuPy refuses: "
                "move it with xp.asarray first.")
# The functions that take host arrays, as CuPy's do: they make device arrays of them.
_CONSTRUCTORS = frozenset({"asarray", "array", "asanyarray"})


def _unwrap(value, host_allowed: bool = False):
    """NumPy's view of `value`: StrictArrays (also in lists, tuples and dicts) as their NumPy arrays.

    A NumPy array among them is a TypeError unless `host_allowed` (as CuPy refuses host arrays).
    """
    if type(value) is StrictArray:
        return value._data
    if isinstance(value, np.ndarray) and not host_allowed:
        raise TypeError(_HOST_ARRAYS)
    if isinstance(value, list | tuple):
        return type(value)(_unwrap(v, host_allowed) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v, host_allowed) for k, v in value.items()}
    return value


def _wrap(value):
    """A device's view of a NumPy result: arrays and NumPy scalars as StrictArrays (scalars 0-d, as CuPy gives)."""
    if isinstance(value, np.ndarray):
        return StrictArray(value)
    if isinstance(value, np.generic):
        return StrictArray(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _on_device(fn, host_allowed: bool = False):
    """`fn` (a NumPy function) taking and giving device arrays (and host arrays too when `host_allowed`)."""
    name = getattr(fn, "__name__", "function")

    def call(*args, **kwargs):
        if _fusing(args) or _fusing(kwargs.values()):
            if name not in _FUSABLE_FUNCTIONS:
                raise TypeError(f"{_NOT_FUSABLE} {name} is not one of them.")
            return _fused(fn, args, kwargs)
        return _wrap(fn(*_unwrap(args, host_allowed), **_unwrap(kwargs, host_allowed)))

    call.__name__ = name
    return call


class StrictArray:
    """A device array over a NumPy array: NumPy and implicit conversions refuse it; `.get()` copies it out."""

    __slots__ = ("_data",)
    __array_ufunc__ = None  # NumPy's ufuncs refuse it, as they refuse a CuPy array

    def __init__(self, data: np.ndarray) -> None:
        self._data = data

    def __array__(self, *args, **kwargs):
        raise TypeError(_REFUSED)

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(f"numpy.{func.__name__} was given a device array. {_REFUSED}")

    def get(self) -> np.ndarray:
        """A NumPy copy of the array (what CuPy's `.get()` gives)."""
        return self._data.copy()

    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def strides(self) -> tuple:
        return self._data.strides

    @property
    def T(self) -> StrictArray:  # noqa: N802  (NumPy's name)
        return StrictArray(self._data.T)

    @property
    def real(self) -> StrictArray:
        return StrictArray(self._data.real)

    @property
    def imag(self) -> StrictArray:
        return StrictArray(self._data.imag)

    @property
    def flags(self):
        return self._data.flags

    def __getattr__(self, name: str):
        if name.startswith("__"):  # NumPy's array protocols (__array_interface__, ...) would hand out the data
            raise AttributeError(name)
        attribute = getattr(self._data, name)
        return _on_device(attribute) if callable(attribute) else _wrap(attribute)

    def __getitem__(self, key):
        return _wrap(self._data[_unwrap(key)])

    def __setitem__(self, key, value) -> None:
        self._data[_unwrap(key)] = _unwrap(value)

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self):
        return (_wrap(row) for row in self._data)

    def __bool__(self) -> bool:
        return bool(self._data)

    def __int__(self) -> int:
        return int(self._data)

    def __float__(self) -> float:
        return float(self._data)

    def __complex__(self) -> complex:
        return complex(self._data)

    def __index__(self) -> int:
        return operator.index(self._data)

    def __repr__(self) -> str:
        return f"StrictArray({self._data!r})"

    def __hash__(self) -> int:
        return id(self)


def _fusion_operands(values) -> list:
    """The NumPy operands of a fused computation: FusionValues' data, scalars as they are; arrays refused."""
    operands = []
    for value in values:
        if type(value) is FusionValue:
            value = value._data
        elif isinstance(value, StrictArray | np.ndarray):
            raise TypeError(f"{_NOT_FUSABLE} an array that is not an argument of the fused function was used.")
        operands.append(value)
    return operands


def _fused(fn, args: tuple, kwargs: dict):
    """`fn` (NumPy's) on the data of FusionValues and scalars, as a FusionValue."""
    if kwargs:
        raise TypeError(f"{_NOT_FUSABLE} {getattr(fn, '__name__', fn)} was given keyword arguments {sorted(kwargs)}.")
    return FusionValue(np.asarray(fn(*_fusion_operands(args))))


def _operator(name: str, compute):
    """NumPy's array operator `name` as a method: `compute(method, operands)` applies it to the operands' data."""
    method = getattr(np.ndarray, name)

    def apply(self, *others):
        return compute(method, (self,) + others)

    apply.__name__ = name
    return apply


def _in_place(name: str):
    method = getattr(np.ndarray, name)

    def apply(self, other):
        self._data = method(self._data, _unwrap(other))
        return self

    apply.__name__ = name
    return apply


_ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor")
_COMPARISONS_AND_UNARY = ("lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "abs", "invert")


def _install_operators(cls, compute, binary: tuple) -> None:
    """Gives `cls` the binary operators `binary` (and their reflections), comparisons and unary operators."""
    for name in binary:
        setattr(cls, f"__{name}__", _operator(f"__{name}__", compute))
        setattr(cls, f"__r{name}__", _operator(f"__r{name}__", compute))
    for name in _COMPARISONS_AND_UNARY:
        setattr(cls, f"__{name}__", _operator(f"__{name}__", compute))


_install_operators(StrictArray, lambda method, operands: _wrap(method(*_unwrap(operands))),
                   _ARITHMETIC + ("matmul", "lshift", "rshift", "divmod"))
for _name in _ARITHMETIC:
    setattr(StrictArray, f"__i{_name}__", _in_place(f"__i{_name}__"))


_NOT_FUSABLE = ("A function compiled with fuse (as cupy.fuse) may use only ufuncs, where, clip and operators on its "
                "arguments and scalars:")
# Namespace functions that CuPy's fusion compiles as ufuncs.
_FUSABLE_FUNCTIONS = frozenset({"where", "clip"})


class FusionValue:
    """What a function compiled with `fuse` gets for a device array: as CuPy's fusion variables, it has a dtype
    and a number of dimensions, takes part in ufuncs and operators, and refuses everything else."""

    __slots__ = ("_data",)
    __array_ufunc__ = None

    def __init__(self, data: np.ndarray) -> None:
        self._data = data

    def __array__(self, *args, **kwargs):
        raise TypeError(f"{_NOT_FUSABLE} a fusion variable was converted to a NumPy array.")

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(f"{_NOT_FUSABLE} numpy.{func.__name__} was given a fusion variable.")

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def __getattr__(self, name: str):
        raise TypeError(f"{_NOT_FUSABLE} .{name} of a fusion variable was read.")

    def __bool__(self) -> bool:
        raise TypeError(f"{_NOT_FUSABLE} a fusion variable was used as a condition.")


_install_operators(FusionValue, lambda method, operands: _fused(method, operands, {}), _ARITHMETIC)


def _fusing(values) -> bool:
    return any(type(value) is FusionValue for value in values)


class _Ufunc:
    """A NumPy ufunc on device arrays, with the methods CuPy's ufuncs have (reduce, accumulate, at, ...)."""

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self.nin, self.nout = ufunc.nin, ufunc.nout

    def __call__(self, *args, **kwargs):
        if _fusing(args):
            return _fused(self._ufunc, args, kwargs)
        return _wrap(self._ufunc(*_unwrap(args), **_unwrap(kwargs)))

    def __getattr__(self, name: str):
        return _on_device(getattr(self._ufunc, name))


class StrictNamespace(types.SimpleNamespace):
    """NumPy's namespace (or a submodule of it) taking and giving StrictArrays; dtypes and constants pass through."""

    def __init__(self, module: types.ModuleType = np, name: str = "strict_numpy") -> None:
        super().__init__()
        self.__dict__["_module"] = module
        self.__dict__["__name__"] = name

    # A namespace is one thing, as a module is: kernels key caches by it.
    __hash__ = object.__hash__

    def __eq__(self, other) -> bool:
        return self is other

    def __getattr__(self, name: str):
        target = getattr(self._module, name)
        if isinstance(target, types.ModuleType):
            value = StrictNamespace(target, f"{self.__name__}.{name}")
        elif isinstance(target, np.ufunc):
            value = _Ufunc(target)
        elif callable(target) and not isinstance(target, type):
            value = _on_device(target, host_allowed=name in _CONSTRUCTORS)
        else:
            value = target
        self.__dict__[name] = value
        return value

    def fuse(self, fn):
        """CuPy's `fuse`: `fn` as one kernel over device arrays (here: run on FusionValues, see the module)."""

        def fused(*args):
            if not any(type(arg) is StrictArray for arg in args):
                return fn(*args)  # as CuPy, which compiles nothing without a device array among the arguments
            result = fn(*(FusionValue(arg._data) if type(arg) is StrictArray else arg for arg in args))
            if isinstance(result, tuple):
                return tuple(_from_fusion(value) for value in result)
            return _from_fusion(result)

        fused.__name__ = getattr(fn, "__name__", "fused")
        return fused

    def asnumpy(self, value):
        """CuPy's `asnumpy`: a device array copied to the host (host values as they are)."""
        return value.get() if isinstance(value, StrictArray) else np.asarray(value)


def _from_fusion(value):
    """A fused function's result as a device array."""
    return StrictArray(value._data) if type(value) is FusionValue else _wrap(np.asarray(value))


STRICT_XP = StrictNamespace()
