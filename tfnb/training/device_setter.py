"""tf.train.replica_device_setter: variables on parameter-server tasks, everything else on the worker (OSDI, 4.3).

The device function it returns looks at each op as it is created: a variable's op goes to a ps task, chosen by a
strategy (round robin by default, or the least loaded task by a load function), and any other op to the worker
device. Fields the op's enclosing device scopes already set win over both, as in TF.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tfnb.framework.device_spec import DeviceSpec
from tfnb.framework.operation import Operation

__all__ = ["replica_device_setter"]

# The ops that hold state a parameter server keeps: variables, and the accumulators that aggregate their gradients.
STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "VarHandleOp", "MutableHashTable",
                   "MutableHashTableV2", "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
                   "MutableDenseHashTable", "MutableDenseHashTableV2", "ConditionalAccumulatorV2",
                   "SparseConditionalAccumulatorV2")


class RoundRobinStrategy:
    """Gives ps tasks 0, 1, ..., num_tasks - 1, 0, ... to the variables in the order they are made."""

    def __init__(self, num_tasks: int) -> None:
        self._num_tasks, self._next = num_tasks, 0

    def __call__(self, op: Operation) -> int:
        task = self._next
        self._next = (self._next + 1) % self._num_tasks
        return task


class GreedyLoadBalancingStrategy:
    """Gives each variable to the ps task with the least load so far; `load_fn(op)` is the load it adds
    (tf.contrib.training's; `byte_size_load_fn` balances bytes)."""

    def __init__(self, num_tasks: int, load_fn: Callable[[Operation], float]) -> None:
        self._load_fn = load_fn
        self._loads = np.zeros(num_tasks)

    def __call__(self, op: Operation) -> int:
        task = int(np.argmin(self._loads))
        self._loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op: Operation) -> float:
    """The bytes of the variable `op` makes: its shape's size times its dtype's size (ValueError if unknown)."""
    shape = op.outputs[0].shape if op.type != "VarHandleOp" else op.attrs["shape"]
    dtype = op.attrs.get("dtype") or op.outputs[0].dtype
    if not shape.is_fully_defined():
        raise ValueError(f"Could not compute the byte size of {op.name}: its shape {shape} is not fully defined")
    return float(np.prod(shape.as_list(), dtype=np.int64)) * dtype.size


def replica_device_setter(ps_tasks: int = 0, ps_device: str = "/job:ps", worker_device: str = "/job:worker",
                          merge_devices: bool = True, cluster=None, ps_ops=None,
                          ps_strategy: Callable[[Operation], int] | None = None) -> Callable | None:
    """A device function for `tf.device`: variables round-robin (or by `ps_strategy`) over the ps tasks, the rest
    on `worker_device`; None when there are no ps tasks. `cluster` (a ClusterSpec or dict) counts them."""
    if cluster is not None:
        jobs = cluster.as_dict() if hasattr(cluster, "as_dict") else dict(cluster)
        ps_tasks = len(jobs.get(DeviceSpec.from_string(ps_device).job) or ())
    if ps_tasks == 0:
        return None
    if ps_strategy is None:
        ps_strategy = RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, tuple(ps_ops or STANDARD_PS_OPS), ps_strategy)
    return chooser.device_function


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks: int, ps_device: str, worker_device: str, ps_ops: tuple, strategy: Callable) -> None:
        self.ps_tasks, self.ps_device, self.worker_device = ps_tasks, ps_device, worker_device
        self.ps_ops, self.strategy = ps_ops, strategy

    def device_function(self, op: Operation) -> str:
        """The device `op` requests: a ps task for a variable's op, the worker device for others; what the op's own
        scopes set (op.device) overrides either."""
        current = DeviceSpec.from_string(op.device or "")
        if self.ps_device and op.type in self.ps_ops:
            ps = DeviceSpec.from_string(self.ps_device)
            if ps.job and (current.job is None or current.job == ps.job):
                ps = DeviceSpec(ps.job, ps.replica, self.strategy(op), ps.device_type, ps.device_index)
            return ps.merge_from(current).to_string()
        return DeviceSpec.from_string(self.worker_device or "").merge_from(current).to_string()
