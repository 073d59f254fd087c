"""RunOptions and RunMetadata: per-node timings of a traced run, what the executor did, and a Chrome trace.

A traced run (`RunOptions(trace_level=FULL_TRACE)`) runs on the reference executor
(tfnb/runtime/executor.py), which times every node instance and records its ready queue.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass
class RunOptions:
    """Options for one `Session.run`; `trace_level=RunOptions.FULL_TRACE` records per-node stats."""

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

    def node_stats(self) -> list[NodeExecStats]:
        """Every node's stats, in execution order."""
        stats = [s for device in self.step_stats.dev_stats for s in device.node_stats]
        return sorted(stats, key=lambda s: s.order)

    def to_chrome_trace(self) -> dict:
        """The run as Chrome trace-event JSON (open in Perfetto or chrome://tracing)."""
        events = []
        for pid, device in enumerate(self.step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": device.device}})
            for stats in device.node_stats:
                events.append({"name": stats.node_name, "cat": stats.op_type, "ph": "X", "pid": pid,
                               "tid": stats.thread_id % 100000, "ts": stats.all_start_micros,
                               "dur": max(stats.all_end_rel_micros, 0.001),
                               "args": {"op": stats.op_type, "shapes": [list(s) for s in stats.output_shapes],
                                        "dtypes": stats.output_dtypes, "bytes": stats.output_bytes}})
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


def summarize(outputs) -> tuple:
    """(shape, dtype name, bytes) of each output value, for traces."""
    summaries = []
    for value in outputs:
        dtype = getattr(value, "dtype", None)
        summaries.append((tuple(getattr(value, "shape", ())), dtype.name if dtype is not None else type(value).__name__,
                          int(getattr(value, "nbytes", 0))))
    return tuple(summaries)
