"""The runtime of one task: its devices, its variables and the partitions masters registered with it.

A task (OSDI paper, section 3.3) lives as long as its process: every master (a client's session) that uses it
mirrors its graph there, registers its share of each plan once (tfnb/distributed/task_plan.py), then runs steps
by id. Variables and queues live in the task's resource containers, which every master's ops on this task share:
the parameters on a ps task are the same for each worker replica that reads and updates them.

Within a step, Sends and Recvs meet in the step's rendezvous (`TaskRendezvous`). A Send to a device of another
task pushes the value to that task over the cluster's comms (worker to worker, never through the client),
without waiting; the step waits for its pushes before it ends, and a failed push aborts it. A Recv of a value
from another task waits for it at most `recv_timeout_s`, so a lost peer cannot hang a step: it ends with
UnavailableError naming that task. Nothing here knows Dask: the transport that pushes is given
(tfnb/distributed/dask_backend.py).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from tfnb.client.session import attributed_error
from tfnb.distributed.task_plan import TaskPlanDef, rebuild
from tfnb.framework import errors
from tfnb.framework.device_spec import DeviceSpec, task_of
from tfnb.framework.graph import Graph
from tfnb.framework.graph_def import GraphDef
from tfnb.framework.importer import extend_graph
from tfnb.kernels import StepContext
from tfnb.kernels.host import to_host
from tfnb.runtime.binding import KernelCache
from tfnb.runtime.concurrent import InterOpThreads
from tfnb.runtime.devices import LocalDevice, local_devices
from tfnb.runtime.functions import FunctionLibrary
from tfnb.runtime.pipeline import Executable, executable_of
from tfnb.runtime.rendezvous import Rendezvous, StepAborted
from tfnb.runtime.resources import ResourceManager, reset_containers
from tfnb.runtime.tracing import ExecutorRecord

# Steps a task may run at once: steps of several masters, and steps blocked in a queue or an accumulator
# (a synchronous replica waits there for the others) must not wait for a free thread.
MAX_CONCURRENT_STEPS = 64
ENDED_STEPS_KEPT = 4096


class Transport:
    """How a task reaches another: `push(address, step_id, key, value)` delivers a value to that task's step."""

    def push(self, address: str, step_id: str, key: str, value) -> Future:
        raise NotImplementedError


@dataclass(frozen=True)
class ErrorReport:
    """A step's failure on a task, as the master raises it again: the error class, the op's name, the message."""

    kind: str
    op: str | None
    message: str

    @staticmethod
    def of(error: BaseException) -> ErrorReport:
        if isinstance(error, StepAborted):
            return ErrorReport("StepAborted", None, str(error))
        if not isinstance(error, errors.OpError):
            error = errors.InternalError(None, None, f"{type(error).__name__}: {error}")
        return ErrorReport(type(error).__name__, error.op.name if error.op is not None else None, error.message)


class TaskRendezvous(Rendezvous):
    """One step's rendezvous on a task: Sends to other tasks are pushed there, Recvs from them wait with a timeout.

    `peers` maps each task of the step to the address it is reached at, `recv_timeout_s` bounds a wait for a value
    from another task. A value pushed to this task arrives through `arrive`, perhaps before the step starts here.
    """

    def __init__(self, task: str, step_id: str, transport: Transport) -> None:
        super().__init__()
        self.task, self.step_id, self.transport = task, step_id, transport
        self.peers: dict[str, str] = {}
        self.recv_timeout_s: float | None = None
        self.bytes_pushed = 0
        self._pushes: list[Future] = []
        self._failure: BaseException | None = None

    def start(self, peers: dict[str, str], recv_timeout_s: float | None) -> None:
        self.peers, self.recv_timeout_s = peers, recv_timeout_s

    def arrive(self, key: str, value) -> None:
        """A value another task pushed for this step."""
        super().send(key, value)

    def send(self, key: str, value) -> None:
        destination = task_of(key.split(";")[1])
        if destination == self.task:
            super().send(key, value)
            return
        address = self.peers.get(destination)
        if address is None:
            raise errors.UnavailableError(None, None, f"Task {destination} is not in the cluster: no worker holds it")
        value = to_host(value)
        self.bytes_pushed += int(getattr(value, "nbytes", 0))
        future = self.transport.push(address, self.step_id, key, value)
        future.add_done_callback(lambda done: self._pushed(destination, done))
        self._pushes.append(future)

    def _pushed(self, destination: str, future: Future) -> None:
        error = CancelledError("the push was cancelled") if future.cancelled() else future.exception()
        if error is not None and self._failure is None:
            self._failure = errors.UnavailableError(None, None, f"Task {destination} is unavailable: sending to it "
                                                    f"failed ({type(error).__name__}: {error})")
            self.abort()

    def recv(self, key: str, timeout: float | None = None):
        source = task_of(key.split(";")[0])
        if source == self.task:
            return super().recv(key, timeout)
        try:
            return super().recv(key, self.recv_timeout_s)
        except TimeoutError:
            raise errors.UnavailableError(None, None, f"Task {source} is unavailable: no value for {key} came from "
                                          f"it within {self.recv_timeout_s:g} s") from None
        except StepAborted:
            if self._failure is not None:
                raise self._failure from None
            raise

    def finish(self) -> None:
        """Waits for this step's pushes to be delivered; UnavailableError if one failed."""
        wait(self._pushes)   # a failed push is reported by its callback
        if self._failure is not None:
            raise self._failure


class _MasterState:
    """What one master has on this task: its mirrored graph, its bound kernels and its registered partitions."""

    def __init__(self, resources: ResourceManager, devices: list[LocalDevice]) -> None:
        self.graph = Graph()
        self.kernels = KernelCache(resources)
        self.kernels.functions = FunctionLibrary(self.kernels, devices)
        self.inter_op = InterOpThreads(max(2, len(devices)))
        self.partitions: dict[int, Executable] = {}
        self.lock = threading.Lock()


class TaskRuntime:
    """The long-lived runtime of one task (`/job:ps/replica:0/task:0`): see the module docstring.

    A restarted task is a new runtime: the masters' steps on partitions registered before fail with UnavailableError.
    """

    def __init__(self, task: str, transport: Transport, device_count: dict | None = None) -> None:
        self.task = task
        self.transport = transport
        self.devices = local_devices(device_count, task)
        self.resources = ResourceManager(task)
        self.threads = ThreadPoolExecutor(MAX_CONCURRENT_STEPS, thread_name_prefix="tfnb-step")
        self.bytes_pushed = 0
        self._masters: dict[str, _MasterState] = {}
        self._steps: dict[str, TaskRendezvous] = {}
        self._ended: set[str] = set()
        self._ended_order: deque[str] = deque()
        self._handles = itertools.count(1)
        self._step_numbers = itertools.count(1)
        self._lock = threading.Lock()

    def describe(self) -> dict:
        """The task's name and devices (name, type, index), as a master asks for them."""
        return {"task": self.task, "devices": [(d.name, d.device_type, d.index) for d in self.devices]}

    # -- what masters call ----------------------------------------------------------------------

    def extend(self, master: str, graph_json: str) -> None:
        """Adds to the master's graph here the nodes it lacks (the 2015 paper's Extend)."""
        state = self._master(master)
        with state.lock:
            extend_graph(state.graph, GraphDef.from_json(graph_json))

    def register(self, master: str, definition: TaskPlanDef) -> dict:
        """Builds and compiles the master's share of a plan: the handle its steps name it by, and its source."""
        state = self._master(master)
        with state.lock:
            plan, names = rebuild(definition, state.graph)
            devices = {device.name: device for device in self.devices}
            devices.update({name: _arrival_device(name) for name in definition.peer_devices})
            executable = executable_of(plan, names, devices, state.kernels, definition.options, state.inter_op)
            handle = next(self._handles)
            state.partitions[handle] = executable
        return {"handle": handle, "source": executable.plan.source}

    def run_step(self, master: str, handle: int, step_id: str, feeds: list, peers: dict[str, str],
                 timeout_in_ms: int, recv_timeout_s: float | None, traced: bool = False) -> tuple[list, list]:
        """Runs a registered partition for step `step_id`: the values it fetches (NumPy arrays) and, when `traced`,
        what each node did, by node name, with wall-clock times (`traced_by_name`).

        Raises what the step raised, as an OpError naming the op (ErrorReport.of makes it portable).
        """
        state = self._masters.get(master)
        executable = state.partitions.get(handle) if state is not None else None
        if executable is None:
            raise errors.UnavailableError(None, None, f"Task {self.task} restarted: the partitions this session "
                                          f"registered there are gone")
        rendezvous = self._rendezvous(step_id)
        if rendezvous is None:
            raise StepAborted(f"step {step_id} was aborted before it started on {self.task}")
        rendezvous.start(peers, recv_timeout_s)
        step = StepContext(next(self._step_numbers), timeout_in_ms)
        step.rendezvous = rendezvous
        try:
            with executable.numpy_state(), executable.threads:
                values = executable.run_traced(feeds, step, ExecutorRecord()) if traced else \
                    executable.run(feeds, step)
            rendezvous.finish()
        except StepAborted:
            rendezvous.finish()
            raise
        except Exception as error:
            rendezvous.abort()
            raise attributed_error(error, executable) from error
        finally:
            self._end(step_id)
            self.bytes_pushed += rendezvous.bytes_pushed
        return [to_host(value) for value in values], traced_by_name(executable.plan, step.trace)

    def deliver(self, step_id: str, key: str, value) -> None:
        """A value another task's Send pushed for step `step_id` (dropped when the step already ended here)."""
        rendezvous = self._rendezvous(step_id)
        if rendezvous is not None:
            rendezvous.arrive(key, value)

    def abort(self, step_id: str) -> None:
        """Ends step `step_id` here: its Recvs stop waiting (another task failed, or the master gave up)."""
        rendezvous = self._rendezvous(step_id)
        if rendezvous is not None:
            rendezvous.abort()
        self._end(step_id)

    def forget(self, master: str) -> None:
        """Drops what a master registered (its session closed); variables stay, as on a TF server."""
        with self._lock:
            state = self._masters.pop(master, None)
        if state is not None:
            state.kernels.clear()
            state.inter_op.shutdown()

    def reset(self, containers: list[str] | None) -> None:
        """Clears resource containers (all of them when `containers` is None; '' is the default container)."""
        if containers is None or "" in containers:
            self.resources.reset()
        reset_containers(self.task, containers)

    def close(self) -> None:
        for master in list(self._masters):
            self.forget(master)
        self.reset(None)
        self.threads.shutdown(wait=False, cancel_futures=True)

    # -- bookkeeping ----------------------------------------------------------------------------

    def _master(self, master: str) -> _MasterState:
        with self._lock:
            state = self._masters.get(master)
            if state is None:
                state = self._masters[master] = _MasterState(self.resources, self.devices)
            return state

    def _rendezvous(self, step_id: str) -> TaskRendezvous | None:
        """The step's rendezvous here, made by whichever comes first, its start or a value for it; None once ended."""
        with self._lock:
            if step_id in self._ended:
                return None
            rendezvous = self._steps.get(step_id)
            if rendezvous is None:
                rendezvous = self._steps[step_id] = TaskRendezvous(self.task, step_id, self.transport)
            return rendezvous

    def _end(self, step_id: str) -> None:
        with self._lock:
            self._steps.pop(step_id, None)
            if step_id not in self._ended:
                self._ended.add(step_id)
                self._ended_order.append(step_id)
                if len(self._ended_order) > ENDED_STEPS_KEPT:
                    self._ended.discard(self._ended_order.popleft())


def traced_by_name(plan, trace: list) -> list[tuple]:
    """A traced run's entries with node names for node indices and wall-clock times for this process's clock,
    so the master can merge the tasks' traces (on one machine exactly; across machines, as their clocks agree)."""
    to_wall = time.time() - time.perf_counter()
    return [(plan.nodes[index].name, start + to_wall, end + to_wall, *rest) for index, start, end, *rest in trace]


def _arrival_device(name: str) -> LocalDevice:
    """A device of another task as its values arrive here: NumPy arrays, whatever that device holds them in."""
    spec = DeviceSpec.from_string(name)
    return LocalDevice(name, spec.device_type, spec.device_index, np)

