"""The kernel registry: implementations of op types per device type.

A kernel is registered as a *factory*: given a `KernelNode` (the op's attrs, dtypes, device, the
device's array namespace `xp` and the session's resources), it returns the callable that maps
input arrays to output arrays. Binding once per session keeps per-run work to the call itself.
Most kernels are written once against `xp` and registered for every device type; a
device-specific kernel is registered for one device type and overrides the generic one there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

GENERIC = "*"


@dataclass
class KernelNode:
    """What a kernel factory may know about the op it implements; no graph objects."""

    op_type: str
    name: str
    attrs: dict
    input_dtypes: tuple
    output_dtypes: tuple
    output_shapes: tuple = ()
    device: str = "/job:localhost/replica:0/task:0/device:CPU:0"
    device_type: str = "CPU"
    xp: Any = np
    resources: Any = None
    functions: Any = None  # the session's FunctionLibrary, for kernels that call graph functions (tf.data's map)


@dataclass
class StepContext:
    """Per-run state given to kernels registered with `needs_step=True` (and to Sends and Recvs: the rendezvous)."""

    step_id: int
    timeout_in_ms: int = 0
    frame: Any = None
    trace: list = field(default_factory=list)
    rendezvous: Any = None
    deadline: float | None = None  # time.monotonic() by which the run must end (RunOptions.timeout_in_ms)

    def __post_init__(self) -> None:
        if self.timeout_in_ms > 0 and self.deadline is None:
            self.deadline = time.monotonic() + self.timeout_in_ms / 1000


@dataclass(frozen=True)
class Epilogue:
    """Ops that read a kernel's output one after the other, which the kernel's `variant` computes in the same
    pass, as each part of the output is written (tfnb/runtime/fusion.py).

    The first op reads the kernel's output as its input `input` (0 unless said), each next op the previous
    one's output as its input 0. Their other inputs are passed to the variant after the kernel's own, in order,
    unless `reused` maps (position in `ops`, input index) to the kernel's input that it must be: then the
    variant uses that one. `attrs`: (name, value) pairs that the first op's attrs must hold, for a variant that
    computes it only so (MomentumOptimizer's update without Nesterov's step).
    """

    ops: tuple[str, ...]
    variant: str
    reused: tuple[tuple[tuple[int, int], int], ...] = ()
    input: int = 0
    attrs: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class Sibling:
    """An op reading the same input as a kernel (its input `shared[1]` is the kernel's `shared[0]`), with the same
    attrs, that the kernel's `variant` computes together with it: both outputs, the shared input read once.

    `tasks` names a variant of the same arguments giving that work as tasks, (cost, function) pairs each for one
    thread: one per output, in order, or one giving them all. Lines of independent pairs then run as one, all their
    tasks side by side (tfnb/runtime/fusion.py).
    """

    op: str
    variant: str
    shared: tuple[int, int]
    tasks: str = ""


@dataclass(frozen=True)
class Workspace:
    """A later op that the kernel can save work for, as oneDNN's pools keep a workspace for their gradients:
    the kernel's `variant` returns its output and a workspace value, and the later op's kernel, reading the
    kernel's input 0 as its input 0 and the kernel's output 0 as its input `reads`, with the same attrs,
    runs its `reader` variant with the workspace as one more argument, after its own (tfnb/runtime/fusion.py)."""

    op: str
    variant: str
    reader: str
    reads: int


@dataclass(frozen=True)
class Peers:
    """Lines of the kernel's op that read one input (`shared`) with the same attrs, each fused with the same ops
    (or none), and whose input `alike` has one static shape but for its last axis: the kernel's `variant`
    computes them as one, as TensorRT's horizontal fusion does (several convolutions of one input as one, their
    filters side by side).

    `variant(fused_ops)` gives, for lines fusing those op types, `merged(shared, peer_args)`, or None: peer_args
    holds each line's other arguments, in order; `merged` returns every line's outputs, in order, or None where
    the arrays do not line up (each line then runs by itself). With `summed` (an op type, AddN), the peers are
    lines whose output 0 only one such op reads: `merged(shared, peer_args, addends)` returns that op's output,
    the sum of the lines' outputs 0 and of its other inputs (`addends`), then the lines' other outputs.
    """

    variant: str
    shared: int
    alike: int
    summed: str | None = None


@dataclass(frozen=True)
class Update:
    """A later line that updates the variable the kernel reads a value of as its input `weight` (ReadVariableOp's),
    fused as `ops` (a weight gradient's product and its descent, momentum or Adam update), and reads the kernel's
    input `shared[0]` as its input `shared[1]`: the kernel's `variant` performs that update at the kernel's line,
    reading each block of the variable once for both, as a dense layer's input gradient and its weights' update
    (tfnb/runtime/fusion.py).

    `variant(fused_ops, update_attrs)` gives, for a line fusing those op types and an update whose first op has
    those attrs, a function of the line's arguments but the weight, then the update line's arguments, returning
    the line's outputs; None where it has none. It reads the variable before it updates it, and checks every
    argument before it writes anything.
    """

    ops: tuple[str, ...]
    variant: str
    weight: int
    shared: tuple[int, int]


@dataclass(frozen=True)
class KernelDef:
    op_type: str
    device_type: str
    factory: Callable[[KernelNode], Callable]
    needs_step: bool = False
    parallel: bool = False
    fresh_output: bool = False
    epilogues: tuple[Epilogue, ...] = ()
    siblings: tuple[Sibling, ...] = ()
    elementwise: bool | Callable[[tuple], bool] = False
    workspaces: tuple[Workspace, ...] = ()
    peers: Peers | None = None
    updates: tuple[Update, ...] = ()
    streams: bool = False

    def computes_elementwise(self, input_dtypes: tuple) -> bool:
        """Whether the kernel is `elementwise` (see `kernel`) on inputs of these NumPy dtypes."""
        return self.elementwise(input_dtypes) if callable(self.elementwise) else self.elementwise


_KERNELS: dict[tuple[str, str], KernelDef] = {}


def kernel(op_type: str, device_type: str = GENERIC, *, needs_step: bool = False, parallel: bool = False,
           fresh_output: bool = False, epilogues: tuple[Epilogue, ...] = (), siblings: tuple[Sibling, ...] = (),
           elementwise: bool | Callable[[tuple], bool] = False, workspaces: tuple[Workspace, ...] = (),
           peers: Peers | None = None, updates: tuple[Update, ...] = (), streams: bool = False):
    """Decorator registering a kernel factory for an op type on a device type ('*' = every device).

    `parallel`: the kernel splits its own work across the run's threads (kernels/intra_op.py), so a
    plan containing it runs with BLAS in one thread. `fresh_output`: its array outputs are never a
    view, an input, or anything but the plan's to overwrite (tfnb/runtime/buffer_reuse.py).
    `epilogues`, `siblings`, `workspaces`, `peers` and `updates`: the fused variants its callable offers (see
    Epilogue, Sibling, Workspace, Peers and Update). `streams`: its work is a few passes over memory, which a
    second core speeds up little, so that a line of it may run on one thread beside a parallel kernel's line
    (tfnb/runtime/fusion.py, intra_op.run_beside).
    `elementwise`: on arrays of at least one dimension the callable computes each output element from the
    elements at the same (broadcast) position with the namespace's ufuncs, `where` and operators alone, on its
    arguments and scalars (no shapes, no methods, no captured arrays), so that a chain of such kernels compiles
    into one device kernel through the namespace's `fuse` (CuPy's; tfnb/runtime/fusion.py). A predicate of the
    input dtypes when that depends on them.
    """

    def register(factory: Callable[[KernelNode], Callable]) -> Callable[[KernelNode], Callable]:
        key = (op_type, device_type)
        if key in _KERNELS:
            raise KeyError(f"A kernel for {op_type} on {device_type} is already registered")
        _KERNELS[key] = KernelDef(op_type, device_type, factory, needs_step, parallel, fresh_output,
                                  tuple(epilogues), tuple(siblings), elementwise, tuple(workspaces), peers,
                                  tuple(updates), streams)
        return factory

    return register


def simple_kernel(op_type: str, fn_of_xp: Callable[[Any], Callable], device_type: str = GENERIC, *,
                  fresh_output: bool = False, elementwise: bool = False) -> None:
    """Registers a kernel that is a function of the array namespace alone, e.g. `lambda xp: xp.add`."""
    kernel(op_type, device_type, fresh_output=fresh_output, elementwise=elementwise)(lambda node: fn_of_xp(node.xp))


def find_kernel(op_type: str, device_type: str) -> KernelDef | None:
    """The kernel for an op type on a device type: the device's own, else the generic one."""
    return _KERNELS.get((op_type, device_type)) or _KERNELS.get((op_type, GENERIC))


def has_kernel(op_type: str, device_type: str) -> bool:
    return find_kernel(op_type, device_type) is not None


def registered_kernels() -> dict[tuple[str, str], KernelDef]:
    """All kernels, keyed by (op type, device type)."""
    return dict(_KERNELS)
