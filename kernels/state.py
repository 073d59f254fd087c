"""Variable kernels: values live in the session's resource containers, keyed by the variable's shared name.

A value read earlier in a step (or fetched) keeps the value it had when it was read: an assign
stores a private copy, and an update (assign_add, an optimizer's apply) writes into the stored
array only when nothing else holds a reference to it, else into a new array (copy-on-write,
decided by the array's reference count). The plan drops each value after its last use, so in a
training step the update is in place and allocates nothing.

Reads and updates of one variable take its lock (an update for all its work, a read only to take
its reference), so a read sees a value whole, before or after an update, never half-written: once
a reader holds the array, an update finds it shared and writes a new one. TF's use_locking=False
lets a read see an update in progress; tfnb never does.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tfnb.framework.errors import FailedPreconditionError, InvalidArgumentError
from tfnb.kernels.registry import kernel


@dataclass(frozen=True, slots=True)
class ResourceHandle:
    """What a VarHandleOp outputs: the variable's container and name, that container's dict of values, and the
    variable's lock (see the module docstring)."""

    container: str
    name: str
    values: dict = field(repr=False, compare=False)
    lock: threading.RLock = field(repr=False, compare=False)


@kernel("VarHandleOp")
def var_handle(node):
    container = node.attrs["container"]
    name, values = node.attrs["shared_name"] or node.name, node.resources.container(container)
    handle = ResourceHandle(container, name, values, _variable_lock(values, name))
    return lambda: handle


def _uninitialized(handle: ResourceHandle) -> FailedPreconditionError:
    return FailedPreconditionError(None, None, f"Attempting to use uninitialized value {handle.name}")


@kernel("ReadVariableOp")
def read_variable(node):
    def read(handle):
        with handle.lock:
            value = handle.values.get(handle.name)
        if value is None:
            raise _uninitialized(handle)
        return value
    return read


def _freezer(node):
    """Marks a stored array read-only where the array type allows it (NumPy), so no kernel can change it."""
    if node.xp is not np:
        return lambda array: array

    def freeze(array):
        array.flags.writeable = False
        return array
    return freeze


def _dims(node) -> tuple | None:
    return node.attrs["shape"].as_tuple()


@kernel("AssignVariableOp")
def assign_variable(node):
    xp, freeze, dims = node.xp, _freezer(node), _dims(node)
    shape_text = "<unknown>" if dims is None else "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"

    def fits(shape) -> bool:
        return dims is None or len(shape) == len(dims) and all(d is None or d == s for d, s in zip(dims, shape))

    def assign(handle, value):
        if not fits(value.shape):
            raise InvalidArgumentError(None, None, f"Trying to assign variable {handle.name} with wrong shape. "
                                       f"Expected {shape_text} got {list(value.shape)}")
        stored = freeze(xp.array(value, copy=True))
        with handle.lock:
            handle.values[handle.name] = stored
        return stored
    return assign


# A stored array referenced only by its container entry, plus the two references that exist while
# update_variable tests it (its local name `old` and getrefcount's argument).
_SOLE_OWNER_REFCOUNT = 3


_LOCKS: dict[tuple[int, str], threading.RLock] = {}


def _variable_lock(values: dict, name: str) -> threading.RLock:
    """The one lock of the variable `name` in the container `values`, whichever handle asks (made once per bind)."""
    key = (id(values), name)
    lock = _LOCKS.get(key)
    if lock is None:
        lock = _LOCKS.setdefault(key, threading.RLock())
    return lock


def variable_lock(handle: ResourceHandle) -> threading.RLock:
    """The lock that serializes reads and updates of one variable, so steps running at once lose no update."""
    return handle.lock


def update_variable(handle: ResourceHandle, xp, compute_into: Callable) -> object:
    """Updates a variable with `compute_into(old, out)`, which writes the new value into `out`.

    `out` is the stored array itself when no one else references it (an in-place update), else a
    new array that replaces it. Returns the stored new value. The update holds the variable's lock,
    so no read takes the array while it is half written. (One function: it runs for every variable of
    every training step.)
    """
    values, name = handle.values, handle.name
    with handle.lock:
        old = values.get(name)
        if old is None:
            raise _uninitialized(handle)
        if sys.getrefcount(old) <= _SOLE_OWNER_REFCOUNT:
            flags = getattr(old, "flags", None)
            if flags is None:
                compute_into(old, old)
                return old
            flags.writeable = True
            try:
                compute_into(old, old)
            finally:
                flags.writeable = False
            return old
        new = xp.empty_like(old)
        compute_into(old, new)
        if xp is np:
            new.flags.writeable = False
        values[name] = new
        return new


def _update_kernel(combine_name: str):
    def factory(node):
        xp = node.xp
        combine = getattr(xp, combine_name)

        def update(handle, delta):
            old = handle.values.get(handle.name)
            if old is None:
                raise _uninitialized(handle)
            if old.shape != delta.shape:
                raise InvalidArgumentError(None, None, f"Cannot update variable with shape {list(old.shape)} using "
                                           f"a Tensor with shape {list(delta.shape)}, shapes must be equal.")
            del old
            return update_variable(handle, xp, lambda current, out: combine(current, delta, out=out))
        return update
    return factory


kernel("AssignAddVariableOp")(_update_kernel("add"))
kernel("AssignSubVariableOp")(_update_kernel("subtract"))


@kernel("VarIsInitializedOp")
def var_is_initialized(node):
    freeze = _freezer(node)
    initialized, uninitialized = freeze(node.xp.asarray(True)), freeze(node.xp.asarray(False))
    return lambda handle: initialized if handle.name in handle.values else uninitialized


@kernel("ReportUninitialized", fresh_output=True)
def report_uninitialized(node):
    # Strings live on the host as NumPy object arrays whatever the device, so the result is always NumPy.
    names = [name.encode() for name in node.attrs["names"]]

    def report(*flags):
        return np.array([n for n, flag in zip(names, flags) if not flag], dtype=object)
    return report
