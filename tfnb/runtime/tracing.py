"""RunOptions and RunMetadata: per-node timings of a traced run, what the executor did, and a Chrome trace.

A traced run (`RunOptions(trace_level=FULL_TRACE)`) runs on the reference executor
(tfnb/runtime/executor.py), which times every node instance and records its ready queue. A timed run
(`SOFTWARE_TRACE`, or `HARDWARE_TRACE`: tfnb reads no hardware counters) runs the plan's generated code as an
untraced run does, fused kernels and reused buffers included, and times each of its lines: the step as it
runs, where a traced step runs every op unfused. Each line's CPU time (the whole process's, helper threads
included) says how many cores it kept busy.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_FRAME_PART = re.compile(r"(.+?):(\d+)(?:/|$)")


def frame_path(tag: str) -> list[tuple[str, int]]:
    """A frame tag as (frame name, iteration) pairs, outermost first: 'while:1/while/while:0' ->
    [('while', 1), ('while/while', 0)]; frame names may hold '/' themselves, '' is the root frame."""
    return [(name, int(iteration)) for name, iteration in _FRAME_PART.findall(tag)]


@dataclass
class RunOptions:
    """Options for one `Session.run`: `trace_level=FULL_TRACE` records per-node stats on the reference executor,
    SOFTWARE_TRACE (or HARDWARE_TRACE) times each line of the code that an untraced run executes."""

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    trace_level: int = 0
    timeout_in_ms: int = 0
    output_partition_graphs: bool = False


@dataclass
class NodeExecStats:
    """One node's execution in a traced run; times are microseconds from the step's start."""

    node_name: str
    op_type: str
    device: str
    all_start_micros: float
    all_end_rel_micros: float
    thread_id: int
    output_shapes: list
    output_dtypes: list
    output_bytes: list
    order: int
    timeline_label: str = ""
    frame: str = ""
    dead: bool = False
    # Timed runs (SOFTWARE_TRACE) only: the CPU time of the whole process while the line ran, every thread's (its
    # kernels' helper threads, and anything else the process ran meanwhile). Over all_end_rel_micros, the cores the
    # line kept busy: up to intra_op_parallelism_threads for a kernel that splits its work. None elsewhere.
    cpu_micros: float | None = None

    @property
    def op_end_rel_micros(self) -> float:
        return self.all_end_rel_micros


@dataclass
class DeviceStepStats:
    device: str
    node_stats: list[NodeExecStats] = field(default_factory=list)


@dataclass
class StepStats:
    dev_stats: list[DeviceStepStats] = field(default_factory=list)


@dataclass
class ExecutorRecord:
    """What the reference executor did in one traced step, event by event.

    `instances[i]` is (node name, frame tag) of node instance i ('' outside loops, 'while:2' inside), and
    `inputs[name]` the nodes (or fed tensors) that node waits for. `events`, in order: ("count", i, n, source)
    when an input of i arrived from `source` and n are still awaited (source None: the count a root-frame
    instance starts with), ("ready", i) when i joined the ready queue, ("run", i) when the executor took it
    from the queue to run it.
    """

    instances: list[tuple[str, str]] = field(default_factory=list)
    inputs: dict[str, list[str]] = field(default_factory=dict)
    events: list[tuple] = field(default_factory=list)


@dataclass
class RunMetadata:
    """Filled by a traced run: `step_stats` (per device, per node), `partition_graphs` (node names per device,
    Sends and Recvs included) and `executor_record` (the ready queue's events, see ExecutorRecord)."""

    step_stats: StepStats = field(default_factory=StepStats)
    partition_graphs: dict[str, list[str]] = field(default_factory=dict)
    execution_order: list[str] = field(default_factory=list)
    executor_record: ExecutorRecord = field(default_factory=ExecutorRecord)
    memory: dict[str, list[tuple[int, str, int]]] = field(default_factory=dict)

    def peak_bytes(self) -> dict[str, int]:
        """Per device, the most bytes of values alive at once in the step (see `memory`)."""
        return {device: max((live for _, _, live in points), default=0) for device, points in self.memory.items()}

    def bytes_moved(self) -> int:
        """The bytes that Sends handed to other devices in the step (halved by bfloat16 transfers)."""
        return sum(sum(stats.output_bytes) for stats in self.node_stats() if stats.op_type == "_Send")

    def node_stats(self) -> list[NodeExecStats]:
        """Every node's stats, in execution order."""
        stats = [s for device in self.step_stats.dev_stats for s in device.node_stats]
        return sorted(stats, key=lambda s: s.order)

    def to_chrome_trace(self) -> dict:
        """The run as Chrome trace-event JSON (open in Perfetto or chrome://tracing): one process per device, one
        thread per executor thread; a loop's node instances are named 'node [frame:iteration]' and carry their
        frame, iteration and full frame tag in their args, so iterations can be told apart and searched; a timed
        run's lines carry the process's CPU time while they ran (cpu_us)."""
        events = []
        for pid, device in enumerate(self.step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": device.device}})
            for stats in device.node_stats:
                args = {"op": stats.op_type, "shapes": [list(s) for s in stats.output_shapes],
                        "dtypes": stats.output_dtypes, "bytes": stats.output_bytes}
                name = stats.node_name
                if stats.frame:
                    frame, iteration = frame_path(stats.frame)[-1]
                    args.update({"frame": frame, "iteration": iteration, "frame_tag": stats.frame})
                    name = f"{name} [{stats.frame}]"
                if stats.dead:
                    args["dead"] = True
                if stats.cpu_micros is not None:  # a timed run's line: the cores it kept busy
                    args["cpu_us"] = stats.cpu_micros
                events.append({"name": name, "cat": stats.op_type, "ph": "X", "pid": pid,
                               "tid": stats.thread_id % 100000, "ts": stats.all_start_micros,
                               "dur": max(stats.all_end_rel_micros, 0.001), "args": args})
        return {"traceEvents": events, "displayTimeUnit": "ms"}

    def save_chrome_trace(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(self.to_chrome_trace(), f)


class Timeline:
    """TF1's `tensorflow.python.client.timeline.Timeline(step_stats)`, for code that uses it."""

    def __init__(self, step_stats: StepStats) -> None:
        self._metadata = RunMetadata(step_stats=step_stats)

    def generate_chrome_trace_format(self, show_dataflow: bool = True, show_memory: bool = False) -> str:
        return json.dumps(self._metadata.to_chrome_trace())


def fill_run_metadata(metadata: RunMetadata, plan, trace: list, record: ExecutorRecord, started: float) -> None:
    """Turns a traced run's entries into step stats and execution order; partition graphs come from the plan."""
    by_device: dict[str, DeviceStepStats] = {}
    for order, (index, start, end, thread, outputs, frame, dead) in enumerate(trace):
        node = plan.nodes[index]
        stats = NodeExecStats(
            node_name=node.name, op_type=node.type, device=node.device,
            all_start_micros=(start - started) * 1e6, all_end_rel_micros=(end - start) * 1e6,
            thread_id=thread, output_shapes=[o[0] for o in outputs], output_dtypes=[o[1] for o in outputs],
            output_bytes=[o[2] for o in outputs], order=order, frame=frame, dead=dead,
            timeline_label=f"{node.name} = {node.type}()" + (f" [{frame}]" if frame else "") + (" (dead)" if dead else ""))
        by_device.setdefault(node.device, DeviceStepStats(node.device)).node_stats.append(stats)
        metadata.execution_order.append(node.name)
    metadata.step_stats = StepStats(list(by_device.values()))
    metadata.partition_graphs = {device: [node.name for node in nodes] for device, nodes in plan.partitions.items()}
    metadata.executor_record = record
    if not any(op.op_def.control_flow for op in plan.ops):
        metadata.memory = live_bytes(plan, trace)


def fill_timed_run_metadata(metadata: RunMetadata, plan, trace: list, started: float) -> None:
    """Turns a timed run's lines (codegen.TimedLine, start, end, thread, cpu seconds) into step stats and execution
    order; a fused line is one entry, named after its last op and typed by all of them ('Conv2D+BiasAdd+Relu')."""
    by_device: dict[str, DeviceStepStats] = {}
    for order, (line, start, end, thread, cpu) in enumerate(sorted(trace, key=lambda entry: entry[1])):
        stats = NodeExecStats(node_name=line.node_name, op_type=line.op_type, device=line.device,
                              all_start_micros=(start - started) * 1e6, all_end_rel_micros=(end - start) * 1e6,
                              thread_id=thread, output_shapes=[], output_dtypes=[], output_bytes=[], order=order,
                              timeline_label=line.label, cpu_micros=cpu * 1e6)
        by_device.setdefault(line.device, DeviceStepStats(line.device)).node_stats.append(stats)
        metadata.execution_order.append(line.node_name)
    metadata.step_stats = StepStats(list(by_device.values()))
    metadata.partition_graphs = {device: [node.name for node in nodes] for device, nodes in plan.partitions.items()}


def live_bytes(plan, trace: list) -> dict[str, list[tuple[int, str, int]]]:
    """Per device, after each node that ran there (in execution order): the bytes of values alive on it.

    A value is alive from the end of the node that computes it to the end of its last reader (fetched values to
    the end of the step); what a Send hands over is counted on the Recv's device. For plans without control flow,
    where every node runs once.
    """
    readers: dict[int, int] = {}
    for node in plan.nodes:
        for value in node.inputs:
            readers[id(value)] = readers.get(id(value), 0) + 1
    kept = {id(value) for value in plan.fetch_values if value is not None}
    size: dict[int, int] = {}
    live: dict[str, int] = {}
    memory: dict[str, list[tuple[int, str, int]]] = {}
    for order, (index, _, _, _, outputs, _, _) in enumerate(trace):
        node = plan.nodes[index]
        if node.type != "_Send":
            for value, (_, _, nbytes) in zip(node.outputs, outputs):
                size[id(value)] = nbytes
                live[node.device] = live.get(node.device, 0) + nbytes
        for value in node.inputs:
            readers[id(value)] -= 1
            if not readers[id(value)] and id(value) not in kept and id(value) in size:
                live[value.device] -= size.pop(id(value))
        memory.setdefault(node.device, []).append((order, node.name, live.get(node.device, 0)))
    return memory


def summarize(outputs) -> tuple:
    """(shape, dtype name, bytes) of each output value, for traces."""
    summaries = []
    for value in outputs:
        dtype = getattr(value, "dtype", None)
        summaries.append((tuple(getattr(value, "shape", ())), dtype.name if dtype is not None else type(value).__name__,
                          int(getattr(value, "nbytes", 0))))
    return tuple(summaries)
