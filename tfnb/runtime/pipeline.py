"""The compile pipeline, the same for every graph: prune -> order -> rewrite -> place -> partition -> generate.

A request (what to fetch, what to run, what is fed) becomes a Plan (tfnb/runtime/plan.py) and the
functions that run it:

- prune (2015 paper, 4.2): only what the fetches and targets need; fed tensors cut the graph;
- order (3.1): the dependency-count executor run ahead of time;
- rewrite (5.1): common subexpressions merged, constants folded, what nothing reads dropped;
- place (3.2.1): constraints, then the cost model's greedy choice;
- partition (3.2.2): one subgraph per device, Send/Recv pairs where values cross;
- generate: straight-line Python, or Python `while` loops for control flow (fused and reusing
  buffers unless the plan is plain), and the reference executor for traced runs.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.kernels import StepContext, find_kernel, intra_op
from tfnb.kernels.registry import KernelDef
from tfnb.runtime import codegen
from tfnb.runtime.binding import KernelCache
from tfnb.runtime.concurrent import InterOpThreads, run_partitions
from tfnb.runtime.devices import LocalDevice
from tfnb.runtime.executor import ReferenceExecutor
from tfnb.runtime.fusion import fuse
from tfnb.runtime.loop_codegen import NotStructured, compile_structured
from tfnb.runtime.naming import Names
from tfnb.runtime.ordering import dependencies_of, order
from tfnb.runtime.partition import partition
from tfnb.runtime.placement import place
from tfnb.runtime.plan import CONSTANT, FEED, OUTPUT, Node, Plan
from tfnb.runtime.prune import check_placeholders_fed, prune
from tfnb.runtime.rendezvous import Rendezvous, from_bfloat16, recv_kernel, send_kernel, to_bfloat16, transfer
from tfnb.runtime.rewrites import rewrite


@dataclass(frozen=True)
class CompileOptions:
    """What the pipeline may do: the rewrites, kernel fusion, buffer reuse (not in a plain plan), soft placement,
    and lossy compression of what crosses devices."""

    fold: bool = True
    cse: bool = True
    fuse: bool = True
    plain: bool = False
    allow_soft_placement: bool = False
    compress_transfers: bool = False
    intra_op_threads: int = 0
    delay_recvs: bool = True


class Executable:
    """A plan and what runs it: `run(feeds, step)` (the generated code), `run_traced` (the reference executor).

    A plan on several devices and without control flow runs one function per device, each on a thread of its
    own (tfnb/runtime/concurrent.py); `functions` are the generated functions. `threads` is who owns the cores
    while the plan runs and `numpy_state()` NumPy's settings meanwhile (kernels/intra_op.py); `new_step` makes a
    run's step context.
    """

    numpy_state = intra_op.KernelNumpyState

    def __init__(self, plan: Plan, functions: list[codegen.Compiled], run: Callable | None,
                 make_reference: Callable[[], ReferenceExecutor], threads, inter_op: InterOpThreads | None,
                 make_timed: Callable[[], tuple[Callable, list[codegen.Compiled]]] | None = None) -> None:
        self.plan = plan
        self.functions = functions
        self._make_timed = make_timed
        self._timed: Callable | None = None
        self.threads = threads if threads is not None else contextlib.nullcontext()
        self.inter_op = inter_op
        self._make_reference = make_reference
        self._reference: ReferenceExecutor | None = None
        self.needs_rendezvous = any(node.is_transfer for node in plan.nodes)
        self.run = run if run is not None else self._run_reference
        self._lines = {compiled.run.__code__: compiled.line_nodes for compiled in functions}

    @property
    def reference(self) -> ReferenceExecutor:
        """The reference executor for this plan (built on first use)."""
        if self._reference is None:
            self._reference = self._make_reference()
        return self._reference

    def _run_reference(self, feeds, step):
        return self.reference.run(feeds, step, threads=self.inter_op)

    def run_traced(self, feeds, step, record) -> list:
        """Runs on the reference executor, recording timings into `step.trace` and the ready queue into `record`."""
        return self.reference.run(feeds, step, record, self.inter_op)

    @property
    def timed(self) -> bool:
        """Whether `run_timed` times the generated code (else only the reference executor can trace the plan)."""
        return self._make_timed is not None

    def run_timed(self, feeds, step) -> list:
        """Runs the generated code, every kernel line timed into `step.trace` (codegen.Compiled.timed)."""
        if self._timed is None:
            self._timed, compiled = self._make_timed()
            self._lines.update({timed.run.__code__: timed.line_nodes for timed in compiled})
        return self._timed(feeds, step)

    def node_at(self, code, line: int) -> Node | None:
        """The node that line `line` of generated function `code` runs (None for other code)."""
        lines = self._lines.get(code)
        return lines.get(line) if lines is not None else None

    def new_step(self, step_id: int, timeout_in_ms: int = 0) -> StepContext:
        """A run's step context, with the rendezvous its Sends and Recvs meet in when it has any."""
        step = StepContext(step_id, timeout_in_ms)
        if self.needs_rendezvous:
            step.rendezvous = Rendezvous()
        return step


def compile_plan(fetches: list, feeds: list[Tensor], devices: list[LocalDevice], kernels: KernelCache,
                 options: CompileOptions, inter_op: InterOpThreads | None = None,
                 stateful: dict[str, str] | None = None) -> Executable:
    """Compiles one request: `fetches` are tensors and ops (the leaves of a fetch structure), `feeds` tensors.

    With `inter_op`, the devices of a plan without control flow run concurrently, one thread each.
    """
    plan, names = build_plan(fetches, feeds, devices, kernels, options, stateful=stateful)
    return executable_of(plan, names, {device.name: device for device in devices}, kernels, options, inter_op)


def build_plan(fetches: list, feeds: list[Tensor], devices: list[LocalDevice], kernels: KernelCache,
               options: CompileOptions, host: LocalDevice | None = None, default_task: str = "",
               inputs_home: Callable[[str], str] | None = None,
               stateful: dict[str, str] | None = None) -> tuple[Plan, Names]:
    """The plan of one request, every stage but code generation, and the identifiers its values took.

    `host` (devices[0] by default) folds constants and holds fed values; a distributed session passes its own CPU,
    the task that ops naming no job go to, and where each task's fed values arrive (tfnb/distributed/master.py).
    `stateful`: where the session's earlier plans put its stateful ops (tfnb/runtime/placement.py's `place`).
    """
    targets = [leaf for leaf in fetches if isinstance(leaf, Operation)]
    tensors = [leaf for leaf in fetches if isinstance(leaf, Tensor)]
    ops = prune(tensors, targets, feeds)
    check_placeholders_fed(ops, feeds)
    ordered = order(ops, dependencies_of(ops, feeds))
    host = host if host is not None else devices[0]
    rewritten = rewrite(ordered, feeds, kernels.evaluate_on(host), cse=options.cse, fold=options.fold,
                        fetches=tensors, targets=targets)
    dependencies = dependencies_of(rewritten.ops, feeds, rewritten)
    placement = place(rewritten.ops, dependencies, devices, options.allow_soft_placement, default_task, stateful)
    parts = partition(rewritten, feeds, fetches, placement, host, options.delay_recvs, inputs_home)
    plan = Plan(tuple(feeds), tuple(fetches), tuple(targets), rewritten.ops, dependencies,
                {op: device.name for op, device in placement.items()}, dict(rewritten.removed), parts.nodes,
                parts.feed_values, parts.fetch_values, parts.constants, dict(rewritten.substitutes), plain=options.plain)
    return plan, parts.names


def executable_of(plan: Plan, names: Names, devices: dict[str, LocalDevice], kernels: KernelCache,
                  options: CompileOptions, inter_op: InterOpThreads | None = None) -> Executable:
    """The code that runs `plan`'s nodes on `devices` (name -> device; every device a node or its peer is on)."""
    binder = _NodeBinder(kernels, devices, options.compress_transfers)
    concurrent = inter_op if len(plan.partitions) > 1 and not _has_control_flow(plan) else None
    functions = _generate(plan, names, binder, options, concurrent is not None)
    plan.source = "\n".join(f.source for f in functions) if functions else \
        "# run by the reference executor (tfnb/runtime/executor.py)\n"
    run = _run_of(plan, [f.run for f in functions], concurrent) if functions else None
    finish = {name: device.finish for name, device in devices.items() if device.queues_work}

    def make_timed() -> tuple[Callable, list[codegen.Compiled]]:
        timed = [f.timed(finish) for f in functions]
        return _run_of(plan, [t.run for t in timed], concurrent), timed

    compress = to_bfloat16 if options.compress_transfers else None
    return Executable(plan, functions, run, lambda: ReferenceExecutor(plan, binder.kernel, binder.move, compress),
                      _run_threads(plan, devices, options.intra_op_threads, concurrent is not None), inter_op,
                      make_timed if functions else None)


def _has_control_flow(plan: Plan) -> bool:
    return any(op.op_def.control_flow for op in plan.ops)


def _generate(plan: Plan, names: Names, binder: _NodeBinder, options: CompileOptions,
              per_device: bool) -> list[codegen.Compiled]:
    """The generated functions: one straight-line function, one per device, or one with loops for control flow
    (none when the frames do not nest as tf.cond and tf.while_loop build them: the reference executor runs it)."""
    if _has_control_flow(plan):
        try:
            return [compile_structured(plan, names, binder.kernel, dict(plan.constants))]
        except NotStructured:
            return []
    steps, constants = codegen.build_steps(plan, names, binder.line)
    if options.fuse and not options.plain:
        fetched = {value.name for value in plan.fetch_values if value is not None}
        compilers = {name: device.xp.fuse for name, device in binder.devices.items() if hasattr(device.xp, "fuse")}
        steps = fuse(steps, fetched, names, compilers)
    donate = not options.plain
    if not per_device:
        return [codegen.generate(steps, constants, plan, names, donate)]
    return [codegen.generate(steps, constants, plan, names, donate, device) for device in plan.partitions]


def _run_of(plan: Plan, functions: list[Callable], concurrent: InterOpThreads | None) -> Callable:
    """`run(feeds, step)` of the generated functions: the one function, or one per device on threads of their own."""
    return _run_devices(plan, functions, concurrent) if concurrent is not None else functions[0]


def _run_devices(plan: Plan, functions: list[Callable], threads: InterOpThreads) -> Callable:
    """`run(feeds, step)` running each device's function on a thread of its own and gathering the fetches."""
    positions = [[k for k, v in enumerate(plan.fetch_values) if v is not None and v.kind == OUTPUT and v.device == d]
                 for d in plan.partitions]
    fed = [(k, plan.feed_values.index(v)) for k, v in enumerate(plan.fetch_values) if v is not None and v.kind == FEED]
    constant = [(k, plan.constants[v.name]) for k, v in enumerate(plan.fetch_values)
                if v is not None and v.kind == CONSTANT]
    first, *others = functions
    count = len(plan.fetch_values)

    def run(feeds, step):
        parts = run_partitions(lambda: first(feeds, step), [functools.partial(fn, feeds, step) for fn in others],
                               threads, step)
        results = [None] * count
        for where, values in zip(positions, parts):
            for k, value in zip(where, values):
                results[k] = value
        for k, feed in fed:
            results[k] = feeds[feed]
        for k, value in constant:
            results[k] = value
        return results

    return run


def _run_threads(plan: Plan, devices: dict[str, LocalDevice], configured: int,
                 concurrent: bool) -> intra_op.RunThreads | None:
    """Who owns the cores during the plan's runs: its parallel kernels, or BLAS (kernels/intra_op.py).

    Devices running at the same time share the cores: BLAS gets its share of them on each.
    """
    if concurrent and not configured:
        return intra_op.RunThreads(1, max(1, intra_op.default_width() // len(plan.partitions)))
    parallel = any(getattr(find_kernel(op.type, devices[plan.placement[op]].device_type), "parallel", False)
                   for op in plan.ops)
    return intra_op.run_threads(configured, parallel)


class _NodeBinder:
    """The callables that run a plan's nodes: bound kernels for ops, rendezvous calls for Sends and Recvs."""

    def __init__(self, kernels: KernelCache, devices: dict[str, LocalDevice], compress: bool) -> None:
        self.kernels, self.devices, self.compress = kernels, devices, compress

    def kernel(self, node: Node) -> tuple[Callable, bool]:
        """(callable, whether it takes the step) for a node."""
        if node.type == "_Send":
            if node.tensor is None:
                return _signal_sender(node.key), True
            return send_kernel(node.key, self.compress), True
        if node.type == "_Recv":
            return recv_kernel(node.key, self.move(node)), True
        return self.kernels.bind(node.op, self.devices[node.device])

    def line(self, node: Node) -> tuple[Callable, bool, KernelDef | None]:
        """`kernel(node)` and the kernel's registration (None for a Send or Recv): what codegen and fusion read."""
        kernel, needs_step = self.kernel(node)
        if node.op is None:
            return kernel, needs_step, None
        return kernel, needs_step, find_kernel(node.type, self.devices[node.device].device_type)

    def move(self, node: Node) -> Callable:
        """A Recv's conversion of what its Send left to arrays of the Recv's device (widening bfloat16 first)."""
        move = transfer(self.devices[node.peer.device], self.devices[node.device])
        if not self.compress:
            return move
        return lambda value: move(from_bfloat16(value))


def _signal_sender(key: str) -> Callable:
    return lambda step: step.rendezvous.send(key, True)
