"""Turns an ordered, placed plan into a straight-line Python function.

Each node becomes one line, `t7_0 = k7(t3_0, c5)`; constants are bound values, no_ops vanish,
a value crossing devices goes through one transfer per destination device (the paper's
Send/Recv), and `del` releases each intermediate right after its last consumer. The function's
source is kept on the plan, so a plan can be printed and read. A traced variant times each line.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.kernels import find_kernel
from tfnb.runtime.buffer_reuse import donatable, inplace_call

_counter = itertools.count()


@dataclass
class Step:
    """One line of a plan: an op's kernel call, or a transfer of a tensor to another device."""

    op: Operation | None
    kernel: Callable | None
    needs_step: bool
    device: str
    args: list[str]
    outputs: list[str]
    transfer_of: Tensor | None = None
    fresh_output: bool = False  # the kernel is registered fresh_output: its outputs may be donated
    fused: tuple = ()  # the ops this line computes together (tfnb/runtime/fusion.py); `op` is the first of them


@dataclass
class Compiled:
    source: str
    run: Callable
    line_ops: dict[int, Operation]
    steps: list[Step]


def var(tensor: Tensor, device: str | None = None, home: str | None = None) -> str:
    """The local variable name holding `tensor` (on `device`, if it was moved there)."""
    name = f"t{tensor.op._id}_{tensor.value_index}"
    if device is not None and device != home:
        name += "_on_" + device.rsplit(":", 2)[-2].lower() + device.rsplit(":", 1)[-1]
    return name


def build_steps(ops, feeds, rewritten, placement, bind, transfer, host: str) -> tuple[list[Step], dict]:
    """The plan's lines: kernel calls in order, transfers inserted before each first remote use.

    Values folded by the rewrites become bound constants on the host device.
    """
    fed = set(feeds)
    constants: dict[str, object] = {var(t): value for t, value in rewritten.folded.items()}
    steps: list[Step] = []
    moved: set[str] = set()
    for op in ops:
        device = placement[op].name
        args = []
        for tensor in op.inputs:
            tensor = rewritten.resolve(tensor)
            home = host if tensor in fed or tensor in rewritten.folded else placement[tensor.op].name
            name = var(tensor)
            if home != device:
                remote = var(tensor, device, home)
                if remote not in moved:
                    moved.add(remote)
                    steps.append(Step(None, transfer(home, device), False, device, [name], [remote], tensor))
                name = remote
            args.append(name)
        if op.inputs and all(t.shape.ndims == 0 for t in op.inputs):
            args = [scalar_constant(constants, a) for a in args]
        kernel, needs_step = bind(op, placement[op])
        outputs = [var(t) for t in op.outputs]
        if op.type == "Const":
            constants[outputs[0]] = kernel()
            kernel = None
        kernel_def = find_kernel(op.type, placement[op].device_type)
        steps.append(Step(op, kernel, needs_step, device, args, outputs,
                          fresh_output=kernel_def is not None and kernel_def.fresh_output))
    return steps, constants


def generate(steps: list[Step], constants: dict, feeds, fetches, host: str, traced: bool) -> Compiled:
    """Writes and compiles the plan function `run(feeds, step) -> tuple of fetched values`."""
    fetched = {var(t) for t in fetches if isinstance(t, Tensor)}
    fetched_tensors = {t for t in fetches if isinstance(t, Tensor)}
    used_at = _last_uses(steps)
    fresh = {o for step in steps if step.fresh_output for o in step.outputs}
    body: list[str] = []
    line_ops: dict[int, Operation] = {}
    bound: dict[str, object] = dict(constants)
    feed_names = [var(t) for t in feeds]
    if feed_names:
        body.append(f"{', '.join(feed_names)}, = feeds")
    for index, step in enumerate(steps):
        if step.op is not None and (step.kernel is None or step.op.type == "NoOp"):
            if traced:
                body.append(f"_record(step, {index}, _clock(), _clock(), ())")
            continue
        kernel_name = f"k{step.op._id}" if step.op is not None else f"recv{index}"
        bound[kernel_name] = step.kernel
        call_args = (["step"] if step.needs_step else []) + step.args
        call = f"{kernel_name}({', '.join(call_args)})"
        if step.op is not None and not step.needs_step and not step.fused:
            donors = [i for i, (arg, tensor) in enumerate(zip(step.args, step.op.inputs))
                      if arg == var(tensor) and arg not in bound and arg not in feed_names
                      and donatable(tensor, step.op, fetched_tensors, used_at.get(arg) == index, arg in fresh)]
            call = inplace_call(step.kernel, kernel_name, step.args, donors) or call
        live_outputs = [o if o in used_at or o in fetched else "_" for o in step.outputs]
        if not live_outputs:
            statement = call
        elif len(live_outputs) == 1:
            statement = call if live_outputs[0] == "_" else f"{live_outputs[0]} = {call}"
        else:
            statement = f"{', '.join(live_outputs)} = {call}"
        if traced:
            body.append("_start = _clock()")
        line_ops[len(body) + 3] = step.op if step.op is not None else step.transfer_of.op
        body.append(f"{statement}  # {_describe(step)}")
        if traced:
            body.append(f"_record(step, {index}, _start, _clock(), ({''.join(o + ', ' for o in step.outputs if o != '_' and o in live_outputs)}))")
        dead = [a for a in dict.fromkeys(step.args) if used_at.get(a) == index and a not in fetched and a not in bound]
        if dead:
            body.append(f"del {', '.join(dead)}")
    results = [var(t) if isinstance(t, Tensor) else "None" for t in fetches]
    body.append(f"return ({''.join(r + ', ' for r in results)})")
    params = sorted(bound)
    source = (f"def _make({', '.join(params + (['_record', '_clock'] if traced else []))}):\n"
              f"    def run(feeds, step):\n" + "".join(f"        {line}\n" for line in body) + "    return run\n")
    namespace: dict = {}
    code = compile(source, f"<tfnb plan {next(_counter)}>", "exec")
    exec(code, namespace)
    extra = [record, time.perf_counter] if traced else []
    run = namespace["_make"](*[bound[p] for p in params], *extra)
    return Compiled(source, run, line_ops, steps)


def _describe(step: Step) -> str:
    """A comment for a plan line: the op's name and type, or the transfer it makes."""
    if step.op is None:
        return f"Recv {step.transfer_of.name} on {step.device}"
    if step.fused:
        return "fused " + " + ".join(f"{op.name} = {op.type}" for op in step.fused)
    return f"{step.op.name} = {step.op.type}({', '.join(t.name for t in step.op.inputs)})"


def record(step, index: int, start: float, end: float, outputs: tuple) -> None:
    """Appends one traced line's timing, thread and output summaries to the step's trace."""
    step.trace.append((index, start, end, threading.get_ident(), summarize(outputs)))


def summarize(outputs) -> tuple:
    """(shape, dtype name, bytes) of each output value, for traces."""
    summaries = []
    for value in outputs:
        dtype = getattr(value, "dtype", None)
        summaries.append((tuple(getattr(value, "shape", ())), dtype.name if dtype is not None else type(value).__name__,
                          int(getattr(value, "nbytes", 0))))
    return tuple(summaries)


def _last_uses(steps: list[Step]) -> dict[str, int]:
    last: dict[str, int] = {}
    for index, step in enumerate(steps):
        for arg in step.args:
            last[arg] = index
    return last


def scalar_constant(constants: dict, name: str) -> str:
    """The name of a bound 0-d constant's NumPy-scalar form, for ops whose inputs are all 0-d.

    Operators on NumPy scalars skip the ufunc machinery (ten times faster), but an array plus a
    NumPy scalar is slower than plus a 0-d array, so each consumer gets the form that suits it.
    """
    value = constants.get(name)
    if type(value) is not np.ndarray or value.ndim != 0 or value.dtype.kind not in "biufc":
        return name
    constants.setdefault(name + "_s", value[()])
    return name + "_s"


def to_host(value):
    """A device array as a NumPy array (NumPy values pass through)."""
    if isinstance(value, np.ndarray | np.generic) or not hasattr(value, "get"):
        return value
    return value.get()
