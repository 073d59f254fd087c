"""Code for a plan with control flow: each loop frame becomes a `while`, each cond a check for dead values.

The reference executor (tfnb/runtime/executor.py) defines what such a plan means; this is its fast
twin. A loop frame's values live in variables: its Merges start from the Enters, the condition
breaks out of the `while`, the body computes the NextIteration values, and the Exits read the
Merges once the loop ends. Values that a cond's Switch can make dead are None; only nodes
downstream of such a Switch check for it. As in straight-line code, every line that runs an op
carries the op as a comment, values are named after their ops, Sends and Recvs meet in the step's
rendezvous, and `del` releases a value after its last reader (after the loop, for a value a loop reads).
A plan whose frames do not nest as tf.cond and tf.while_loop build them is left to the executor.
"""

from __future__ import annotations

import functools
import keyword
import time
from dataclasses import dataclass, field

import numpy as np

from tfnb.framework.errors import DeadlineExceededError, InvalidArgumentError
from tfnb.framework.operation import is_loop_back_edge
from tfnb.runtime.codegen import Compiled, Line, assemble, scalar_constant
from tfnb.runtime.naming import Names, kernel_name
from tfnb.runtime.plan import Node, Plan, Value

_BOOKKEEPING = ("NextIteration", "LoopCond")


class NotStructured(Exception):
    """The plan's frames do not nest as tf.while_loop builds them."""


@dataclass
class FrameBlock:
    """A loop frame being compiled: its nodes, its Enters and Exits, and nested frames."""

    name: str
    parent: FrameBlock | None
    nodes: list = field(default_factory=list)
    children: dict = field(default_factory=dict)
    enters: list = field(default_factory=list)
    exits: list = field(default_factory=list)

    @property
    def merges(self) -> list:
        return [node for node in self.nodes if _is_loop_merge(node)]


@dataclass
class Statement:
    """A generated line (with the names it reads and writes), or a compound one with nested blocks."""

    line: Line
    uses: set = field(default_factory=set)
    defines: set = field(default_factory=set)
    blocks: list = field(default_factory=list)   # compound statements: [(header Line or None, [Statement])]


def _is_loop_merge(node: Node) -> bool:
    return node.type == "Merge" and any(is_loop_back_edge(node.op, value.tensor) for value in node.inputs)


def _is_loop_switch(node: Node) -> bool:
    return node.type == "Switch" and node.inputs[1].producer is not None and node.inputs[1].producer.type == "LoopCond"


def compile_structured(plan: Plan, names: Names, bind, constants: dict) -> Compiled:
    """Generates `run(feeds, step)` for a plan with control flow; raises NotStructured if it cannot.

    `bind(node)` gives the node's kernel callable and whether it takes the step (Sends and Recvs too).
    """
    writer = _Writer(plan, names, bind, constants)
    body = writer.feed_statements() + [Statement(Line("_deadline = step.deadline"), defines={"_deadline"})] + \
        writer.block(_frames(plan.nodes)) + writer.return_statements()
    return assemble(_with_releases(body, writer.kept()), writer.bound, "loop plan")


def _frames(nodes: list[Node]) -> FrameBlock:
    """Assigns every node to its loop frame (following Enter and Exit), checking the frames nest."""
    root = FrameBlock("", None)
    frame_of: dict = {}
    for node in nodes:
        if node.type == "Enter":
            parent = _input_frame(node, frame_of, root)
            key = node.op.attrs["frame_name"]
            frame = parent.children.get(key)
            if frame is None:
                frame = parent.children[key] = FrameBlock(key, parent)
            frame.enters.append(node)
        elif node.type == "Exit":
            inner = _input_frame(node, frame_of, root)
            if inner.parent is None:
                raise NotStructured(f"Exit {node.name} outside a loop")
            inner.exits.append(node)
            frame = inner.parent
        else:
            frame = _input_frame(node, frame_of, root)
            frame.nodes.append(node)
        frame_of[node] = frame
    return root


def _sources(node: Node) -> list[Node]:
    """The nodes `node` waits for within an iteration (a Recv: its Send; a loop's Merge: not its back edge)."""
    sources = [v.producer for v in node.inputs if v.producer is not None
               and not (node.op is not None and is_loop_back_edge(node.op, v.tensor))]
    sources += node.control_inputs
    if node.type == "_Recv":
        sources.append(node.peer)
    return sources


def _input_frame(node: Node, frame_of, root) -> FrameBlock:
    frames = {id(frame_of[s]): frame_of[s] for s in _sources(node) if s in frame_of}
    if len(frames) > 1:
        raise NotStructured(f"{node.name} takes inputs from several frames")
    return next(iter(frames.values())) if frames else root


class _Writer:
    """Builds the statements, the bound kernels and constants, and tracks which values may be dead."""

    def __init__(self, plan: Plan, names: Names, bind, constants: dict) -> None:
        self.plan, self.names, self.bind = plan, names, bind
        self.bound: dict = dict(constants)
        self.aliases: dict[int, str] = {}          # id(Value) -> the name that holds it
        self.may_be_dead: set[int] = set()         # ids of Values that may be None (dead)
        self.live_names: dict[int, str] = {}       # id(Node) -> expression true when it ran alive
        self.read = {id(v) for node in plan.nodes for v in node.inputs} | {id(v) for v in plan.fetch_values}
        self.control_sources = {id(c) for node in plan.nodes for c in node.control_inputs}

    def name(self, value: Value) -> str:
        return self.aliases.get(id(value), value.name)

    def dead_possible(self, value: Value) -> bool:
        return id(value) in self.may_be_dead

    def kept(self) -> set[str]:
        """Names never released: bound values and what the function returns."""
        return set(self.bound) | _identifiers(*(self.name(v) for v in self.plan.fetch_values if v is not None))

    def feed_statements(self) -> list[Statement]:
        names = [value.name for value in self.plan.feed_values]
        return [Statement(Line(f"{', '.join(names)}, = feeds"), defines=set(names))] if names else []

    # -- blocks ---------------------------------------------------------------------------------

    def block(self, frame: FrameBlock) -> list[Statement]:
        """The nodes of one frame level in dependency order, nested loops as units."""
        statements: list[Statement] = []
        for item in self._ordered_items(frame):
            statements += self.loop(item) if isinstance(item, FrameBlock) else self.node(item)
        return statements

    def _ordered_items(self, frame: FrameBlock) -> list:
        """The frame's nodes (loop bookkeeping excluded) and child frames, each after what it needs."""
        skip = {id(n) for n in frame.nodes if _is_loop_merge(n) or _is_loop_switch(n) or n.type in _BOOKKEEPING}
        items = [n for n in frame.nodes if id(n) not in skip] + list(frame.children.values())
        produced_by: dict = {}
        for item in items:
            for node in (self._all_nodes(item) if isinstance(item, FrameBlock) else [item]):
                produced_by[id(node)] = item
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

    def _all_nodes(self, frame: FrameBlock) -> list:
        nodes = list(frame.enters) + list(frame.nodes) + list(frame.exits)
        for child in frame.children.values():
            nodes += self._all_nodes(child)
        return nodes

    def _needs(self, item, produced_by) -> list:
        nodes = self._all_nodes(item) if isinstance(item, FrameBlock) else [item]
        inside = {id(n) for n in nodes}
        needed = []
        for node in nodes:
            for source in _sources(node):
                owner = produced_by.get(id(source))
                if id(source) not in inside and owner is not None and owner not in needed:
                    needed.append(owner)
        return needed

    def loop(self, frame: FrameBlock) -> list[Statement]:
        """A loop frame as a Python `while`: Merges from Enters, break on the condition, NextIterations."""
        for enter in frame.enters:
            self.aliases[id(enter.outputs[0])] = self.name(enter.inputs[0])
        guard_values = [e.inputs[0] for e in frame.enters if self.dead_possible(e.inputs[0])]
        guard = list(dict.fromkeys(self.name(v) for v in guard_values))
        merges = frame.merges
        switches = [n for n in frame.nodes if _is_loop_switch(n)]
        if not switches:
            raise NotStructured(f"loop {frame.name} has no LoopCond")
        condition = switches[0].inputs[1].producer.inputs[0]
        statements = []
        for merge in merges:
            merged = merge.outputs[0]
            self.aliases[id(merged)] = merged.name
            statements.append(Statement(Line(f"{merged.name} = {self.name(merge.inputs[0])}", merge.describe(), merge),
                                        _identifiers(self.name(merge.inputs[0])), {merged.name}))
        for switch in switches:
            for output in switch.outputs:
                self.aliases[id(output)] = self.name(switch.inputs[0])
        cond_part, body_part = self._split(frame, switches)
        if condition.producer in body_part:
            raise NotStructured(f"the condition of loop {frame.name} depends on its body")
        body = [self._deadline_check(frame, switches[0].inputs[1].producer)]
        body += self.block(FrameBlock(frame.name, frame.parent, cond_part))
        body.append(Statement(Line(f"if not {self.name(condition)}: break", f"{frame.name}: LoopCond",
                                   switches[0].inputs[1].producer), _identifiers(self.name(condition))))
        body += self.block(FrameBlock(frame.name, frame.parent, body_part, frame.children))
        nexts = [next(v.producer for v in m.inputs if is_loop_back_edge(m.op, v.tensor)) for m in merges]
        next_names = [self.name(n.inputs[0]) for n in nexts]
        merged_names = [m.outputs[0].name for m in merges]
        body.append(Statement(Line(f"{', '.join(merged_names)}, = {', '.join(next_names)},",
                                   f"{frame.name}: NextIteration"), _identifiers(*next_names), set(merged_names)))
        statements.append(Statement(Line("while True:"), blocks=[(None, body)]))
        for exit_node in frame.exits:
            out = exit_node.outputs[0]
            self.aliases[id(out)] = out.name
            statements.append(Statement(Line(f"{out.name} = {self.name(exit_node.inputs[0])}", exit_node.describe(),
                                             exit_node), _identifiers(self.name(exit_node.inputs[0])), {out.name}))
        if not guard:
            return statements
        for exit_node in frame.exits:
            self.may_be_dead.add(id(exit_node.outputs[0]))
        dead_exits = [Statement(Line(f"{e.outputs[0].name} = None"), defines={e.outputs[0].name}) for e in frame.exits]
        header = Line(f"if {' is not None and '.join(guard)} is not None:")
        return [Statement(header, _identifiers(*guard), blocks=[(None, statements), (Line("else:"), dead_exits)])]

    def _deadline_check(self, frame: FrameBlock, loop_cond: Node) -> Statement:
        """Each iteration first checks the run's deadline (RunOptions.timeout_in_ms), so no loop outlives it."""
        self.bound["_monotonic"] = time.monotonic
        check = self.names.helper(f"timeout_{frame.name}")
        self.bound[check] = functools.partial(_deadline_exceeded, loop_cond.op, frame.name)
        return Statement(Line(f"if _deadline is not None and _monotonic() > _deadline: {check}(step)",
                              f"{frame.name}: the run's deadline"), {"_deadline"})

    def _split(self, frame: FrameBlock, switches) -> tuple[list, list]:
        """The frame's nodes computing the condition, and those of the body (downstream of the Switches)."""
        bookkeeping = {id(n) for n in frame.merges + switches if n} | \
            {id(n) for n in frame.nodes if n.type in _BOOKKEEPING}
        in_body: set = {id(s) for s in switches} | {id(e) for child in frame.children.values() for e in child.exits}
        cond_part, body_part = [], []
        for node in frame.nodes:
            if id(node) in bookkeeping:
                continue
            if any(id(s) in in_body for s in _sources(node)):
                in_body.add(id(node))
                body_part.append(node)
            else:
                cond_part.append(node)
        return cond_part, body_part

    # -- nodes ----------------------------------------------------------------------------------

    def node(self, node: Node) -> list[Statement]:
        if node.type == "Switch":
            return self._switch(node)
        if node.type == "Merge":
            return self._merge(node)
        inputs = [self.name(v) for v in node.inputs]
        if node.op is not None and node.inputs and all(v.tensor.shape.ndims == 0 for v in node.inputs):
            inputs = [scalar_constant(self.bound, self.names, name) for name in inputs]
        dead_inputs = [self.name(v) for v in node.inputs if self.dead_possible(v)]
        dead_controls = [e for e in (self._liveness(c) for c in node.control_inputs) if e is not None]
        outputs = [value.name if id(value) in self.read else "_" for value in node.outputs]
        if node.type == "Const":
            kernel, _ = self.bind(node)
            self.bound[node.outputs[0].name] = kernel()
            return self._liveness_statements(node, [], dead_controls)
        if node.type in ("Identity", "StopGradient") and not dead_controls:
            self.aliases[id(node.outputs[0])] = inputs[0]
            if dead_inputs:
                self.may_be_dead.add(id(node.outputs[0]))
            return []
        if node.type == "_Recv" and node.tensor is None:
            # A control edge's Recv: alive when the control input its Send carries ran alive.
            expression = self._liveness(node.peer.control_inputs[0])
            if expression is not None:
                self.live_names[id(node)] = expression
        elif node.type == "_Recv" and self.dead_possible(node.peer.inputs[0]):
            self.may_be_dead.add(id(node.outputs[0]))
        kernel, needs_step = self.bind(node)
        kernel_id = self.names.new(kernel_name(node.type))
        self.bound[kernel_id] = kernel
        call = f"{kernel_id}({', '.join((['step'] if needs_step else []) + inputs)})"
        target = "" if set(outputs) == {"_"} else ", ".join(outputs) + ("," if len(outputs) > 1 else "")
        uses = _identifiers(*inputs, *dead_inputs, *dead_controls)
        guards = [] if node.is_transfer else dead_inputs + dead_controls
        if not guards:
            return [Statement(Line(f"{target} = {call}" if target else call, node.describe(), node), uses,
                              set(outputs) - {"_"})]
        condition = " and ".join([f"{g} is not None" for g in dead_inputs] + dead_controls)
        dead_value = "None" if len(outputs) <= 1 else "(" + ", ".join(["None"] * len(outputs)) + ")"
        code = f"{target} = {call} if {condition} else {dead_value}" if target else f"if {condition}: {call}"
        self.may_be_dead.update(id(v) for v in node.outputs)
        return [Statement(Line(code, node.describe(), node), uses, set(outputs) - {"_"})] + \
            self._liveness_statements(node, dead_inputs, dead_controls)

    def _switch(self, node: Node) -> list[Statement]:
        data, pred = (self.name(v) for v in node.inputs)
        false_name, true_name = (v.name if id(v) in self.read else "_" for v in node.outputs)
        defined = {false_name, true_name} - {"_"}
        statements = [Statement(Line(f"{false_name}, {true_name} = (None, {data}) if {pred} else ({data}, None)",
                                     node.describe(), node), _identifiers(data, pred), defined)]
        if self.dead_possible(node.inputs[0]) and defined:
            statements.append(Statement(Line(f"if {data} is None: {' = '.join(sorted(defined))} = None"),
                                        _identifiers(data), defined))
            self.live_names[id(node)] = f"({data} is not None)"
        self.may_be_dead.update(id(v) for v in node.outputs)
        return statements

    def _merge(self, node: Node) -> list[Statement]:
        value, index = (v.name for v in node.outputs)
        inputs = [self.name(v) for v in node.inputs]
        choices = " else ".join(f"({name}, {k}) if {name} is not None" for k, name in enumerate(inputs))
        if id(node.outputs[1]) not in self.read:
            return self._merged(node, f"{value}, _ = {choices} else (None, None)", inputs, {value})
        self.bound.setdefault("_int32", np.int32)
        statements = self._merged(node, f"{value}, {index} = {choices} else (None, None)", inputs, {value, index})
        return statements + [Statement(Line(f"{index} = _int32({index}) if {index} is not None else None"),
                                       {index}, {index})]

    def _merged(self, node: Node, code: str, inputs: list[str], defines: set) -> list[Statement]:
        statements = [Statement(Line(code, node.describe(), node), _identifiers(*inputs), defines)]
        if all(self.dead_possible(v) for v in node.inputs):
            self.may_be_dead.update(id(v) for v in node.outputs)
        return statements

    def _liveness_statements(self, node: Node, dead_inputs, dead_controls) -> list[Statement]:
        """`live_x = ...` for a node that may run dead and that some node waits for (a Const: always)."""
        if not dead_inputs and not dead_controls or (id(node) not in self.control_sources and node.type != "Const"):
            return []
        name = self.names.new(f"live_{node.name}")
        condition = " and ".join([f"{g} is not None" for g in dead_inputs] + dead_controls)
        self.live_names[id(node)] = name
        if node.type == "Const":
            self.aliases[id(node.outputs[0])] = f"({node.outputs[0].name} if {name} else None)"
            self.may_be_dead.add(id(node.outputs[0]))
        return [Statement(Line(f"{name} = {condition}"), _identifiers(*dead_inputs, *dead_controls), {name})]

    def _liveness(self, node: Node) -> str | None:
        """An expression true when `node` ran alive in this iteration, or None when it always does."""
        if id(node) in self.live_names:
            return self.live_names[id(node)]
        if node.outputs and self.dead_possible(node.outputs[0]) and node.type != "Switch":
            return f"({self.name(node.outputs[0])} is not None)"
        return None

    # -- the function's end ---------------------------------------------------------------------

    def return_statements(self) -> list[Statement]:
        statements, results = [], []
        for position, value in enumerate(self.plan.fetch_values):
            if value is None:
                results.append("None")
                continue
            name = self.name(value)
            if self.dead_possible(value):
                self.bound["_dead_fetch"] = _dead_fetch
                statements.append(Statement(Line(f"if {name} is None: _dead_fetch({position})"), _identifiers(name)))
            results.append(name)
        statements.append(Statement(Line(f"return ({''.join(r + ', ' for r in results)})"), _identifiers(*results)))
        return statements


def _identifiers(*expressions: str) -> set[str]:
    """The names that expressions of generated code read (they hold only names, parentheses and keywords)."""
    return {word for expression in expressions for word in expression.replace("(", " ").replace(")", " ").split()
            if word.isidentifier() and not keyword.iskeyword(word)}


def _with_releases(statements: list[Statement], kept: set[str]) -> list[Line]:
    """The statements as lines, with `del` after each value's last reader in the block that holds it."""
    scopes: dict[str, list] = {}
    _collect_scopes(statements, [], scopes)
    releases: dict[int, list[str]] = {}
    for name, paths in scopes.items():
        if name in kept or name.startswith("_"):
            continue
        block_path = _innermost_common_block(paths)
        position = max(path[len(block_path)] for path in paths)
        releases.setdefault(id(_statement_at(statements, block_path, position)), []).append(name)
    return _render(statements, releases, 0)


def _collect_scopes(statements: list[Statement], prefix: list, scopes: dict) -> None:
    """For each name, the paths (block indices down the tree) of the statements that read or write it."""
    for index, statement in enumerate(statements):
        path = [*prefix, index]
        for name in statement.uses | statement.defines:
            scopes.setdefault(name, []).append(path)
        for number, (_, block) in enumerate(statement.blocks):
            _collect_scopes(block, [*path, number], scopes)


def _innermost_common_block(paths: list[list]) -> list:
    """The path of the innermost block holding every one of `paths`.

    A statement's path alternates statement index and block number ([3, 0, 5]: statement 5 of block 0
    of statement 3), so a block's path has even length.
    """
    length = min(len(path) for path in paths)
    for path in paths[1:]:
        length = next((k for k in range(length) if path[k] != paths[0][k]), length)
    return paths[0][:length - length % 2]


def _statement_at(statements: list[Statement], block_path: list, position: int) -> Statement:
    block = statements
    for k in range(0, len(block_path), 2):
        block = block[block_path[k]].blocks[block_path[k + 1]][1]
    return block[position]


def _render(statements: list[Statement], releases: dict, depth: int) -> list[Line]:
    lines = []
    indent = "    " * depth
    for statement in statements:
        lines.append(Line(indent + statement.line.code, statement.line.comment, statement.line.node))
        for header, block in statement.blocks:
            if header is not None:
                lines.append(Line(indent + header.code, header.comment, header.node))
            lines += _render(block, releases, depth + 1)
        names = releases.get(id(statement))
        if names:
            lines.append(Line(f"{indent}del {', '.join(sorted(names))}"))
    return lines


def _deadline_exceeded(op, frame: str, step) -> None:
    raise DeadlineExceededError(None, op, f"Timed out after {step.timeout_in_ms} ms: the run's deadline passed in "
                                f"loop '{frame}'")


def _dead_fetch(position: int):
    raise InvalidArgumentError(None, None, f"Fetch {position} was not computed: it is on a branch that was not taken")
