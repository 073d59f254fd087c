"""Session: runs fetches with feeds, compiling and caching one plan per distinct request (2015 paper, 3.2).

Each distinct (fetches, fed tensors, graph version) request goes through the compile pipeline once
(tfnb/runtime/pipeline.py); later runs call the cached plan's generated code, and traced runs its
reference executor. `Session.plan(fetches, feed_dict)` hands out the compiled plan. A target that an
opener claims (tfnb/client/targets.py: a cluster's server or scheduler) compiles for its devices instead.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import time
from collections.abc import Callable

import numpy as np

from tfnb.client.config import ConfigProto, GraphOptions, OptimizerOptions
from tfnb.client.fetches import flatten, freeze
from tfnb.client.targets import open_target
from tfnb.framework.default_session import session_scope
from tfnb.framework.dtypes import to_numpy
from tfnb.framework.errors import InvalidArgumentError, OpError, ResourceExhaustedError
from tfnb.framework.graph import Graph, get_default_graph
from tfnb.framework.importer import extend_graph
from tfnb.framework.tensor import Tensor
from tfnb.runtime.binding import KernelCache
from tfnb.runtime.concurrent import InterOpThreads
from tfnb.runtime.devices import LocalDevice, local_devices
from tfnb.runtime.functions import FunctionLibrary
from tfnb.runtime.pipeline import CompileOptions, Executable, compile_plan
from tfnb.runtime.plan import Plan
from tfnb.runtime.rendezvous import to_host
from tfnb.runtime.resources import ResourceManager, reset_containers
from tfnb.runtime.tracing import ExecutorRecord, RunMetadata, RunOptions, fill_run_metadata, fill_timed_run_metadata

__all__ = ["ConfigProto", "GraphOptions", "InteractiveSession", "OptimizerOptions", "Session"]


class _Compiled:
    """A cached executable with what a run needs around it: feed checks, thread ownership, the fetch rebuild."""

    def __init__(self, executable: Executable, rebuild: Callable) -> None:
        self.executable = executable
        self.plan = executable.plan
        self.run = executable.run
        self.new_step = executable.new_step
        self.threads = executable.threads
        self.numpy_state = executable.numpy_state
        self.rebuild = rebuild
        self.feed_checks = tuple(_feed_check(t) for t in self.plan.feeds)
        fed = set(self.plan.feeds)
        folded = {value.tensor for value in self.plan.fetch_values if value is not None and value.kind == "constant"}
        self.copy_on_fetch = tuple(isinstance(leaf, Tensor) and (leaf in folded or _aliases_state(leaf, fed))
                                   for leaf in self.plan.fetches)

    def finish(self, values) -> object:
        out = []
        for value, copy in zip(values, self.copy_on_fetch):
            if type(value) is np.ndarray:
                if value.ndim == 0:
                    value = value[()]
                elif copy:
                    value = value.copy()
            elif value is not None and not isinstance(value, np.generic | bytes):
                value = to_host(value)
            out.append(value)
        return self.rebuild(out)


class Session:
    """A TF1 Session: `run(fetches, feed_dict, options, run_metadata)` on a graph, with its own variables."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        self._target = target
        self._config = config or ConfigProto()
        self._remote = open_target(target, self._config)
        self._devices = self._remote.devices if self._remote is not None else local_devices(self._config.device_count)
        self._stateful_placements: dict[str, str] = {}  # a stateful op stays on the device of its first plan
        self._resources = ResourceManager(target)
        self._kernels = KernelCache(self._resources)
        self._kernels.functions = FunctionLibrary(self._kernels, self._devices)
        inter_op = self._config.inter_op_parallelism_threads
        self._inter_op = InterOpThreads(inter_op or max(2, len(self._devices))) if inter_op != 1 else None
        self._cache: dict = {}
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

    # -- plans ------------------------------------------------------------------------------------

    def plan(self, fetches, feed_dict=None, plain: bool = False) -> Plan:
        """The compiled plan of `run(fetches, feed_dict)`: its ops, placement, partitions and generated source.

        Only the keys of `feed_dict` matter (what is fed, not the values). `plain=True` compiles the simplest
        correct plan, without kernel fusion or buffer reuse, for reading; runs never use it.
        """
        self._check_open()
        feed_dict = feed_dict or {}
        if plain:
            leaves, _ = flatten(self._graph, fetches)
            return self._compile_executable(leaves, [self._feed_tensor(k) for k in feed_dict], plain=True).plan
        return self._compiled(fetches, feed_dict).plan

    def last_plan(self) -> Plan | None:
        """The plan this session compiled most recently (None before its first run)."""
        return next(reversed(self._cache.values())).plan if self._cache else None

    # -- running ----------------------------------------------------------------------------------

    def run(self, fetches, feed_dict=None, options: RunOptions | None = None,
            run_metadata: RunMetadata | None = None):
        """Computes `fetches` (any nest of tensors, ops and names), feeding `feed_dict` (any tensor may be fed)."""
        self._check_open()
        feed_dict = feed_dict or {}
        compiled = self._compiled(fetches, feed_dict)
        feeds = [check(value) for check, value in zip(compiled.feed_checks, feed_dict.values())]
        step = compiled.new_step(next(self._step_ids), options.timeout_in_ms if options is not None else 0)
        with compiled.numpy_state(), compiled.threads:
            try:
                if options is None or not options.trace_level:
                    values = compiled.run(feeds, step)
                elif options.trace_level < RunOptions.FULL_TRACE and getattr(compiled.executable, "timed", False):
                    values = self._run_timed(compiled, feeds, step, run_metadata)
                else:  # FULL_TRACE, or a plan without generated code: traced on the reference executor
                    values = self._run_traced(compiled, feeds, step, run_metadata)
            except Exception as error:
                raise attributed_error(error, compiled.executable) from error
        return compiled.finish(values)

    def _run_traced(self, compiled: _Compiled, feeds, step, run_metadata: RunMetadata | None):
        """Runs on the reference executor, recording timings and the ready queue into `run_metadata`."""
        record = ExecutorRecord()
        started = time.perf_counter()
        values = compiled.executable.run_traced(feeds, step, record)
        if run_metadata is not None:
            fill_run_metadata(run_metadata, compiled.plan, step.trace, record, started)
        return values

    def _run_timed(self, compiled: _Compiled, feeds, step, run_metadata: RunMetadata | None):
        """Runs the generated code with each line timed (SOFTWARE_TRACE), the lines' times into `run_metadata`."""
        started = time.perf_counter()
        values = compiled.executable.run_timed(feeds, step)
        if run_metadata is not None:
            fill_timed_run_metadata(run_metadata, compiled.plan, step.trace, started)
        return values

    def make_callable(self, fetches, feed_list=()) -> Callable:
        """A function running `fetches` with positional feeds for `feed_list`, skipping the plan lookup."""
        compiled = self._compiled(fetches, {t: None for t in feed_list}, cache=False)

        def call(*values):
            self._check_open()
            feeds = [check(v) for check, v in zip(compiled.feed_checks, values)]
            step = compiled.new_step(next(self._step_ids))
            with compiled.numpy_state(), compiled.threads:
                try:
                    results = compiled.run(feeds, step)
                except Exception as error:
                    raise attributed_error(error, compiled.executable) from error
            return compiled.finish(results)

        return call

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")

    def _compiled(self, fetches, feed_dict, cache: bool = True) -> _Compiled:
        """The cached compiled plan for this request, compiling it on first use."""
        try:
            key = (freeze(fetches), tuple(feed_dict), self._graph._version) if cache else None
            compiled = self._cache.get(key) if key is not None else None
        except TypeError:
            key, compiled = None, None
        if compiled is not None:
            return compiled
        with self._lock:
            leaves, rebuild = flatten(self._graph, fetches)
            executable = self._compile_executable(leaves, [self._feed_tensor(k) for k in feed_dict])
            compiled = _Compiled(executable, rebuild)
            if key is not None:
                self._cache[key] = compiled
        return compiled

    def _compile_executable(self, leaves: list, feeds: list[Tensor], plain: bool = False) -> Executable:
        optimizer = self._config.graph_options.optimizer_options
        enabled = optimizer.opt_level >= OptimizerOptions.L1
        options = CompileOptions(fold=enabled and optimizer.do_constant_folding,
                                 cse=enabled and optimizer.do_common_subexpression_elimination,
                                 fuse=enabled and optimizer.do_kernel_fusion, plain=plain,
                                 allow_soft_placement=self._config.allow_soft_placement,
                                 compress_transfers=self._config.graph_options.enable_bfloat16_sendrecv,
                                 intra_op_threads=self._config.intra_op_parallelism_threads,
                                 delay_recvs=optimizer.delay_recvs)
        with self._lock:
            if self._remote is not None:
                executable = self._remote.compile(self._graph, leaves, feeds, self._kernels, options)
            else:
                executable = compile_plan(leaves, feeds, self._devices, self._kernels, options, self._inter_op,
                                          self._stateful_placements)
        if self._config.log_device_placement:
            for op in executable.plan.ops:
                print(f"{op.name}: ({op.type}): {executable.plan.placement[op]}", file=sys.stderr)
        return executable

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
        if not self._graph.is_feedable(key):
            raise ValueError(f"Tensor {key.name} may not be fed.")
        return key

    # -- lifetime ---------------------------------------------------------------------------------

    @staticmethod
    def reset(target: str, containers=None, config: ConfigProto | None = None) -> None:
        """Clears the named resource containers of `target` (all of them when `containers` is None)."""
        remote = open_target(target, config or ConfigProto())
        if remote is None:
            reset_containers(target, containers)
            return
        remote.reset(containers)
        remote.close()

    def close(self) -> None:
        """Releases the session's resources; running afterwards raises RuntimeError."""
        self._closed = True
        if self._remote is not None:
            self._remote.close()
        self._resources.reset()
        self._cache.clear()
        self._kernels.clear()
        if self._inter_op is not None:
            self._inter_op.shutdown()

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
    """A function converting a fed value to `tensor`'s dtype and checking it against its static shape, as TF does.

    tfnb differs from TF: a lossy conversion between kinds (floats for an int tensor) is a TypeError, not a cast.
    """
    dtype = tensor.dtype
    np_dtype = dtype.np_dtype
    dims = tensor.shape.as_tuple()
    fully_defined = dims is not None and None not in dims

    def convert(value):
        if isinstance(value, Tensor):
            raise TypeError(f"The value of a feed cannot be a tf.Tensor object. Acceptable feed values include "
                            f"Python scalars, strings, lists, numpy ndarrays, or TensorHandles. For reference, the "
                            f"tensor object was {value} which was passed to the argument `feed_dict` with key "
                            f"{tensor}.")
        if dtype.name == "string":
            return to_numpy(value, dtype)
        if type(value) is int:
            _check_python_int(value, tensor)
        array = value if isinstance(value, np.ndarray) else np.asarray(value)
        if array.dtype == np_dtype:
            return array
        # As TF: strings and Python objects go through NumPy's conversion, whose ValueError or TypeError says why.
        if array.dtype.kind not in "OUS" and not np.can_cast(array.dtype, np_dtype, "same_kind"):
            raise TypeError(f"Cannot feed a value of dtype {array.dtype} for Tensor {tensor.name}, which has dtype "
                            f"{dtype.name}: tfnb refuses a conversion that may lose values")
        return array.astype(np_dtype)

    def check(value):
        array = value if type(value) is np.ndarray and value.dtype == np_dtype else convert(value)
        shape = array.shape
        if shape != dims and dims is not None and (fully_defined or len(shape) != len(dims) or any(
                d is not None and d != s for d, s in zip(dims, shape))):
            raise ValueError(f"Cannot feed value of shape {shape} for Tensor {tensor.name}, which has shape "
                             f"{tensor.shape}")
        return array

    return check


def _check_python_int(value: int, tensor: Tensor) -> None:
    """TypeError, as TF, when a Python int fed to `tensor` does not survive conversion to its dtype."""
    try:
        fits = tensor.dtype.np_dtype.type(value) == value
    except OverflowError:
        fits = False
    if not fits:
        raise TypeError(f"Type of feed value {value} with type {type(value)} is not compatible with Tensor type "
                        f"{tensor.dtype.np_dtype.type}. Try explicitly setting the type of the feed tensor to a "
                        f"larger type (e.g. int64).")


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


def attributed_error(error: Exception, executable: Executable) -> Exception:
    """The error to raise for a kernel failure: a TF error class naming the op that failed."""
    op = getattr(error, "tfnb_op", None)  # set where one line runs several ops (reference executor, fusion)
    trace = error.__traceback__
    while trace is not None and op is None:
        op = _op_of(executable.node_at(trace.tb_frame.f_code, trace.tb_lineno))
        trace = trace.tb_next
    if isinstance(error, OpError):
        return error if error.op is not None else type(error)(None, op, error.message)
    if isinstance(error, MemoryError):
        return ResourceExhaustedError(None, op, f"Out of memory while running the op: {error}")
    return InvalidArgumentError(None, op, f"{type(error).__name__}: {error}")


def _op_of(node) -> object:
    """The op a line of generated code runs; for a Send or Recv, the op whose value it moves."""
    if node is None or node.op is not None:
        return node.op if node is not None else None
    return node.tensor.op if node.tensor is not None else None
