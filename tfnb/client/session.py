"""Session: runs fetches with feeds, compiling and caching one plan per distinct request."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tfnb.client.fetches import flatten, freeze
from tfnb.framework.default_session import session_scope
from tfnb.framework.errors import InvalidArgumentError, OpError, ResourceExhaustedError
from tfnb.framework.graph import Graph, get_default_graph
from tfnb.framework.importer import extend_graph
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.kernels import KernelNode, StepContext, find_kernel, intra_op
from tfnb.ops.control_flow.primitives import CONTROL_FLOW_OP_TYPES
from tfnb.runtime import codegen
from tfnb.runtime import plan as _plan
from tfnb.runtime.executor import FrameExecutor
from tfnb.runtime.fusion import fuse
from tfnb.runtime.loop_codegen import NotStructured, compile_structured
from tfnb.runtime.placement import LocalDevice, local_devices, place
from tfnb.runtime.resources import ResourceManager, reset_containers
from tfnb.runtime.rewrites import rewrite
from tfnb.runtime.tracing import RunMetadata, RunOptions, fill_run_metadata


@dataclass
class OptimizerOptions:
    """Graph rewrites before a plan runs: L1 folds constants, merges common subexpressions and fuses kernels
    (tfnb/runtime/fusion.py; `do_kernel_fusion` is tfnb's); L0 does none of these."""

    L1 = 0
    L0 = -1
    opt_level: int = 0
    do_constant_folding: bool = True
    do_common_subexpression_elimination: bool = True
    do_kernel_fusion: bool = True


@dataclass
class GraphOptions:
    optimizer_options: OptimizerOptions = field(default_factory=OptimizerOptions)


@dataclass
class ConfigProto:
    """Session configuration: logical devices (`device_count={'CPU': 4}`), soft placement, rewrites."""

    device_count: dict = field(default_factory=dict)
    allow_soft_placement: bool = False
    log_device_placement: bool = False
    inter_op_parallelism_threads: int = 0
    intra_op_parallelism_threads: int = 0  # threads a run's kernels share; 0: one per core (kernels/intra_op.py)
    graph_options: GraphOptions = field(default_factory=GraphOptions)
    compress_transfers: bool = False


class _Compiled:
    """A cached plan with what a run needs around it: feed checks, the function, the fetch rebuild."""

    def __init__(self, plan: _plan.Plan, code: codegen.Compiled, rebuild: Callable, make_traced: Callable,
                 threads) -> None:
        self.plan = plan
        self.threads = threads if threads is not None else contextlib.nullcontext()
        self.code = code
        self.run = code.run
        self.rebuild = rebuild
        self.feed_checks = plan.feed_checks
        self.copy_on_fetch = plan.copy_on_fetch
        self._make_traced = make_traced
        self._traced: codegen.Compiled | None = None

    @property
    def traced(self) -> codegen.Compiled:
        if self._traced is None:
            self._traced = self._make_traced()
        return self._traced

    def finish(self, values: tuple):
        out = []
        for value, copy in zip(values, self.copy_on_fetch):
            if type(value) is np.ndarray:
                if value.ndim == 0:
                    value = value[()]
                elif copy:
                    value = value.copy()
            elif value is not None and not isinstance(value, np.generic | bytes):
                value = codegen.to_host(value)
            out.append(value)
        return self.rebuild(out)


class Session:
    """A TF1 Session: `run(fetches, feed_dict, options, run_metadata)` on a graph, with its own variables."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        self._target = target
        self._config = config or ConfigProto()
        self._devices = local_devices(self._config.device_count)
        self._resources = ResourceManager(target)
        self._cache: dict = {}
        self._kernels: dict = {}
        self._lock = threading.RLock()
        self._step_ids = itertools.count(1)
        self._closed = False
        self._default_contexts: list = []

    # -- properties -------------------------------------------------------------------------------

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    @property
    def resources(self) -> ResourceManager:
        return self._resources

    def list_devices(self) -> list[LocalDevice]:
        return list(self._devices)

    def extend(self, graph_def) -> None:
        """Adds the nodes of `graph_def` that the session's graph lacks (the 2015 paper's Extend)."""
        extend_graph(self._graph, graph_def)

    # -- running ----------------------------------------------------------------------------------

    def run(self, fetches, feed_dict=None, options: RunOptions | None = None,
            run_metadata: RunMetadata | None = None):
        """Computes `fetches` (any nest of tensors, ops and names), feeding `feed_dict` (any tensor may be fed)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_dict = feed_dict or {}
        try:
            key = (freeze(fetches), tuple(feed_dict), self._graph._version)
            compiled = self._cache.get(key)
        except TypeError:
            key, compiled = None, None
        if compiled is None:
            compiled = self._compile(fetches, feed_dict, key)
        feeds = [check(value) for check, value in zip(compiled.feed_checks, feed_dict.values())]
        traced = options is not None and options.trace_level >= RunOptions.FULL_TRACE
        code = compiled.traced if traced else compiled.code
        step = StepContext(next(self._step_ids), options.timeout_in_ms if options is not None else 0)
        started = codegen.time.perf_counter()
        with np.errstate(all="ignore"), compiled.threads:
            try:
                values = code.run(feeds, step)
            except Exception as error:
                raise _attribute(error, code) from error
        if traced and run_metadata is not None:
            fill_run_metadata(run_metadata, code.steps, step.trace, started)
        return compiled.finish(values)

    def make_callable(self, fetches, feed_list=()) -> Callable:
        """A function running `fetches` with positional feeds for `feed_list`, skipping the plan lookup."""
        feed_list = list(feed_list)
        placeholder_feeds = {t: None for t in feed_list}
        compiled = self._compile(fetches, placeholder_feeds, None)

        def call(*values):
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            feeds = [check(v) for check, v in zip(compiled.feed_checks, values)]
            with np.errstate(all="ignore"), compiled.threads:
                try:
                    results = compiled.run(feeds, StepContext(next(self._step_ids)))
                except Exception as error:
                    raise _attribute(error, compiled.code) from error
            return compiled.finish(results)

        return call

    def _compile(self, fetches, feed_dict, key) -> _Compiled:
        with self._lock:
            leaves, rebuild = flatten(self._graph, fetches)
            feeds = [self._feed_tensor(k) for k in feed_dict]
            targets = [leaf for leaf in leaves if isinstance(leaf, Operation)]
            tensors = [leaf for leaf in leaves if isinstance(leaf, Tensor)]
            ops = _plan.prune(tensors, targets, feeds)
            _plan.check_placeholders_fed(ops, feeds)
            ordered = _plan.order(ops, _plan.dependencies_of(ops, feeds))
            if any(op.type in CONTROL_FLOW_OP_TYPES for op in ordered):
                return self._compile_control_flow(ordered, feeds, leaves, targets, rebuild, key)
            options = self._config.graph_options.optimizer_options
            enabled = options.opt_level >= OptimizerOptions.L1
            rewritten = rewrite(ordered, feeds, self._evaluate_on_host,
                                cse=enabled and options.do_common_subexpression_elimination,
                                fold=enabled and options.do_constant_folding, fetches=tensors, targets=targets)
            ordered = rewritten.ops
            dependencies = _plan.dependencies_of(ordered, feeds, rewritten)
            placement = place(ordered, dependencies, self._devices, self._config.allow_soft_placement)
            plan = _plan.Plan(tuple(feeds), tuple(leaves), tuple(targets), ordered, dependencies,
                              {op: d.name for op, d in placement.items()}, rewritten=rewritten)
            host = self._devices[0].name
            steps, constants = codegen.build_steps(ordered, feeds, rewritten, placement, self._bind,
                                                   self._transfer, host)
            resolved = [rewritten.resolve(leaf) if isinstance(leaf, Tensor) else leaf for leaf in leaves]

            fetched = {codegen.var(t) for t in resolved if isinstance(t, Tensor)}
            fused = fuse(steps, fetched) if enabled and options.do_kernel_fusion else steps

            def generate(traced: bool) -> codegen.Compiled:
                # A trace records every op, so traced runs are not fused.
                return codegen.generate(steps if traced else fused, constants, feeds, resolved, host, traced)

            return self._cache_plan(plan, generate(False), rebuild, lambda: generate(True), key, resolved,
                                    rewritten.folded)

    def _compile_control_flow(self, ordered, feeds, leaves, targets, rebuild, key) -> _Compiled:
        """A plan for a graph with Switch/Merge/Enter/Exit/NextIteration.

        Untraced runs use loops compiled to Python (tfnb/runtime/loop_codegen.py) when the frames nest as
        tf.cond and tf.while_loop build them; traced runs, and other graphs, use the frame executor.
        """
        dependencies = _plan.dependencies_of(ordered, feeds)
        placement = place(ordered, dependencies, self._devices, self._config.allow_soft_placement)
        plan = _plan.Plan(tuple(feeds), tuple(leaves), tuple(targets), ordered, dependencies,
                          {op: d.name for op, d in placement.items()})

        def generate(traced: bool) -> FrameExecutor:
            return FrameExecutor(ordered, feeds, leaves, placement, self._bind, traced)

        try:
            code = compile_structured(ordered, feeds, leaves, placement, self._bind)
        except NotStructured:
            code = generate(False)
        return self._cache_plan(plan, code, rebuild, lambda: generate(True), key, leaves)

    def _cache_plan(self, plan: _plan.Plan, code, rebuild: Callable, make_traced: Callable, key, fetched,
                    folded=()) -> _Compiled:
        """Completes a plan (its code, feed checks, which fetches to copy) and caches it under `key`."""
        fed = set(plan.feeds)
        plan.source, plan.run = code.source, code.run
        plan.feed_checks = tuple(_feed_check(t) for t in plan.feeds)
        plan.copy_on_fetch = tuple(isinstance(leaf, Tensor) and (leaf in folded or _aliases_state(leaf, fed))
                                   for leaf in fetched)
        compiled = _Compiled(plan, code, rebuild, make_traced, self._run_threads(plan))
        if key is not None:
            self._cache[key] = compiled
        return compiled

    def _run_threads(self, plan: _plan.Plan) -> intra_op.RunThreads | None:
        """Who owns the cores during the plan's runs: its parallel kernels, or BLAS (kernels/intra_op.py)."""
        device_types = {d.name: d.device_type for d in self._devices}
        parallel = any(getattr(find_kernel(op.type, device_types[plan.placement[op]]), "parallel", False)
                       for op in plan.ops)
        return intra_op.run_threads(self._config.intra_op_parallelism_threads, parallel)

    def _evaluate_on_host(self, op: Operation, values: list):
        """Runs op's kernel once on the host device (for constant folding)."""
        fn, needs_step = self._bind(op, self._devices[0])
        return fn(StepContext(0), *values) if needs_step else fn(*values)

    def _feed_tensor(self, key) -> Tensor:
        """The tensor a feed_dict key names; TypeError (as TF) for a key that names no tensor of this graph."""
        if isinstance(key, str):
            try:
                return self._graph.get_tensor_by_name(key)
            except (KeyError, ValueError) as error:
                message = error.args[0] if error.args else str(error)
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: {message}") from None
        if hasattr(key, "_as_graph_element"):
            key = key._as_graph_element()
        if not isinstance(key, Tensor):
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: the key of a feed must be a Tensor or a "
                            f"tensor name, got {key!r}")
        if key.graph is not self._graph:
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {key.name} is not an element of this "
                            f"session's graph.")
        return key

    def _bind(self, op: Operation, device: LocalDevice):
        """The kernel callable for `op` on `device`, created once per session (stateful kernels keep state)."""
        cache_key = (op, device.name)
        bound = self._kernels.get(cache_key)
        if bound is None:
            kernel_def = find_kernel(op.type, device.device_type)
            node = KernelNode(op.type, op.name, op.attrs, tuple(t.dtype.np_dtype for t in op.inputs),
                              tuple(t.dtype.np_dtype for t in op.outputs), tuple(t.shape.as_tuple() for t in op.outputs),
                              device.name, device.device_type, device.xp, self._resources)
            bound = (kernel_def.factory(node), kernel_def.needs_step)
            self._kernels[cache_key] = bound
        return bound

    def _transfer(self, source: str, destination: str) -> Callable:
        """The function moving a value between two devices (the in-process Send/Recv pair)."""
        src = next(d for d in self._devices if d.name == source)
        dst = next(d for d in self._devices if d.name == destination)
        if src.xp is dst.xp:
            move = (lambda value: value)
        elif dst.xp is np:
            move = codegen.to_host
        else:
            move = dst.xp.asarray
        if not self._config.compress_transfers:
            return move
        return lambda value: move(_truncate_to_16_bits(value))

    # -- lifetime ---------------------------------------------------------------------------------

    @staticmethod
    def reset(target: str, containers=None, config: ConfigProto | None = None) -> None:
        """Clears the named resource containers of `target` (all of them when `containers` is None)."""
        reset_containers(target, containers)

    def close(self) -> None:
        """Releases the session's resources; running afterwards raises RuntimeError."""
        self._closed = True
        self._resources.reset()
        self._cache.clear()
        self._kernels.clear()

    def __enter__(self) -> Session:
        contexts = [self._graph.as_default(), self.as_default()]
        for context in contexts:
            context.__enter__()
        self._default_contexts.append(contexts)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        for context in reversed(self._default_contexts.pop()):
            context.__exit__(exc_type, exc, tb)
        self.close()

    def as_default(self):
        """Makes this session the default for `Tensor.eval()` and `Operation.run()` inside a `with`."""
        return session_scope(self)


class InteractiveSession(Session):
    """A Session that installs itself as the default session (and its graph as default) on creation."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None) -> None:
        super().__init__(target, graph, config)
        self._installed = [self._graph.as_default(), self.as_default()]
        for context in self._installed:
            context.__enter__()

    def close(self) -> None:
        super().close()
        for context in reversed(self._installed):
            with contextlib.suppress(IndexError):
                context.__exit__(None, None, None)
        self._installed = []


def _feed_check(tensor: Tensor) -> Callable:
    """A function converting a fed value to `tensor`'s dtype and checking it against its static shape."""
    dtype = tensor.dtype
    np_dtype = dtype.np_dtype
    dims = tensor.shape.as_tuple()
    fully_defined = dims is not None and None not in dims

    def fail(message: str):
        raise InvalidArgumentError(None, tensor.op, message)

    def convert(value):
        if dtype.name == "string":
            from tfnb.ops.constant_op import to_numpy
            return to_numpy(value, dtype)
        array = value if isinstance(value, np.ndarray) else np.asarray(value)
        if array.dtype != np_dtype:
            if array.dtype.kind in "OUS" or not np.can_cast(array.dtype, np_dtype, "same_kind"):
                fail(f"Cannot feed a value of dtype {array.dtype} for Tensor '{tensor.name}', which has dtype "
                     f"{dtype.name}")
            array = array.astype(np_dtype)
        return array

    def check(value):
        array = value if type(value) is np.ndarray and value.dtype == np_dtype else convert(value)
        shape = array.shape
        if shape != dims and dims is not None and (fully_defined or len(shape) != len(dims) or any(
                d is not None and d != s for d, s in zip(dims, shape))):
            fail(f"Cannot feed value of shape {shape} for Tensor '{tensor.name}', which has shape {tensor.shape}")
        return array

    return check


def _aliases_state(tensor: Tensor, fed: set) -> bool:
    """Whether a fetched value may be an array the session keeps (a constant, a feed, variable state)."""
    if tensor in fed:
        return True
    op_def = tensor.op.op_def
    if tensor.op.type == "Const" or op_def.stateful:
        return True
    if op_def.forwards_input is not None and tensor.op.inputs:
        return _aliases_state(tensor.op.inputs[op_def.forwards_input], fed)
    return False


def _attribute(error: Exception, code: codegen.Compiled) -> Exception:
    """The error to raise for a kernel failure: a TF error class naming the op that failed."""
    op = getattr(error, "tfnb_op", None)  # set where one line runs several ops (frame executor, fusion)
    trace = error.__traceback__
    while trace is not None and op is None:
        if trace.tb_frame.f_code is code.run.__code__:
            op = code.line_ops.get(trace.tb_lineno)
        trace = trace.tb_next
    if isinstance(error, OpError):
        return error if error.op is not None else type(error)(None, op, error.message)
    if isinstance(error, MemoryError):
        return ResourceExhaustedError(None, op, f"Out of memory while running the op: {error}")
    return InvalidArgumentError(None, op, f"{type(error).__name__}: {error}")


def _truncate_to_16_bits(value):
    """Lossy transfer compression from the paper: keep a float32's top 16 bits, zero the rest."""
    if getattr(value, "dtype", None) != np.float32:
        return value
    bits = value.view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)
