"""The master: a distributed session's side in the client (OSDI paper, section 3.3; 2015 paper, section 3.3).

The client's session compiles each request once for the whole cluster: the same pipeline as in one process
(prune, order, rewrite, place on every task's devices, partition with a Send and a Recv wherever a value
crosses devices), with two differences: ops that name no job go to the session's task, and fed values and
folded constants reach each task with the step or its registration, so they never cross between tasks.
The master registers each task's share of the plan once (tfnb/distributed/task_plan.py), with the task's
copy of the graph kept up to date by Extend, then runs steps by id: one call per task, carrying the values
fed there and returning the values fetched there. Values between tasks go from worker to worker.
"""

from __future__ import annotations

import contextlib
import time
import uuid

import numpy as np

from tfnb.distributed.task_plan import TaskPlanDef, task_plans
from tfnb.framework import errors
from tfnb.framework.device_spec import DeviceSpec, local_device, task_of
from tfnb.framework.graph import Graph
from tfnb.framework.tensor import Tensor
from tfnb.kernels import StepContext
from tfnb.kernels.intra_op import KernelNumpyState
from tfnb.runtime.binding import KernelCache
from tfnb.runtime.devices import LocalDevice, local_devices
from tfnb.runtime.pipeline import CompileOptions, build_plan
from tfnb.runtime.plan import CONSTANT, FEED, Plan

DEFAULT_RECV_TIMEOUT_S = 60.0


class Master:
    """A distributed session's master on `cluster` (a DaskCluster), placing ops that name no job on `default_task`.

    `tasks` are the cluster's tasks (their names); every one must be hosted by a worker within `wait_s` seconds.
    """

    def __init__(self, cluster, tasks: list[str], default_task: str, config, wait_s: float = 60.0) -> None:
        self.cluster = cluster
        self.id = uuid.uuid4().hex
        self.default_task = default_task
        self.described = cluster.describe(tasks, wait_s)
        self.addresses = {task: info["address"] for task, info in self.described.items()}
        self.devices = [LocalDevice(name, kind, index, np) for info in self.described.values()
                        for name, kind, index in info["devices"]]
        self.host = local_devices()[0]   # this process's CPU: it folds constants, as a local session's does
        timeout_ms = getattr(config, "operation_timeout_in_ms", 0)
        self.recv_timeout_s = timeout_ms / 1000 if timeout_ms > 0 else DEFAULT_RECV_TIMEOUT_S
        self._mirrored_version: int | None = None
        self._stateful_placements: dict[str, str] = {}  # a stateful op stays on the task and device it was given
        self._closed = False

    def compile(self, graph: Graph, fetches: list, feeds: list[Tensor], kernels: KernelCache,
                options: CompileOptions) -> DistributedExecutable:
        """The plan of one request for the cluster, its partitions registered with their tasks."""
        plan, _ = build_plan(fetches, feeds, self.devices, kernels, options, host=self.host,
                             default_task=self.default_task, inputs_home=inputs_home,
                             stateful=self._stateful_placements)
        definitions = task_plans(plan, options)
        self._mirror(graph)
        replies = self._call_each("tfnb_register", {task: {"master": self.id, "definition": definition}
                                                    for task, definition in definitions.items()})
        plan.source = "\n".join(f"# {task}\n{reply['source']}" for task, reply in replies.items())
        registered = {task: (reply["handle"], definitions[task]) for task, reply in replies.items()}
        return DistributedExecutable(self, graph, plan, registered)

    def _mirror(self, graph: Graph) -> None:
        """Sends the graph to the tasks when it grew since the last time (Extend adds what a task lacks)."""
        if self._mirrored_version == graph._version:
            return
        text = graph.as_graph_def().to_json()
        self._call_each("tfnb_extend", {task: {"master": self.id, "graph_json": text} for task in self.addresses})
        self._mirrored_version = graph._version

    def _call_each(self, op: str, arguments: dict[str, dict]) -> dict[str, object]:
        replies = self.cluster.call_all({task: (self.addresses[task], op, args) for task, args in arguments.items()})
        for task, reply in replies.items():
            if isinstance(reply, BaseException):
                raise errors.UnavailableError(None, None, f"Task {task} is unavailable: {op} failed "
                                              f"({type(reply).__name__}: {reply})") from reply
        return replies

    def step_id(self, number: int) -> str:
        """The cluster-wide id of this master's step `number` (every master numbers its steps from 1)."""
        return f"{self.id}:{number}"

    def reset(self, containers: list[str] | None) -> None:
        self._call_each("tfnb_reset", {task: {"containers": containers} for task in self.addresses})

    def close(self) -> None:
        """Drops what this session registered on the tasks; their variables stay, as on TF's servers."""
        if self._closed:
            return
        self._closed = True
        self.cluster.cancel_steps(self.step_id(""))
        live = self.cluster.tasks()   # a task that was lost or restarted since has nothing of this session
        self.cluster.call_all({task: (address, "tfnb_forget", {"master": self.id})
                               for task, address in self.addresses.items() if live.get(task) == address},
                              quick=True)   # one that just died may still be listed: not waited for


def inputs_home(device: str) -> str:
    """Where values fed to a task arrive for a reader on `device`: that device if it is a CPU, else its task's CPU:0."""
    if DeviceSpec.from_string(device).device_type == "CPU":
        return device
    return local_device("CPU", 0, task_of(device))


class DistributedExecutable:
    """A plan registered with the tasks of a cluster, run as the Session runs any executable (`run(feeds, step)`).

    A traced run (FULL_TRACE) gathers each node's timing from the tasks; tfnb differs from TF: the executor's
    record of its ready queue stays empty.
    """

    threads = contextlib.nullcontext()
    numpy_state = KernelNumpyState

    def __init__(self, master: Master, graph: Graph, plan: Plan, registered: dict[str, tuple[int, TaskPlanDef]]) \
            -> None:
        self.master, self.graph, self.plan, self.registered = master, graph, plan, registered
        self.fed = [(k, plan.feed_values.index(v)) for k, v in enumerate(plan.fetch_values)
                    if v is not None and v.kind == FEED]
        self.constant = [(k, plan.constants[v.name]) for k, v in enumerate(plan.fetch_values)
                         if v is not None and v.kind == CONSTANT]

    def new_step(self, step_id: int, timeout_in_ms: int = 0) -> StepContext:
        return StepContext(step_id, timeout_in_ms)

    def run(self, feeds: list, step: StepContext, traced: bool = False) -> list:
        """Runs one step on every task of the plan; the fetched values, in the plan's order (with `traced`, the
        tasks' traces merged into `step.trace`)."""
        master = self.master
        step_id = master.step_id(step.step_id)
        requests = {task: (master.addresses[task], {
            "master": master.id, "handle": handle, "step_id": step_id, "peers": master.addresses,
            "feeds": [feeds[k] for k in definition.feed_positions], "timeout_in_ms": step.timeout_in_ms,
            "recv_timeout_s": master.recv_timeout_s, "traced": traced})
            for task, (handle, definition) in self.registered.items()}
        replies = master.cluster.run_step(requests, step_id) if requests else {}
        failures = [reply["error"] for reply in replies.values() if "error" in reply]
        if failures:
            raise self._error(failures)
        results = [None] * len(self.plan.fetch_values)
        for task, reply in replies.items():
            for (position, _), value in zip(self.registered[task][1].fetches, reply["values"]):
                results[position] = value
        for k, feed in self.fed:
            results[k] = feeds[feed]
        for k, value in self.constant:
            results[k] = value
        if traced:
            step.trace = self._merged_trace([reply["trace"] for reply in replies.values()])
        return results

    def run_traced(self, feeds: list, step: StepContext, record) -> list:
        return self.run(feeds, step, traced=True)

    def _merged_trace(self, traces: list[list]) -> list[tuple]:
        """The tasks' trace entries on this process's clock, by index into the plan's nodes, in the order they began."""
        index = {node.name: k for k, node in enumerate(self.plan.nodes)}
        to_local = time.perf_counter() - time.time()
        entries = [(index[name], start + to_local, end + to_local, *rest)
                   for trace in traces for name, start, end, *rest in trace]
        return sorted(entries, key=lambda entry: entry[1])

    def node_at(self, code, line: int) -> None:
        return None

    def _error(self, failures: list[dict]) -> errors.OpError:
        """The error a failed step raises: the first that is not another task's abort, naming the op here."""
        report = next((f for f in failures if f["kind"] != "StepAborted"), failures[0])
        kind = getattr(errors, report["kind"], None)
        if kind is None or report["kind"] == "StepAborted":
            kind = errors.AbortedError
        op = self.graph.get_operation_by_name(report["op"]) if report["op"] is not None else None
        return kind(None, op, report["message"])
