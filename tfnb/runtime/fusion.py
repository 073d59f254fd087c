"""Kernel fusion: plan lines that one kernel computes together, so intermediate data stays in the caches.

As TF's Grappler remapper fuses Conv2D + BiasAdd + Relu, a plan's lines are fused where a kernel's
registration offers a combined variant (kernels/registry.py), an attribute of its callable:

- an Epilogue: ops that read the kernel's output one after the other (Conv2D -> BiasAdd -> Relu;
  MaxPoolGrad -> ReluGrad; a weight gradient's MatMul -> its ResourceApplyGradientDescent) and that the
  variant applies to each part of the output as it is written;
- a Sibling: an op reading the same input with the same attrs (the two gradients of a convolution,
  which share dy), computed together with the kernel, the shared input transformed once;
- a Workspace: a later op that the kernel saves work for (MaxPool keeps where its maxima are, for
  MaxPoolGrad, as oneDNN's pools do): the kernel's line also returns that value, and the later op's line
  reads it in place of the kernel's output. Both stay lines of their own.

On a device whose array namespace compiles functions into one kernel (`xp.fuse`: CuPy's), a group of
elementwise lines (kernels registered `elementwise`) that read one another's values becomes one line,
one kernel launch that reads each input once and keeps the intermediates in registers, as TF's XLA
fuses elementwise ops on GPUs: the backward pass of `tanh(x * w + b)` is a handful of ufuncs, each
otherwise a pass over memory.

Only values that no other line reads and nothing fetches disappear. The graph is unchanged, and
traced runs are not fused: a trace records every op. When a fused line fails, its ops run again
one by one, so that the error names the op that fails.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tfnb.runtime.codegen import Step
from tfnb.runtime.naming import Names

_LAYOUT_ATTR = "data_format"


def fuse(steps: list[Step], fetched: set[str], names: Names,
         compilers: dict[str, Callable] | None = None) -> list[Step]:
    """The plan's lines with fusable runs replaced by one line each (see the module docstring).

    `names` gives workspace values theirs; `compilers`: for each device whose namespace has one, its `fuse` (a
    function to one device kernel).
    """
    steps = _fuse_siblings(_fuse_epilogues(_keep_workspaces(steps, names), fetched))
    return _fuse_elementwise(steps, fetched, compilers) if compilers else steps


def _kernel_def(step: Step):
    """The kernel registration of an unfused line that runs an op (None for transfers and fused lines)."""
    return None if step.fused or step.kernel is None else step.kernel_def


def _rebuilt(steps: list[Step], fused: dict[int, Step], drop: set[int]) -> list[Step]:
    """steps with the fused lines in place and the lines they absorbed left out."""
    return [fused.get(i, step) for i, step in enumerate(steps) if i in fused or i not in drop]


# -- workspaces -----------------------------------------------------------------------------------


def _keep_workspaces(steps: list[Step], names: Names) -> list[Step]:
    readers = collections.defaultdict(list)
    for index, step in enumerate(steps):
        for arg in dict.fromkeys(step.args):
            readers[arg].append(index)
    changed: dict[int, Step] = {}
    for index, step in enumerate(steps):
        kernel_def = _kernel_def(step)
        if kernel_def is None or index in changed:
            continue
        for workspace in kernel_def.workspaces:
            variant = getattr(step.kernel, workspace.variant, None)
            partners = [p for p in readers[step.outputs[0]]
                        if p not in changed and _reads_workspace(step, steps[p], workspace)]
            if variant is None or not partners:
                continue
            value = names.new(f"{step.outputs[0]}_workspace")
            changed[index] = replace(step, kernel=variant, outputs=step.outputs + [value])
            for position in partners:
                partner = steps[position]
                args = list(partner.args)
                args[workspace.replaces] = value
                changed[position] = replace(partner, kernel=getattr(partner.kernel, workspace.reader), args=args)
            break
    return [changed.get(index, step) for index, step in enumerate(steps)]


def _reads_workspace(step: Step, other: Step, workspace) -> bool:
    """Whether `other` is the workspace's op on `step`'s input 0 and output 0, with the same attrs and device."""
    return (_kernel_def(other) is not None and other.op.type == workspace.op and other.device == step.device
            and len(other.args) > workspace.replaces and other.args[0] == step.args[0]
            and other.args[workspace.replaces] == step.outputs[0] and other.op.attrs == step.op.attrs
            and hasattr(other.kernel, workspace.reader))


# -- epilogues ------------------------------------------------------------------------------------


def _fuse_epilogues(steps: list[Step], fetched: set[str]) -> list[Step]:
    uses = collections.Counter(arg for step in steps for arg in step.args)
    readers = {arg: index for index, step in enumerate(steps) for arg in step.args}
    drop: set[int] = set()
    fused: dict[int, Step] = {}
    for index, step in enumerate(steps):
        kernel_def = _kernel_def(step)
        if kernel_def is None or index in drop:
            continue
        for epilogue in sorted(kernel_def.epilogues, key=lambda e: -len(e.ops)):
            chain = _chain(steps, index, epilogue, uses, readers, fetched, drop)
            variant = getattr(step.kernel, epilogue.variant, None)
            if chain is None or variant is None:
                continue
            positions, args, sources = chain
            drop.update(positions[:-1])
            links = [steps[p] for p in positions]
            replay = _chain_replay(links, sources, epilogue.input)
            fused[positions[-1]] = replace(step, kernel=_replaying(variant, replay), args=args,
                                           outputs=links[-1].outputs, fused=tuple(s.node for s in links))
            break
    return _rebuilt(steps, fused, drop)


def _chain(steps, index: int, epilogue, uses, readers, fetched, taken) -> tuple | None:
    """(line positions of the kernel and its epilogue ops, the fused line's arguments, for each epilogue op the
    positions of its other inputs among those arguments), or None when the lines do not match the epilogue."""
    first = steps[index]
    reused = dict(epilogue.reused)
    positions, args, sources = [index], list(first.args), []
    value = first.outputs[0]
    for depth, op_type in enumerate(epilogue.ops):
        if uses[value] != 1 or value in fetched:
            return None
        position = readers[value]
        link = steps[position]
        reading = epilogue.input if depth == 0 else 0
        if (position in taken or link.op is None or link.op.type != op_type or link.fused
                or link.device != first.device or len(link.args) <= reading or link.args[reading] != value
                or link.op.attrs.get(_LAYOUT_ATTR, "NHWC") != first.op.attrs.get(_LAYOUT_ATTR, "NHWC")):
            return None
        link_sources = []
        for k, arg in enumerate(link.args):
            if k == reading:
                continue
            if (depth, k) in reused:
                if arg != first.args[reused[(depth, k)]]:
                    return None
                link_sources.append(reused[(depth, k)])
            else:
                args.append(arg)
                link_sources.append(len(args) - 1)
        positions.append(position)
        sources.append(link_sources)
        value = link.outputs[0] if link.outputs else None   # an update ends the chain: it has no output
    return positions, args, sources


def _chain_replay(links: list[Step], sources: list[list[int]], first_input: int):
    """The chain's ops one after the other, from the fused line's arguments (each op's error names it)."""
    first_args = len(links[0].args)

    def replay(*args):
        value = _tagged(links[0], *args[:first_args])
        for depth, (link, link_sources) in enumerate(zip(links[1:], sources)):
            inputs = [args[k] for k in link_sources]
            inputs.insert(first_input if depth == 0 else 0, value)
            value = _tagged(link, *inputs)

    return replay


# -- siblings -------------------------------------------------------------------------------------


def _fuse_siblings(steps: list[Step]) -> list[Step]:
    first_reader: dict[str, int] = {}
    for index, step in enumerate(steps):
        for arg in step.args:
            first_reader.setdefault(arg, index)
    drop: set[int] = set()
    fused: dict[int, Step] = {}
    for index, step in enumerate(steps):
        kernel_def = _kernel_def(step)
        if kernel_def is None or index in drop or index in fused:
            continue
        for sibling in kernel_def.siblings:
            partner_index = _partner(steps, index, sibling, drop, fused)
            variant = getattr(step.kernel, sibling.variant, None)
            if partner_index is None or variant is None:
                continue
            # Both run at the later line: no line between them may read what the earlier one computes.
            early, late = sorted((index, partner_index))
            if any(first_reader.get(value, len(steps)) < late for value in steps[early].outputs):
                continue
            partner = steps[partner_index]
            others = [arg for k, arg in enumerate(partner.args) if k != sibling.shared[1]]
            drop.add(early)
            fused[late] = replace(step, kernel=_replaying(variant, _sibling_replay(step, partner, sibling.shared)),
                                  args=step.args + others, outputs=step.outputs + partner.outputs,
                                  fused=(step.node, partner.node))
            break
    return _rebuilt(steps, fused, drop)


def _partner(steps: list[Step], index: int, sibling, drop: set, fused: dict) -> int | None:
    """The unfused line of the sibling op that reads the same shared input with the same attrs, if any."""
    step = steps[index]
    shared = step.args[sibling.shared[0]]
    for position, other in enumerate(steps):
        if (position != index and position not in drop and position not in fused and other.op is not None
                and other.op.type == sibling.op and not other.fused and other.device == step.device
                and other.args[sibling.shared[1]] == shared and other.op.attrs == step.op.attrs):
            return position
    return None


def _sibling_replay(step: Step, partner: Step, shared: tuple[int, int]):
    """The kernel's op, then its sibling's, from the fused line's arguments (each op's error names it)."""
    own = len(step.args)

    def replay(*args):
        _tagged(step, *args[:own])
        others = list(args[own:])
        others.insert(shared[1], args[shared[0]])
        _tagged(partner, *others)

    return replay


# -- elementwise groups on devices that compile them ----------------------------------------------


@dataclass(eq=False)
class _Group:
    """Elementwise lines of one device that will run as one kernel, at the position of the last of them."""

    device: str
    positions: list[int] = field(default_factory=list)
    values: set[str] = field(default_factory=set)
    open: bool = True  # no other line has read its values yet: a later line may still join


def _fuse_elementwise(steps: list[Step], fetched: set[str], compilers: dict[str, Callable]) -> list[Step]:
    producer: dict[str, _Group] = {}
    groups: list[_Group] = []
    for index, step in enumerate(steps):
        joined = None
        if _elementwise(step, compilers):
            candidates = list(dict.fromkeys(producer[arg] for arg in step.args if arg in producer
                                            and producer[arg].open and producer[arg].device == step.device))
            joined = candidates[0] if candidates else _Group(step.device)
            if not candidates:
                groups.append(joined)
            for other in candidates[1:]:   # every open group it reads runs with it, at its position
                joined.positions += other.positions
                joined.values |= other.values
                producer.update(dict.fromkeys(other.values, joined))
                groups.remove(other)
            joined.positions.append(index)
            joined.values.update(step.outputs)
            producer.update(dict.fromkeys(step.outputs, joined))
        for arg in step.args:  # a group whose value another line reads runs before that line: it is complete
            if arg in producer and producer[arg] is not joined:
                producer[arg].open = False
    readers = collections.defaultdict(set)
    for index, step in enumerate(steps):
        for arg in step.args:
            readers[arg].add(index)
    drop: set[int] = set()
    fused: dict[int, Step] = {}
    for group in groups:
        if len(group.positions) < 2:
            continue
        positions = sorted(group.positions)
        members = [steps[p] for p in positions]
        inside = set(positions)
        outputs = [v for m in members for v in m.outputs if v in fetched or readers[v] - inside]
        if not outputs:   # ops run as targets only (tf.group(tf.tanh(x * 2))): their lines stay as they are
            continue
        inputs = list(dict.fromkeys(a for m in members for a in m.args if a not in group.values))
        compiled = compilers[group.device](_composed(members, inputs, outputs, _called))
        drop.update(positions[:-1])
        replay = _composed(members, inputs, outputs, _tagged)
        fused[positions[-1]] = replace(members[0], kernel=_replaying(compiled, replay),
                                       args=inputs, outputs=outputs, fused=tuple(m.node for m in members))
    return _rebuilt(steps, fused, drop)


def _elementwise(step: Step, compilers: dict[str, Callable]) -> bool:
    """Whether a line may join an elementwise group: an unfused elementwise kernel of at least one dimension
    on a device that compiles groups."""
    kernel_def = _kernel_def(step)
    if kernel_def is None or step.needs_step or step.device not in compilers or len(step.outputs) != 1:
        return False
    ndims = step.op.outputs[0].shape.ndims
    return bool(ndims) and kernel_def.computes_elementwise(tuple(t.dtype.np_dtype for t in step.op.inputs))


def _composed(members: list[Step], inputs: list[str], outputs: list[str], call: Callable) -> Callable:
    """One function computing the members' values from the group's inputs, each by `call(member, *args)`: what the
    device compiles (calling the kernels), and its replay (each op's error naming it, _tagged)."""

    def group(*values):
        env = dict(zip(inputs, values))
        for member in members:
            env[member.outputs[0]] = call(member, *[env[a] for a in member.args])
        return tuple(env[o] for o in outputs) if len(outputs) > 1 else env[outputs[0]]

    return group


def _called(step: Step, *args):
    return step.kernel(*args)


# -- running and replaying ------------------------------------------------------------------------


def _replaying(fused_kernel, replay):
    """fused_kernel; when it fails, `replay` runs the fused ops one by one to raise the error of the op that fails."""

    def run(*args):
        try:
            return fused_kernel(*args)
        except Exception:
            replay(*args)
            raise

    return run


def _tagged(step: Step, *args):
    """step's kernel on args; an error it raises names step's op."""
    try:
        return step.kernel(*args)
    except Exception as error:
        error.tfnb_op = step.op
        raise
