"""Devices of this process, and the placer: constraints first, then greedy by a cost model.

As in the 2015 paper, each node goes to the feasible device where a simulated execution says it
would finish soonest, counting its compute cost and the cost of moving its inputs there. The
estimates for every candidate are kept on the op (`placement_reasons`) so they can be shown.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

import numpy as np

from tfnb.framework import device_spec as _device
from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.op_registry import default_cost
from tfnb.framework.operation import Operation, is_loop_back_edge
from tfnb.kernels import has_kernel
from tfnb.runtime.devices import LocalDevice

OP_OVERHEAD_US = 1.0
US_PER_COST_UNIT = 0.001
TRANSFER_LATENCY_US = 2.0
US_PER_TRANSFERRED_BYTE = 1e-4


def colocation_groups(ops: list[Operation]) -> dict[Operation, Operation]:
    """Each op's group leader: ops sharing a `_class` colocation name or a resource are one group, and so are
    a loop's Merge and its NextIteration (the back edge of a loop never crosses devices)."""
    parent = {op: op for op in ops}
    by_name = {op.name: op for op in ops}

    def find(op):
        while parent[op] is not op:
            parent[op] = parent[parent[op]]
            op = parent[op]
        return op

    def union(a, b):
        parent[find(a)] = find(b)

    for op in ops:
        for name in op.attrs.get("_class", ()):
            if name in by_name:
                union(op, by_name[name])
        for tensor in op.inputs:
            if tensor.op in parent and (tensor.dtype.name == "resource" or is_loop_back_edge(op, tensor)):
                union(op, tensor.op)
    return {op: find(op) for op in ops}


def place(ops: list[Operation], dependencies: dict, devices: list[LocalDevice], allow_soft_placement: bool = False,
          default_task: str = "", stateful: dict[str, str] | None = None) -> dict[Operation, LocalDevice]:
    """Assigns every op (given in execution order) a device; records reasons on each op.

    `default_task` (a distributed session's task, `/job:worker/replica:0/task:0`) is where an op that names no job
    goes, as TF's master places it: a request of `/device:CPU:1` means that task's CPU:1.
    `stateful`: the device names that a session's earlier plans gave its stateful ops, by op name, updated with
    this plan's. As TF's placer, a stateful op (and its colocation group) stays where it was first placed: its
    resource lives there, and a variable initialized on one device must not be updated on another.
    """
    leaders = colocation_groups(ops)
    members: dict[Operation, list[Operation]] = {}
    for op in ops:
        members.setdefault(leaders[op], []).append(op)
    default = _device.DeviceSpec.from_string(default_task) if default_task else None
    stateful = {} if stateful is None else stateful
    by_name = {d.name: d for d in devices}
    users = _resource_users(ops)
    feasible = {}
    for leader, group in members.items():
        candidates = _feasible_in_graph(group, users, devices, allow_soft_placement, default)
        kept = [by_name[stateful[op.name]] for op in group if by_name.get(stateful.get(op.name)) in candidates]
        feasible[leader] = kept[:1] or candidates
    placement: dict[Operation, LocalDevice] = {}
    group_device: dict[Operation, LocalDevice] = {}
    device_free = {d.name: 0.0 for d in devices}
    finish: dict[Operation, float] = {}
    for op in ops:
        leader = leaders[op]
        candidates = [group_device[leader]] if leader in group_device else feasible[leader]
        estimates = {d.name: _finish_time(op, d, dependencies[op], placement, finish, device_free)
                     for d in candidates}
        chosen = min(candidates, key=lambda d: estimates[d.name])
        group_device[leader] = chosen
        placement[op] = chosen
        finish[op] = estimates[chosen.name]
        device_free[chosen.name] = finish[op]
        op.assigned_device = chosen.name
        op.placement_reasons = {"estimated_finish_us": estimates,
                                "constraint": op.device or None,
                                "colocated_with": leader.name if leader is not op else None}
        if op.op_def.stateful:
            stateful[op.name] = chosen.name
    return placement


def _resource_users(ops: list[Operation]) -> dict[Operation, list[Operation]]:
    """For each op of `ops` that outputs a resource, every op of the graph that uses it (in this plan or not)."""
    owners = {op for op in ops if any(t.dtype.name == "resource" for t in op.outputs)}
    users: dict[Operation, list[Operation]] = {}
    if owners:
        for op in ops[0].graph.get_operations():
            for tensor in op.inputs:
                if tensor.op in owners and tensor.dtype.name == "resource":
                    users.setdefault(tensor.op, []).append(op)
    return users


def _feasible_in_graph(group: list[Operation], users: dict, devices: list[LocalDevice], soft: bool,
                       default: _device.DeviceSpec | None) -> list[LocalDevice]:
    """The devices a group may go to, counting the graph's other users of its resources, as TF places the whole
    graph: a variable first read by its initializer goes where the op updating it asked to be (when they agree)."""
    members = set(group)
    others = [user for op in group for user in users.get(op, ()) if user not in members]
    if others:
        with contextlib.suppress(InvalidArgumentError):
            return _feasible(group + list(dict.fromkeys(others)), devices, soft, default)
    return _feasible(group, devices, soft, default)


def _feasible(group: list[Operation], devices: list[LocalDevice], soft: bool,
              default: _device.DeviceSpec | None) -> list[LocalDevice]:
    with_kernels = [d for d in devices if all(_runs_on(op, d) for op in group)]
    requested = [op for op in group if op.device]
    # As TF: an op using a resource goes where the resource is, whatever device it asked for itself.
    owners = [op for op in requested if any(t.dtype.name == "resource" for t in op.outputs)]
    for asking in [requested] + ([owners] if owners and owners != requested else []):
        specs = [_with_task(_device.DeviceSpec.from_string(op.device), default) for op in asking] or \
            [default or _device.DeviceSpec()]
        matching = [d for d in with_kernels if all(spec.matches(d.spec) for spec in specs)]
        if matching:
            return matching
    if with_kernels and (soft or not requested):  # the default task is a preference, never a constraint
        return with_kernels
    op = requested[0] if requested else group[0]
    refusing = next((o for o in requested if _takes_strings(o) and any(
        _device.DeviceSpec.from_string(o.device).matches(d.spec) and has_kernel(o.type, d.device_type)
        for d in devices)), None)
    if not with_kernels:
        reason = f"no kernel for op type {op.type} is registered for the available devices"
    elif refusing is not None:
        op = refusing
        reason = (f"it was explicitly assigned to {op.device}, whose kernels take no string tensors (as in TF, "
                  f"strings stay on the host; allow_soft_placement places the op there)")
    else:
        reason = f"it was explicitly assigned to {op.device}, and no such device exists"
    names = ", ".join(d.name for d in devices)
    raise InvalidArgumentError(None, op, f"Cannot assign a device for operation '{op.name}': {reason}. "
                               f"Available devices: [{names}]", device=op.device or "(unplaced)")


def _runs_on(op: Operation, device: LocalDevice) -> bool:
    """Whether `device` has a kernel for `op`: one for its type, and, on a device whose arrays hold numbers only
    (a GPU: CuPy has no string arrays), none of its inputs or outputs a string, as TF registers no GPU kernel
    taking strings."""
    return has_kernel(op.type, device.device_type) and (device.xp is np or not _takes_strings(op))


def _takes_strings(op: Operation) -> bool:
    return any(t.dtype.name == "string" for t in (*op.inputs, *op.outputs))


def _with_task(spec: _device.DeviceSpec, default: _device.DeviceSpec | None) -> _device.DeviceSpec:
    """`spec` on the default task when it names no job (unchanged without a default)."""
    if default is None or spec.job is not None:
        return spec
    return replace(spec, job=default.job, replica=default.replica, task=default.task)


def _finish_time(op, device, deps, placement, finish, device_free) -> float:
    ready = _inputs_ready(device.name, deps, lambda dep: placement[dep].name, finish)
    return max(ready, device_free[device.name]) + compute_cost_us(op)


def _inputs_ready(device: str, deps, device_of, finish: dict) -> float:
    """When the last of an op's inputs is on `device`: produced there, or moved there from another device."""
    ready = 0.0
    for dep in deps:
        ready = max(ready, finish[dep] + (transfer_cost_us(dep) if device_of(dep) != device else 0.0))
    return ready


def simulated_step_us(ops: list[Operation], dependencies: dict, placement: dict[Operation, str]) -> float:
    """The cost model's estimate of a step's time for ops on the given devices: each device runs, of the ops whose
    inputs have arrived (after a transfer when they come from another device), the one that can start first."""
    finish: dict[Operation, float] = {}
    device_free: dict[str, float] = {}
    waiting = list(ops)
    while waiting:
        ready = [op for op in waiting if all(dep in finish for dep in dependencies[op])]
        starts = {op: max(_inputs_ready(placement[op], dependencies[op], placement.__getitem__, finish),
                          device_free.get(placement[op], 0.0)) for op in ready}
        op = min(ready, key=starts.__getitem__)
        finish[op] = starts[op] + compute_cost_us(op)
        device_free[placement[op]] = finish[op]
        waiting.remove(op)
    return max(finish.values(), default=0.0)


def compute_cost_us(op: Operation) -> float:
    """Estimated run time of an op, in microseconds, from its registry cost."""
    cost = op.op_def.cost(op) if op.op_def.cost else default_cost(op)
    return OP_OVERHEAD_US + US_PER_COST_UNIT * cost


def transfer_cost_us(op: Operation) -> float:
    """Estimated time to move an op's outputs to another device."""
    total = 0.0
    for tensor in op.outputs:
        dims = tensor.shape.as_tuple() or ()
        total += float(np.prod([d or 1 for d in dims])) * max(tensor.dtype.size, 1)
    return TRANSFER_LATENCY_US + US_PER_TRANSFERRED_BYTE * total
