"""Straight-line code for a plan: one Python line per node, in the order one thread runs them.

    dense_MatMul = mat_mul(x, dense_kernel)  # dense/MatMul = MatMul(x:0, dense/kernel:0)

Values are named after the ops that compute them (tfnb/runtime/naming.py); kernels and constants
are bound values of the function; a Send and its Recv are two lines that meet in the step's
rendezvous; `del` releases each value right after its last reader. Unless the plan is plain, a
kernel may write into an input that nothing reads afterwards (tfnb/runtime/buffer_reuse.py) and
lines may be fused (tfnb/runtime/fusion.py). The source is kept on the plan, to be printed and read.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tfnb.framework.operation import Operation
from tfnb.kernels.registry import KernelDef
from tfnb.runtime.buffer_reuse import donatable, inplace_call
from tfnb.runtime.naming import Names, kernel_name
from tfnb.runtime.plan import FEED, OUTPUT, Node, Plan

_counter = itertools.count()


@dataclass
class Step:
    """One line of straight-line code: a node's kernel call (several nodes' when lines are fused)."""

    node: Node
    kernel: Callable | None
    needs_step: bool
    args: list[str]
    outputs: list[str]
    kernel_def: KernelDef | None = None  # its registration (None for transfers): fusions, fresh outputs
    fused: tuple = ()  # the nodes this line computes together (tfnb/runtime/fusion.py); `node` is the first
    unfused: Callable | None = None  # a fused line's kernel of `node` alone, whose variants may fuse the line further

    @property
    def op(self) -> Operation | None:
        return self.node.op

    @property
    def device(self) -> str:
        return self.node.device

    @property
    def fresh_output(self) -> bool:
        """Whether the kernel is registered fresh_output: its outputs may be donated (buffer_reuse.py)."""
        return self.kernel_def is not None and self.kernel_def.fresh_output


@dataclass
class TimedLine:
    """What one line of a timed run computed (RunOptions.SOFTWARE_TRACE): a fused line is named after the last op it
    fuses, whose output it gives, as TF's traces name Grappler's fused ops, and typed by the ops it fuses."""

    node_name: str
    op_type: str
    device: str
    label: str


@dataclass
class Compiled:
    """A generated function `run(feeds, step) -> fetched values`, its source, and which line runs which node.

    `timed(finish)` compiles the same function with every kernel line timed: it appends
    (TimedLine, start, end, thread, cpu seconds) to `step.trace` after each, two reads each of the clock and of the
    process's CPU time per line. On a device that queues work (a GPU), `finish[device]()` runs before a line's end
    is read, so a line's time is the device's.
    """

    source: str
    run: Callable
    line_nodes: dict[int, Node]
    lines: list = field(default_factory=list, repr=False)
    bound: dict = field(default_factory=dict, repr=False)
    label: str = ""

    def timed(self, finish: dict[str, Callable[[], None]]) -> Compiled:
        return _timed_function(self.lines, self.bound, self.label, finish)


def build_steps(plan: Plan, names: Names, bind: Callable) -> tuple[list[Step], dict]:
    """The plan's lines, and the values bound into the function (constants and folded values).

    `bind(node)` gives the node's kernel callable, whether it takes the step, and its registration (or None).
    A Const's value is bound once instead of calling its kernel in every run.
    """
    constants: dict[str, object] = dict(plan.constants)
    steps: list[Step] = []
    for node in plan.nodes:
        args = [value.name for value in node.inputs]
        if node.op is not None and node.inputs and all(v.tensor.shape.ndims == 0 for v in node.inputs):
            args = [scalar_constant(constants, names, a) for a in args]
        kernel, needs_step, kernel_def = bind(node)
        outputs = [value.name for value in node.outputs]
        if node.type == "Const":
            constants[outputs[0]] = kernel()
            kernel = None
        steps.append(Step(node, kernel, needs_step, args, outputs, kernel_def))
    return steps, constants


def generate(steps: list[Step], constants: dict, plan: Plan, names: Names, donate: bool,
             device: str | None = None) -> Compiled:
    """Writes and compiles `run(feeds, step)` for the plan's lines (see the module docstring).

    With `device`, only that device's lines: a partition's function, run on a thread of its own beside the
    other devices'; it returns the fetched values computed on that device, in plan order.
    """
    if device is not None:
        steps = [step for step in steps if step.device == device]
    returned = [v for v in plan.fetch_values if v is not None and (device is None or v.device == device
                                                                   and v.kind == OUTPUT)]
    fetched = {value.name for value in returned}
    fetched_tensors = {value.tensor for value in plan.fetch_values if value is not None}
    last_use = _last_uses(steps)
    last_read = _last_reads_through_views(steps, last_use)
    fresh = {name for step in steps if step.fresh_output for name in step.outputs}
    bound: dict[str, object] = dict(constants)
    lines = _feed_lines(plan, device, last_use)
    for index, step in enumerate(steps):
        if step.kernel is None or step.node.type == "NoOp":
            continue
        name = names.new(kernel_name(step.node.type))
        bound[name] = step.kernel
        call = f"{name}({', '.join((['step'] if step.needs_step else []) + step.args)})"
        if donate and step.op is not None and not step.needs_step and not step.fused:
            donors = [i for i, (arg, value) in enumerate(zip(step.args, step.node.inputs))
                      if arg == value.name and arg not in bound and value.kind != FEED
                      and donatable(value.tensor, step.op, fetched_tensors, last_read.get(arg) == index, arg in fresh)]
            call = inplace_call(step.kernel, name, step.args, donors) or call
        lines.append(Line(_assignment(step.outputs, call, last_use, fetched), describe(step), step.node, step.fused))
        dead = [a for a in dict.fromkeys(step.args) if last_use.get(a) == index and a not in fetched and a not in bound]
        if dead:
            lines.append(Line(f"del {', '.join(dead)}"))
    if device is None:
        returned = plan.fetch_values
    results = [value.name if value is not None else "None" for value in returned]
    lines.append(Line(f"return ({''.join(r + ', ' for r in results)})"))
    return assemble(lines, bound, "plan" if device is None else f"partition {device}")


def _feed_lines(plan: Plan, device: str | None, last_use: dict) -> list[Line]:
    """Unpacking the feeds: all of them in a whole plan's function, those it reads in a partition's."""
    if device is None:
        return [Line(f"{', '.join(v.name for v in plan.feed_values)}, = feeds")] if plan.feed_values else []
    return [Line(f"{value.name} = feeds[{k}]") for k, value in enumerate(plan.feed_values) if value.name in last_use]


def _assignment(outputs: list[str], call: str, last_use: dict, fetched: set) -> str:
    live = [o if o in last_use or o in fetched else "_" for o in outputs]
    if not live or live == ["_"]:
        return call
    return f"{', '.join(live)} = {call}"


@dataclass
class Line:
    """A line of a generated function's body: code (indented relative to the body), a comment, its node."""

    code: str
    comment: str = ""
    node: Node | None = None
    fused: tuple = ()  # the nodes of a fused line (Step.fused)

    def text(self) -> str:
        # Graph names appear only in comments; anything that could end a comment's line is replaced.
        comment = "".join(c if c.isprintable() else "?" for c in self.comment)
        return f"{self.code}  # {comment}" if comment else self.code


def assemble(lines: list[Line], bound: dict[str, object], label: str) -> Compiled:
    """Compiles `def run(feeds, step)` from body lines, with the `bound` values as its closure.

    Generated code only ever holds identifiers made by tfnb/runtime/naming.py, fixed keywords and
    numbers: no text from a graph is pasted into it, except inside one-line `#` comments.
    """
    params = sorted(bound)
    source = (f"def _make({', '.join(params)}):\n    def run(feeds, step):\n"
              + "".join(f"        {line.text()}\n" for line in lines) + "    return run\n")
    namespace: dict = {}
    exec(compile(source, f"<tfnb {label} {next(_counter)}>", "exec"), namespace)
    run = namespace["_make"](*[bound[p] for p in params])
    line_nodes = {number + 3: line.node for number, line in enumerate(lines) if line.node is not None}
    return Compiled(source, run, line_nodes, lines, bound, label)


def _timed_function(lines: list[Line], bound: dict, label: str, finish: dict[str, Callable[[], None]]) -> Compiled:
    """The function of `lines` with each kernel line between two reads of the clock and of the process's CPU time
    (every thread's: the line's helper threads work for it), recorded into `step.trace` (a line on a device of
    `finish` waits for the device before its end is read)."""
    timed_lines = [Line("_thread = _get_ident()")]
    bound = dict(bound, _clock=time.perf_counter, _cpu=time.process_time, _get_ident=threading.get_ident)
    waits = {device: f"_finish_{k}" for k, device in enumerate(finish)}
    bound.update({waits[device]: wait for device, wait in finish.items()})
    for line in lines:
        code = line.code.lstrip()
        if line.node is None or code.endswith(":") or code.startswith(("del ", "return ")):
            timed_lines.append(line)
            continue
        indent, name = line.code[:len(line.code) - len(code)], f"_line_{len(bound)}"
        nodes = line.fused or (line.node,)
        bound[name] = TimedLine(nodes[-1].name, fused_type(nodes), line.node.device, line.comment)
        timed_lines += [Line(f"{indent}_cpu_start = _cpu()"), Line(f"{indent}_start = _clock()"), line]
        if line.node.device in waits:
            timed_lines.append(Line(f"{indent}{waits[line.node.device]}()"))
        timed_lines.append(Line(f"{indent}step.trace.append(({name}, _start, _clock(), _thread, _cpu() - _cpu_start))"))
    return assemble(timed_lines, bound, f"timed {label}")


def fused_type(nodes) -> str:
    """The op type of a line computing `nodes`: their types joined by "+", the first run of repeats counted once, as
    lines of peers computed as one have it (tfnb/runtime/fusion.py): "3x(Conv2D+BiasAdd+Relu)", or
    "MaxPool+3x(Conv2D+BiasAdd+Relu)" with a pool beside them."""
    types = [node.type for node in nodes]
    for start in range(len(types)):
        for period in range(1, (len(types) - start) // 2 + 1):
            pattern, repeats = types[start:start + period], 1
            while types[start + repeats * period:start + (repeats + 1) * period] == pattern:
                repeats += 1
            if repeats > 1:
                run = f"{repeats}x({'+'.join(pattern)})" if period > 1 else f"{repeats}x{pattern[0]}"
                return "+".join(types[:start] + [run] + types[start + repeats * period:])
    return "+".join(types)


def describe(step: Step) -> str:
    """The comment of a line: the op it runs (`name = Type(inputs)`), the fused ops, or the transfer."""
    if step.fused:
        return "fused " + " + ".join(f"{node.name} = {node.type}" for node in step.fused)
    return step.node.describe()


def _last_reads_through_views(steps: list[Step], last_use: dict[str, int]) -> dict[str, int]:
    """For each value, the last line that reads it or a view of it: the outputs of a kernel that is not
    registered fresh_output (a reshape, a slice) may share its inputs' memory, so none may be overwritten earlier."""
    last = dict(last_use)
    for step in reversed(steps):
        if step.fresh_output or step.op is None:
            continue
        reach = max((last.get(output, -1) for output in step.outputs), default=-1)
        for arg in step.args:
            if reach > last.get(arg, -1):
                last[arg] = reach
    return last


def _last_uses(steps: list[Step]) -> dict[str, int]:
    last: dict[str, int] = {}
    for index, step in enumerate(steps):
        for arg in step.args:
            last[arg] = index
    return last


def scalar_constant(constants: dict, names: Names, name: str) -> str:
    """The name of a bound 0-d constant's NumPy-scalar form, for ops whose inputs are all 0-d.

    Operators on NumPy scalars skip the ufunc machinery (ten times faster), but an array plus a
    NumPy scalar is slower than plus a 0-d array, so each consumer gets the form that suits it.
    """
    value = constants.get(name)
    if type(value) is not np.ndarray or value.ndim != 0 or value.dtype.kind not in "biufc":
        return name
    scalar = names.scalar_of(name)
    constants.setdefault(scalar, value[()])
    return scalar
