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
from collections.abc import Callable
from dataclasses import dataclass

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.kernels import StepContext, find_kernel, intra_op
from tfnb.runtime import codegen
from tfnb.runtime.binding import KernelCache
from tfnb.runtime.devices import LocalDevice
from tfnb.runtime.executor import ReferenceExecutor
from tfnb.runtime.fusion import fuse
from tfnb.runtime.loop_codegen import NotStructured, compile_structured
from tfnb.runtime.naming import Names
from tfnb.runtime.ordering import dependencies_of, order
from tfnb.runtime.partition import partition
from tfnb.runtime.placement import place
from tfnb.runtime.plan import Node, Plan
from tfnb.runtime.prune import check_placeholders_fed, prune
from tfnb.runtime.rendezvous import Rendezvous, recv_kernel, send_kernel, transfer, truncate_to_16_bits
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


class Executable:
    """A plan and what runs it: `run(feeds, step)` is the generated code, `reference` the reference executor.

    `threads` is who owns the cores while the plan runs (kernels/intra_op.py): its parallel kernels, with BLAS
    in one thread, or BLAS; `new_step` makes a run's step context.
    """

    def __init__(self, plan: Plan, code: codegen.Compiled | None, make_reference: Callable[[], ReferenceExecutor],
                 threads) -> None:
        self.plan = plan
        self.code = code
        self.threads = threads if threads is not None else contextlib.nullcontext()
        self._make_reference = make_reference
        self._reference: ReferenceExecutor | None = None
        self.needs_rendezvous = any(node.is_transfer for node in plan.nodes)
        self.run = code.run if code is not None else self._run_reference

    @property
    def reference(self) -> ReferenceExecutor:
        """The reference executor for this plan (built on first use)."""
        if self._reference is None:
            self._reference = self._make_reference()
        return self._reference

    def _run_reference(self, feeds, step):
        return self.reference.run(feeds, step)

    def new_step(self, step_id: int, timeout_in_ms: int = 0) -> StepContext:
        """A run's step context, with the rendezvous its Sends and Recvs meet in when it has any."""
        step = StepContext(step_id, timeout_in_ms)
        if self.needs_rendezvous:
            step.rendezvous = Rendezvous()
        return step


def compile_plan(fetches: list, feeds: list[Tensor], devices: list[LocalDevice], kernels: KernelCache,
                 options: CompileOptions) -> Executable:
    """Compiles one request: `fetches` are tensors and ops (the leaves of a fetch structure), `feeds` tensors."""
    targets = [leaf for leaf in fetches if isinstance(leaf, Operation)]
    tensors = [leaf for leaf in fetches if isinstance(leaf, Tensor)]
    ops = prune(tensors, targets, feeds)
    check_placeholders_fed(ops, feeds)
    ordered = order(ops, dependencies_of(ops, feeds))
    host = devices[0]
    rewritten = rewrite(ordered, feeds, kernels.evaluate_on(host), cse=options.cse, fold=options.fold,
                        fetches=tensors, targets=targets)
    dependencies = dependencies_of(rewritten.ops, feeds, rewritten)
    placement = place(rewritten.ops, dependencies, devices, options.allow_soft_placement)
    parts = partition(rewritten, feeds, fetches, placement, host)
    plan = Plan(tuple(feeds), tuple(fetches), tuple(targets), rewritten.ops, dependencies,
                {op: device.name for op, device in placement.items()}, dict(rewritten.removed), parts.nodes,
                parts.feed_values, parts.fetch_values, parts.constants, dict(rewritten.substitutes), plain=options.plain)
    by_name = {device.name: device for device in devices}
    binder = _NodeBinder(kernels, by_name, options.compress_transfers)
    code = _generate(plan, parts.names, binder, options)
    plan.source = code.source if code is not None else "# run by the reference executor (tfnb/runtime/executor.py)\n"
    compress = truncate_to_16_bits if options.compress_transfers else None
    return Executable(plan, code, lambda: ReferenceExecutor(plan, binder.kernel, binder.move, compress),
                      _run_threads(plan, by_name, options.intra_op_threads))


def _run_threads(plan: Plan, devices: dict[str, LocalDevice], configured: int) -> intra_op.RunThreads | None:
    """Who owns the cores during the plan's runs: its parallel kernels, or BLAS (kernels/intra_op.py)."""
    parallel = any(getattr(find_kernel(op.type, devices[plan.placement[op]].device_type), "parallel", False)
                   for op in plan.ops)
    return intra_op.run_threads(configured, parallel)


def _generate(plan: Plan, names: Names, binder: _NodeBinder, options: CompileOptions) -> codegen.Compiled | None:
    """Straight-line code, or loop code for control flow (None when the frames do not nest as tf builds them)."""
    if any(op.op_def.control_flow for op in plan.ops):
        try:
            return compile_structured(plan, names, binder.kernel, dict(plan.constants))
        except NotStructured:
            return None
    steps, constants = codegen.build_steps(plan, names, binder.line)
    if options.fuse and not options.plain:
        fetched = {value.name for value in plan.fetch_values if value is not None}
        steps = fuse(steps, fetched)
    return codegen.generate(steps, constants, plan, names, donate=not options.plain)


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

    def line(self, node: Node) -> tuple[Callable, bool, bool]:
        """`kernel(node)` and whether the kernel's outputs are fresh arrays (what codegen may donate)."""
        kernel, needs_step = self.kernel(node)
        if node.op is None:
            return kernel, needs_step, False
        kernel_def = find_kernel(node.type, self.devices[node.device].device_type)
        return kernel, needs_step, kernel_def is not None and kernel_def.fresh_output

    def move(self, node: Node) -> Callable:
        """A Recv's conversion of what its Send left to arrays of the Recv's device."""
        return transfer(self.devices[node.peer.device], self.devices[node.device])


def _signal_sender(key: str) -> Callable:
    return lambda step: step.rendezvous.send(key, True)
