"""Compiles a control-flow plan into Python: each loop frame becomes a `while`, each cond a dead check.

The frame executor (tfnb/runtime/executor.py) is the reference semantics, and runs traced steps; this
is its fast path for untraced ones. A loop frame's values live in variables: its Merges start from
the Enters, the condition breaks out of the `while`, the body computes the NextIteration values,
and the Exits read the Merges once the loop ends. Values that a cond's Switch can make dead are
None; only ops downstream of such a Switch check for it. A graph that is not built as tf.cond and
tf.while_loop build graphs (frames that do not nest cleanly) is left to the frame executor.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.tensor import Tensor
from tfnb.runtime.codegen import Compiled, Step, scalar_constant, var

_counter = itertools.count()


class NotStructured(Exception):
    """The plan's frames do not nest as tf.while_loop builds them."""


@dataclass
class FrameBlock:
    """A loop frame being compiled: its ops, its Merges, Enters, Exits, and nested frames."""

    name: str
    parent: FrameBlock | None
    ops: list = field(default_factory=list)
    children: dict = field(default_factory=dict)
    enters: list = field(default_factory=list)
    exits: list = field(default_factory=list)

    @property
    def merges(self) -> list:
        return [op for op in self.ops if op.type == "Merge" and _is_loop_merge(op)]


def _is_loop_merge(op) -> bool:
    return any(t.op.type == "NextIteration" for t in op.inputs)


def _is_loop_switch(op) -> bool:
    return op.type == "Switch" and op.inputs[1].op.type == "LoopCond"


def compile_structured(ops, feeds, fetches, placement, bind) -> Compiled:
    """Generates `run(feeds, step)` for a control-flow plan; raises NotStructured if it cannot."""
    root = _frames(ops)
    writer = _Writer(ops, feeds, fetches, placement, bind)
    writer.emit_feeds()
    writer.emit_block(root, depth=2)
    return writer.finish()


def _frames(ops) -> FrameBlock:
    """Assigns every op to its loop frame (following Enter and Exit), checking the frames nest."""
    root = FrameBlock("", None)
    frame_of: dict = {}
    for op in ops:
        if op.type == "Enter":
            parent = _input_frame(op, frame_of, root)
            key = op.attrs["frame_name"]
            frame = parent.children.get(key)
            if frame is None:
                frame = parent.children[key] = FrameBlock(key, parent)
            frame.enters.append(op)
        elif op.type == "Exit":
            inner = _input_frame(op, frame_of, root)
            if inner.parent is None:
                raise NotStructured(f"Exit {op.name} outside a loop")
            inner.exits.append(op)
            frame = inner.parent
        else:
            frame = _input_frame(op, frame_of, root)
            frame.ops.append(op)
        frame_of[op] = frame
    return root


def _input_frame(op, frame_of, root) -> FrameBlock:
    sources = [t.op for t in op.inputs if t.op in frame_of and not (op.type == "Merge" and t.op.type == "NextIteration")]
    sources += [c for c in op._control_inputs if c in frame_of]
    frames = {id(frame_of[s]): frame_of[s] for s in sources}
    if len(frames) > 1:
        raise NotStructured(f"{op.name} takes inputs from several frames")
    return next(iter(frames.values())) if frames else root


class _Writer:
    """Accumulates the generated source, the bound kernels and constants, and the line -> op map."""

    def __init__(self, ops, feeds, fetches, placement, bind) -> None:
        self.ops, self.feeds, self.fetches = ops, list(feeds), list(fetches)
        self.placement, self.bind = placement, bind
        self.fed = set(feeds)
        self.lines: list[str] = []
        self.bound: dict = {}
        self.line_ops: dict = {}
        self.may_be_dead: set = set()
        self.names: dict[Tensor, str] = {}
        self.live_names: dict = {}
        self.steps = [Step(op, None, False, placement[op].name, [], []) for op in ops]

    # -- naming ---------------------------------------------------------------------------------

    def name(self, tensor: Tensor) -> str:
        return self.names.get(tensor) or var(tensor)

    def emit(self, depth: int, line: str, op=None) -> None:
        if op is not None:
            self.line_ops[len(self.lines) + 3] = op
        self.lines.append("    " * depth + line)

    def emit_feeds(self) -> None:
        if self.feeds:
            self.emit(2, f"{', '.join(var(t) for t in self.feeds)}, = feeds")

    # -- blocks ---------------------------------------------------------------------------------

    def emit_block(self, block: FrameBlock, depth: int) -> None:
        """The ops of one frame level in dependency order, nested loops as units."""
        for item in self._ordered_items(block):
            if isinstance(item, FrameBlock):
                self.emit_loop(item, depth)
            else:
                self.emit_op(item, depth)

    def _ordered_items(self, block: FrameBlock) -> list:
        """The block's ops (loop bookkeeping excluded) and child frames, each after what it needs."""
        skip = set(block.merges) | {op for op in block.ops if _is_loop_switch(op) or op.type in ("NextIteration", "LoopCond")}
        items = [op for op in block.ops if op not in skip] + list(block.children.values())
        produced_by: dict = {}
        for item in items:
            for op in (self._all_ops(item) if isinstance(item, FrameBlock) else [item]):
                produced_by[op] = item
        needs = {id(item): self._needs(item, produced_by) for item in items}
        done, ordered, remaining = set(), [], list(items)
        while remaining:
            progress = False
            for item in list(remaining):
                if all(id(n) in done or n is item for n in needs[id(item)]):
                    ordered.append(item)
                    done.add(id(item))
                    remaining.remove(item)
                    progress = True
            if not progress:
                raise NotStructured("no order for the frame's items")
        return ordered

    def _all_ops(self, block: FrameBlock) -> list:
        ops = list(block.enters) + list(block.ops) + list(block.exits)
        for child in block.children.values():
            ops += self._all_ops(child)
        return ops

    def _needs(self, item, produced_by) -> list:
        ops = self._all_ops(item) if isinstance(item, FrameBlock) else [item]
        inside = set(ops)
        needed = []
        for op in ops:
            for source in [t.op for t in op.inputs] + list(op._control_inputs):
                if source not in inside and source in produced_by and produced_by[source] not in needed:
                    needed.append(produced_by[source])
        return needed

    def emit_loop(self, block: FrameBlock, depth: int) -> None:
        """A loop frame as a Python `while`: Merges from Enters, break on the condition, NextIterations."""
        merges = block.merges
        for enter in block.enters:
            self.names[enter.outputs[0]] = self.name(enter.inputs[0])
        guard = list(dict.fromkeys(self.name(e.inputs[0]) for e in block.enters if self._dead_possible(e.inputs[0])))
        body_depth = depth
        if guard:
            self.emit(depth, f"if {' is not None and '.join(guard)} is not None:")
            body_depth = depth + 1
        for merge in merges:
            self.names[merge.outputs[0]] = var(merge.outputs[0])
            self.emit(body_depth, f"{var(merge.outputs[0])} = {self.name(merge.inputs[0])}", merge)
        switches = [op for op in block.ops if _is_loop_switch(op)]
        condition = switches[0].inputs[1].op.inputs[0] if switches else None
        if condition is None:
            raise NotStructured(f"loop {block.name} has no LoopCond")
        for switch in switches:
            self.names[switch.outputs[1]] = self.name(switch.inputs[0])
            self.names[switch.outputs[0]] = self.name(switch.inputs[0])
        cond_part, body_part = self._split(block, switches)
        if condition.op in body_part:
            raise NotStructured(f"the condition of loop {block.name} depends on its body")
        self.emit(body_depth, "while True:")
        self.emit_block(FrameBlock(block.name, block.parent, cond_part), body_depth + 1)
        self.emit(body_depth + 1, f"if not {self.name(condition)}:", condition.op)
        self.emit(body_depth + 2, "break")
        self.emit_block(FrameBlock(block.name, block.parent, body_part, block.children), body_depth + 1)
        nexts = [next(t.op for t in m.inputs if t.op.type == "NextIteration") for m in merges]
        self.emit(body_depth + 1, f"{', '.join(var(m.outputs[0]) for m in merges)}, = "
                                  f"{', '.join(self.name(n.inputs[0]) for n in nexts)},")
        exits = block.exits
        for exit_op in exits:
            self.names[exit_op.outputs[0]] = var(exit_op.outputs[0])
            self.emit(body_depth, f"{var(exit_op.outputs[0])} = {self.name(exit_op.inputs[0])}", exit_op)
        if guard:
            self.emit(depth, "else:")
            for exit_op in exits:
                self.emit(depth + 1, f"{var(exit_op.outputs[0])} = None")
                self.may_be_dead.add(exit_op.outputs[0])

    def _split(self, block: FrameBlock, switches) -> tuple[list, list]:
        """The frame's ops computing the condition, and those of the body (downstream of the Switches)."""
        bookkeeping = set(block.merges) | set(switches) | {op for op in block.ops if op.type in ("NextIteration", "LoopCond")}
        in_body: set = set(switches) | {e for child in block.children.values() for e in child.exits}
        cond_part, body_part = [], []
        for op in block.ops:
            if op in bookkeeping:
                continue
            sources = [t.op for t in op.inputs] + list(op._control_inputs)
            if any(s in in_body for s in sources):
                in_body.add(op)
                body_part.append(op)
            else:
                cond_part.append(op)
        return cond_part, body_part

    # -- ops ------------------------------------------------------------------------------------

    def emit_op(self, op, depth: int) -> None:
        inputs = [self.name(t) for t in op.inputs]
        if op.inputs and all(t.shape.ndims == 0 for t in op.inputs):
            inputs = [scalar_constant(self.bound, name) for name in inputs]
        dead_inputs = [self.name(t) for t in op.inputs if self._dead_possible(t)]
        dead_controls = [e for e in (self._liveness(c) for c in op._control_inputs) if e is not None]
        outputs = [var(t) for t in op.outputs]
        if op.type == "Const":
            kernel, _ = self.bind(op, self.placement[op])
            self.bound[outputs[0]] = kernel()
            if dead_controls:
                self._emit_liveness(op, [], dead_controls, depth)
            return
        if op.type in ("Identity", "StopGradient") and not dead_controls:
            self.names[op.outputs[0]] = inputs[0]
            if dead_inputs:
                self.may_be_dead.add(op.outputs[0])
            return
        if op.type == "Switch":
            self._emit_switch(op, inputs, dead_inputs, dead_controls, depth)
            return
        if op.type == "Merge":
            self._emit_merge(op, inputs, depth)
            return
        kernel, needs_step = self.bind(op, self.placement[op])
        kernel_name = f"k{op._id}"
        self.bound[kernel_name] = kernel
        call = f"{kernel_name}({', '.join((['step'] if needs_step else []) + inputs)})"
        target = ", ".join(outputs) + ("," if len(outputs) > 1 else "") if outputs else ""
        guards = dead_inputs + [f"{c}" for c in dead_controls]
        if not guards:
            self.emit(depth, f"{target} = {call}" if target else call, op)
            return
        condition = " and ".join([f"{g} is not None" for g in dead_inputs] + dead_controls)
        dead_value = "None" if len(outputs) <= 1 else "(" + ", ".join(["None"] * len(outputs)) + ")"
        if target:
            self.emit(depth, f"{target} = {call} if {condition} else {dead_value}", op)
        else:
            self.emit(depth, f"if {condition}: {call}", op)
        for tensor in op.outputs:
            self.may_be_dead.add(tensor)
        self._emit_liveness(op, dead_inputs, dead_controls, depth)

    def _emit_switch(self, op, inputs, dead_inputs, dead_controls, depth: int) -> None:
        data, pred = inputs
        false_name, true_name = var(op.outputs[0]), var(op.outputs[1])
        self.emit(depth, f"{false_name}, {true_name} = (None, {data}) if {pred} else ({data}, None)", op)
        if dead_inputs:
            self.emit(depth, f"if {' is None or '.join(dead_inputs)} is None: {false_name} = {true_name} = None")
        self.may_be_dead.update(op.outputs)
        if dead_inputs:
            self.live_names[op] = f"({data} is not None)"

    def _emit_merge(self, op, inputs, depth: int) -> None:
        value, index = var(op.outputs[0]), var(op.outputs[1])
        choices = " else ".join(f"({name}, {k}) if {name} is not None" for k, name in enumerate(inputs))
        self.emit(depth, f"{value}, {index} = {choices} else (None, None)", op)
        self.bound.setdefault("_int32", _int32)
        self.emit(depth, f"{index} = _int32({index}) if {index} is not None else None")
        if all(self._dead_possible(t) for t in op.inputs):
            self.may_be_dead.update(op.outputs)

    def _emit_liveness(self, op, dead_inputs, dead_controls, depth: int) -> None:
        if not dead_inputs and not dead_controls:
            return
        name = f"live{op._id}"
        self.emit(depth, f"{name} = {' and '.join([f'{g} is not None' for g in dead_inputs] + dead_controls)}")
        self.live_names[op] = name
        if op.type == "Const":
            value_name = var(op.outputs[0])
            self.names[op.outputs[0]] = f"({value_name} if {name} else None)"
            self.may_be_dead.add(op.outputs[0])

    def _liveness(self, op) -> str | None:
        """An expression true when `op` ran alive in this iteration, or None when it always does."""
        if op in self.live_names:
            return self.live_names[op]
        if op.outputs and self._dead_possible(op.outputs[0]) and op.type != "Switch":
            return f"({self.name(op.outputs[0])} is not None)"
        return None

    def _dead_possible(self, tensor: Tensor) -> bool:
        return tensor in self.may_be_dead

    # -- the function ---------------------------------------------------------------------------

    def finish(self) -> Compiled:
        results = []
        for position, fetch in enumerate(self.fetches):
            if not isinstance(fetch, Tensor):
                results.append("None")
                continue
            name = self.name(fetch)
            if self._dead_possible(fetch):
                self.bound["_dead_fetch"] = _dead_fetch
                self.emit(2, f"if {name} is None: _dead_fetch({position})")
            results.append(name)
        self.emit(2, f"return ({''.join(r + ', ' for r in results)})")
        params = sorted(self.bound)
        source = (f"def _make({', '.join(params)}):\n    def run(feeds, step):\n"
                  + "".join(line + "\n" for line in self.lines) + "    return run\n")
        namespace: dict = {}
        exec(compile(source, f"<tfnb loop plan {next(_counter)}>", "exec"), namespace)
        run = namespace["_make"](*[self.bound[p] for p in params])
        return Compiled(source, run, self.line_ops, self.steps)


def _int32(value):
    import numpy as np
    return np.int32(value)


def _dead_fetch(position: int):
    raise InvalidArgumentError(None, None, f"Fetch {position} was not computed: it is on a branch that was not taken")
