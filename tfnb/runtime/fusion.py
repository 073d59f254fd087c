"""Kernel fusion: plan lines that one kernel computes together, so intermediate data stays in the caches.

As TF's Grappler remapper fuses Conv2D + BiasAdd + Relu, a plan's lines are fused where a kernel's
registration offers a combined variant (kernels/registry.py), an attribute of its callable:

- an Epilogue: ops that read the kernel's output one after the other (Conv2D -> BiasAdd -> Relu;
  MatMul -> Add or BiasAdd -> Relu; MaxPoolGrad -> ReluGrad; a weight gradient's MatMul -> its
  ResourceApplyGradientDescent, its ResourceApplyAdam, or its ResourceApplyMomentum without Nesterov's step:
  AlexNet's step at batch 4 with MomentumOptimizer 0.92x, with AdamOptimizer 0.96x, OxfordNet's with
  MomentumOptimizer 0.92x, Overfeat's 1.01x, alternating in one process) and that the variant applies to each
  part of the output as it is written;
- a Sibling: an op reading the same input with the same attrs (the two gradients of a convolution,
  which share dy), computed together with the kernel, the shared input transformed once;
- a Workspace: a later op that the kernel saves work for (MaxPool keeps where its maxima are, for
  MaxPoolGrad, as oneDNN's pools do): the kernel's line also returns that value, and the later op's line
  reads it in place of the kernel's output. Both stay lines of their own.
- Peers: lines of one op, fused alike, that read the same input with the same attrs (an inception
  module's 1x1 convolutions, or their gradient pairs with the AddN summing their input gradients), as
  TensorRT's horizontal fusion merges them: one line at the last of them, while nothing has read the
  earlier ones' outputs yet. Where its arrays do not line up at run time, each line runs by itself.
  Measured on GoogLeNet at batch 2: 0.70-0.84x the time of the three 1x1 convolutions forward, 0.75-0.87x
  backward with the sum, and 0.977x the training step (alternating steps in one process). 1x1 peers then ran
  as products of the input's pixels, filter by filter per chunk (kernels/conv/pointwise.py), with no
  concatenated filters or dy and no outputs copied apart: the peers' backward lines 0.89x, the step 0.988x.
- an Update: a later line updating the variable whose value the kernel reads (a dense layer's weights, whose
  gradient's product and descent, momentum or Adam update are one line, above), moved up to the kernel's line
  and computed there with it, each block of the weights read once (the input gradient dy @ w.T before the
  block's update): on a small batch both are passes over the weights from memory. Only where the update is the
  next line to use the variable after that read, the kernel's line is the last to read the value, and all the
  update waits for is computed before that line. Measured at batch 2, two threads: AlexNet's first dense layer
  0.79x the time of the two lines; training steps alternating in one process: AlexNet 0.953x, Overfeat 0.962x,
  OxfordNet 0.970x. With momentum and Adam, at batch 4: AlexNet 0.974x and 0.961x, Overfeat (momentum) 0.985x,
  OxfordNet (Adam) 0.985x.

- Together: lines of gradient pairs (Siblings whose registration names `tasks`) that do not read one another's
  values, as an inception module's 3x3, 5x5 and pool projection convolutions' gradients, and the lines of one
  thread's work after the first of them until a line that splits its work needs their values (the pool's gradient
  reading the projection's input gradient, ReLU gradients reading the reductions'): one line at the last of them,
  all their directions and lines queued side by side, each in one thread (intra_op.side_by_side), a line once what
  it reads has ended. Each pair alone left one core idle while its longer direction ended. GoogLeNet at batch 4:
  4.8 ms of idle core time a step in those lines instead of about 21, the training step 0.954-0.986x (alternating
  steps in one process; the ReLU and bias gradients joining beside the pool's: 1.000x and 1.005x).

- Beside: a pool's line (a kernel registered `streams`: passes over memory, which a second core speeds up
  little) and a convolution's line that does not wait for it (the pool and the 1x1 convolutions of an
  inception module's input), run at once as TF's inter-op threads run independent ops: a helper thread
  pools, then joins the convolution's parts (intra_op.run_beside). The pool's line moves down to the next
  convolution's, or up to the one before where all it waits for is computed before it. Measured on GoogLeNet
  at batch 2: 0.969-0.983x the training step (alternating steps in one process), 0.947x across processes.
  While the pool streams memory on one core, the convolution's parts on the other slow down too, so the step
  gains less than the pools' second core idled. Beside gradients run side by side (one thread each), the pool is
  taken by the thread whose gradient ends first (intra_op.side_by_side), not by the one the split hands the
  second gradient: GoogLeNet at batch 4, 0.982-0.995x the training step (alternating steps in one process).

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
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tfnb.kernels.intra_op import run_beside, side_by_side
from tfnb.kernels.registry import Peers
from tfnb.runtime.codegen import Step
from tfnb.runtime.naming import Names

_LAYOUT_ATTR = "data_format"


def fuse(steps: list[Step], fetched: set[str], names: Names,
         compilers: dict[str, Callable] | None = None) -> list[Step]:
    """The plan's lines with fusable runs replaced by one line each (see the module docstring).

    `names` gives workspace values theirs; `compilers`: for each device whose namespace has one, its `fuse` (a
    function to one device kernel).
    """
    steps = _fuse_epilogues(_keep_workspaces(steps, names), fetched)
    steps = _fuse_beside(_fuse_together(_fuse_peers(_fuse_siblings(_fuse_updates(steps, fetched)), fetched)))
    return _fuse_elementwise(steps, fetched, compilers) if compilers else steps


def _kernel_def(step: Step):
    """The kernel registration of an unfused line that runs an op (None for transfers and fused lines)."""
    return None if step.fused or step.kernel is None else step.kernel_def


def _nodes(step: Step) -> tuple:
    """The nodes a line computes: its fused nodes, or its node."""
    return step.fused or (step.node,)


def _producers(steps: list[Step]) -> dict[str, int]:
    """Per value, the position of the line computing it."""
    return {value: i for i, step in enumerate(steps) for value in step.outputs}


def _lines_of(steps: list[Step]) -> dict:
    """Per op, the position of the line computing it."""
    return {node.op: i for i, step in enumerate(steps) for node in _nodes(step) if node.op}


def _waits(steps: list[Step], step: Step, producers: dict, lines_of: dict) -> list[int]:
    """The positions of the lines computing what `step` waits for: its inputs (-1 for a feed or constant) and its
    nodes' control inputs (past the end for one no line computes)."""
    return [producers.get(arg, -1) for arg in step.args] + [lines_of.get(c, len(steps)) for c in _controls(step)]


def _controls(step: Step) -> set:
    """The ops that a line's nodes have control inputs on."""
    return {control for node in _nodes(step) if node.op for control in node.op.control_inputs}


def _rebuilt(steps: list[Step], fused: dict[int, Step], drop: set[int]) -> list[Step]:
    """steps with the fused lines in place and the lines they absorbed left out."""
    return [fused.get(i, step) for i, step in enumerate(steps) if i in fused or i not in drop]


def _readers(steps: list[Step]) -> dict[str, list[int]]:
    """Per value, the positions of the lines that read it, in order, each once."""
    readers = collections.defaultdict(list)
    for index, step in enumerate(steps):
        for arg in dict.fromkeys(step.args):
            readers[arg].append(index)
    return readers


# -- workspaces -----------------------------------------------------------------------------------


def _keep_workspaces(steps: list[Step], names: Names) -> list[Step]:
    readers = _readers(steps)
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
                changed[position] = replace(partner, kernel=getattr(partner.kernel, workspace.reader),
                                            args=[*partner.args, value])
            break
    return [changed.get(index, step) for index, step in enumerate(steps)]


def _reads_workspace(step: Step, other: Step, workspace) -> bool:
    """Whether `other` is the workspace's op on `step`'s input 0 and output 0, with the same attrs and device."""
    return (_kernel_def(other) is not None and other.op.type == workspace.op and other.device == step.device
            and len(other.args) > workspace.reads and other.args[0] == step.args[0]
            and other.args[workspace.reads] == step.outputs[0] and other.op.attrs == step.op.attrs
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
                                           outputs=links[-1].outputs, fused=tuple(s.node for s in links),
                                           unfused=step.kernel)
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
                or link.op.attrs.get(_LAYOUT_ATTR, "NHWC") != first.op.attrs.get(_LAYOUT_ATTR, "NHWC")
                or (depth == 0 and any(link.op.attrs.get(name) != wanted for name, wanted in epilogue.attrs))):
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


# -- updates -------------------------------------------------------------------------------------


def _fuse_updates(steps: list[Step], fetched: set[str]) -> list[Step]:
    readers, producers, lines_of = _readers(steps), _producers(steps), _lines_of(steps)
    drop: set[int] = set()
    fused: dict[int, Step] = {}
    for index, step in enumerate(steps):
        if step.kernel_def is None or step.op is None or index in drop:
            continue
        for update in step.kernel_def.updates:
            found = _update_of(steps, index, update, readers, producers, lines_of, fetched, drop)
            if found is None:
                continue
            position, read, function = found
            later = steps[position]
            own = [arg for k, arg in enumerate(step.args) if k != update.weight]
            drop.add(position)
            fused[index] = replace(step, kernel=_update_kernel(function, step, read, later, update),
                                   args=own + later.args, fused=_nodes(step) + later.fused,
                                   unfused=None)
            break
    return _rebuilt(steps, fused, drop)


def _update_of(steps: list[Step], index: int, update, readers, producers, lines_of, fetched, taken) -> tuple | None:
    """(position of the later line updating the variable that `steps[index]` reads a value of, the line reading
    that value, the fused function), or None: the update must be the next line to use the variable after that
    read, the line the last reader of the value, and all the update waits for computed before the line."""
    step = steps[index]
    value = step.args[update.weight]
    read = steps[producers[value]] if value in producers else None
    if (read is None or read.op is None or read.op.type != "ReadVariableOp" or read.fused or value in fetched
            or readers[value][-1] != index or read.device != step.device):
        return None
    variable = read.args[0]
    # The next line to use the variable after the read: the update, if any.
    position = next((p for p in readers[variable] if p > producers[value]), None)
    if variable in fetched or position is None:
        return None
    later = steps[position]
    if (position <= index or position in taken or later.device != step.device
            or tuple(node.type for node in later.fused) != update.ops or later.args.count(variable) != 1
            or later.args[update.shared[1]] != step.args[update.shared[0]]):
        return None
    if any(wait >= index for wait in _waits(steps, later, producers, lines_of)):
        return None
    variant = getattr(step.unfused or step.kernel, update.variant, None)
    function = variant(tuple(node.type for node in _nodes(step)), later.fused[0].op.attrs) \
        if variant is not None else None
    return None if function is None else (position, read, function)


def _update_kernel(function, step: Step, read: Step, later: Step, update):
    """The fused line's kernel: `function`, or the line's op (reading the variable's value again) and then the
    update, one by one (_or_one_by_one)."""
    own = len(step.args) - 1

    def separately(*args):
        weight = _tagged(read, args[own + later.args.index(read.args[0])])
        step_args = list(args[:own])
        step_args.insert(update.weight, weight)
        result = step.kernel(*step_args) if step.fused else _tagged(step, *step_args)
        later.kernel(*args[own:])
        return result

    return _or_one_by_one(function, separately)


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
                                  fused=(step.node, partner.node), unfused=step.kernel)
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


# -- peers ---------------------------------------------------------------------------------------


@dataclass(eq=False)
class _PeerKind:
    """Lines that may run as one (kernels/registry.py Peers): what they share, and their positions."""

    peers: Peers
    shared: str
    attrs: dict
    key: tuple  # op type, device, fused op types, the static shape of input `alike` but its last axis
    positions: list[int] = field(default_factory=list)


def _fuse_peers(steps: list[Step], fetched: set[str]) -> list[Step]:
    readers = _readers(steps)
    kinds: list[_PeerKind] = []
    for index, step in enumerate(steps):
        registration = step.kernel_def.peers if step.kernel_def is not None and step.op is not None else None
        key = _peer_key(step, registration) if registration is not None else None
        if key is None:
            continue
        shared = step.args[registration.shared]
        kind = next((k for k in kinds if k.key == key and k.shared == shared and k.attrs == step.op.attrs), None)
        if kind is None:
            kind = _PeerKind(registration, shared, step.op.attrs, key)
            kinds.append(kind)
        kind.positions.append(index)
    drop: set[int] = set()
    fused: dict[int, Step] = {}
    for kind in kinds:
        if kind.peers.summed is None:
            groups = [(group, None) for group in _runs_until_read(steps, kind.positions, readers)]
        else:
            groups = _summed_groups(steps, kind, readers, fetched, set(fused))
        for group, summing in groups:
            if len(group) < 2:
                continue
            at = group[-1] if summing is None else summing
            fused[at] = _merged([steps[p] for p in group], kind.peers, None if summing is None else steps[summing])
            drop.update(p for p in group if p != at)
    return _rebuilt(steps, fused, drop)


def _peer_key(step: Step, peers: Peers) -> tuple | None:
    """What a line's peers must have in common besides their shared input and attrs (None: the line has no
    peers: its kernel offers no variant for the ops it fuses, or the alike input's shape is not known)."""
    variant = getattr(step.unfused or step.kernel, peers.variant, None)
    fused_ops = tuple(node.type for node in _nodes(step))
    if variant is None or variant(fused_ops) is None or len(step.op.inputs) <= peers.alike:
        return None
    dims = step.op.inputs[peers.alike].shape.as_list() if step.op.inputs[peers.alike].shape.ndims else None
    if not dims or None in dims[:-1]:
        return None
    return step.op.type, step.device, fused_ops, tuple(dims[:-1])


def _runs_until_read(steps: list[Step], positions: list[int], readers: dict) -> list[list[int]]:
    """Runs of consecutive peers that may all compute at the last one's line: none of their outputs is read
    before it."""
    runs: list[list[int]] = []
    bound = -1  # the first line reading an output of the current run
    for position in positions:
        if runs and position < bound:
            runs[-1].append(position)
        else:
            runs.append([position])
            bound = len(steps)
        bound = min([bound] + [r for output in steps[position].outputs for r in readers[output]])
    return runs


def _summed_groups(steps: list[Step], kind: _PeerKind, readers: dict, fetched: set[str],
                   taken: set[int]) -> list[tuple[list[int], int]]:
    """(peers, the line summing their outputs 0) for each summing line: peers whose output 0 only it reads, once,
    and whose other outputs nothing reads before it."""
    by_sum = collections.defaultdict(list)
    for position in kind.positions:
        outputs = steps[position].outputs
        sums = readers[outputs[0]]
        if outputs[0] in fetched or len(sums) != 1:
            continue
        summing = steps[sums[0]]
        if (summing.op is None or summing.fused or summing.op.type != kind.peers.summed or sums[0] in taken
                or summing.device != steps[position].device or summing.args.count(outputs[0]) != 1
                or any(r <= sums[0] for output in outputs[1:] for r in readers[output])):
            continue
        by_sum[sums[0]].append(position)
    return [(group, summing) for summing, group in by_sum.items()]


def _merged(members: list[Step], peers: Peers, summing: Step | None) -> Step:
    """The line computing `members` as one (and the `summing` line's sum of their outputs 0)."""
    own_args = [[arg for k, arg in enumerate(member.args) if k != peers.shared] for member in members]
    args = [members[0].args[peers.shared]] + [arg for own in own_args for arg in own]
    nodes = tuple(node for member in members for node in _nodes(member))
    base = members[0].unfused or members[0].kernel
    merged = getattr(base, peers.variant)(tuple(node.type for node in _nodes(members[0])))
    if summing is None:
        outputs = [output for member in members for output in member.outputs]
    else:
        sums = {member.outputs[0] for member in members}
        args += [arg for arg in summing.args if arg not in sums]
        outputs = summing.outputs + [output for member in members for output in member.outputs[1:]]
        nodes += (summing.node,)
    kernel = _peer_kernel(merged, members, peers.shared, [len(own) for own in own_args], summing)
    return replace(members[0], kernel=kernel, args=args, outputs=outputs, fused=nodes, unfused=None)


def _peer_kernel(merged, members: list[Step], shared: int, counts: list[int], summing: Step | None):
    """The merged line's kernel: `merged`, or each member's own line and the sum's (_or_one_by_one)."""

    def separately(value, own_args: list, addends: list) -> tuple:
        results = []
        for member, own in zip(members, own_args):
            args = list(own)
            args.insert(shared, value)
            result = member.kernel(*args)
            results.append(result if len(member.outputs) > 1 else (result,))
        if summing is None:
            return tuple(v for result in results for v in result)
        firsts, others = {m.outputs[0]: r[0] for m, r in zip(members, results)}, iter(addends)
        total = _tagged(summing, *[firsts[arg] if arg in firsts else next(others) for arg in summing.args])
        return (total, *[v for result in results for v in result[1:]])

    def split(value, *rest) -> tuple:
        """(the shared value, each member's own arguments, the sum's addends) from the merged line's arguments."""
        own_args, start = [], 0
        for count in counts:
            own_args.append(rest[start:start + count])
            start += count
        return value, own_args, list(rest[start:])

    def at_once(*args):
        value, own_args, addends = split(*args)
        return merged(value, own_args) if summing is None else merged(value, own_args, addends)

    return _or_one_by_one(at_once, lambda *args: separately(*split(*args)))


# -- together -------------------------------------------------------------------------------------


def _fuse_together(steps: list[Step]) -> list[Step]:
    producers, lines_of = _producers(steps), _lines_of(steps)
    groups: list[list[int]] = []
    group: list[int] = []  # positions of pair lines, and of lines of one thread's work since the first pair
    for index, step in enumerate(steps):
        waited = set(_waits(steps, step, producers, lines_of)) & set(group)
        if _pair_tasks(step) is not None:
            if waited or (group and steps[group[0]].device != step.device):
                groups.append(group)
                group = []
            group.append(index)
        elif group and _joins(step, steps[group[0]]) and not _control_waits(step, lines_of) & set(group):
            group.append(index)
        elif waited:  # this line needs the group's values: the group runs before it
            groups.append(group)
            group = []
    groups = [group for group in groups + [group] if sum(_pair_tasks(steps[p]) is not None for p in group) > 1]
    fused = {group[-1]: _together_line([steps[p] for p in group]) for group in groups}
    return _rebuilt(steps, fused, {p for group in groups for p in group[:-1]})


def _control_waits(step: Step, lines_of: dict) -> set[int]:
    """The positions of the lines that a line's nodes have control inputs on (tasks of a group wait for data only)."""
    return {lines_of[control] for control in _controls(step) if control in lines_of}


def _joins(step: Step, pair: Step) -> bool:
    """Whether a line may run as one task of a group of pairs: a stateless kernel on the pair's device that does not
    split its work across the threads (a pool's gradient, a ReLU's, a bias's)."""
    return (step.op is not None and not step.needs_step and step.kernel_def is not None and step.device == pair.device
            and (not step.kernel_def.parallel or step.kernel_def.streams)
            and not any(node.op.op_def.stateful for node in _nodes(step)))


def _pair_tasks(step: Step) -> Callable | None:
    """The tasks variant (Sibling.tasks) of a line computing a kernel and its sibling, or None."""
    if step.kernel_def is None or step.unfused is None or len(step.fused) != 2 or step.needs_step:
        return None
    for sibling in step.kernel_def.siblings:
        if sibling.tasks and step.fused[0].type == step.kernel_def.op_type and step.fused[1].type == sibling.op:
            return getattr(step.unfused, sibling.tasks, None)
    return None


def _together_line(members: list[Step]) -> Step:
    """The line computing independent sibling pairs, and lines of one thread's work that may read their values (a
    pool's gradient reading a pool projection's input gradient), as one at the last member's position: every pair's
    tasks (Sibling.tasks) and every other line as one task, side by side (intra_op.side_by_side), a line's task
    once the tasks making what it reads have ended.

    Each pair side by side leaves one core idle from the end of its shorter task to the end of its longer one (an
    inception module's 3x3 and 5x5 gradient pairs: their input gradients take 1.2-1.3x their filter gradients);
    together, the thread that ends first takes the next task instead. Tasks go longest path first: a task's
    time (measured at the line's last run; multiply-adds at its first, other lines 0) plus the longest path
    of the tasks waiting for it.
    """
    produced = {output: m for m, member in enumerate(members) for output in member.outputs}
    external = list(dict.fromkeys(arg for member in members for arg in member.args if arg not in produced))
    variants = [_pair_tasks(member) for member in members]
    seconds: dict[int, float] = {}  # per task, its time at the line's last run

    def run(*values):
        env = dict(zip(external, values))
        tasks, waits, results = [], [], {}
        makers: dict[str, tuple] = {}  # per output of a member, the task giving it and its place in the task's value
        for member, variant in zip(members, variants):
            if variant is None:  # may read outputs of members before it
                member_tasks = [(0, _line_task(member, env, makers, results))]
                waits.append(sorted({makers[arg][0] for arg in member.args if arg in makers}))
            else:
                member_tasks = variant(*[env[arg] for arg in member.args])
                waits.extend([] for _ in member_tasks)
            several, apart = len(member.outputs) > 1, len(member_tasks) == len(member.outputs)
            for k, output in enumerate(member.outputs):
                makers[output] = (len(tasks) + k, None) if apart else (len(tasks), k if several else None)
            tasks.extend(member_tasks)
        if len(seconds) != len(tasks):
            seconds.clear()
        order = _longest_paths_first([seconds[t] for t in range(len(tasks))] if seconds else
                                     [work for work, _ in tasks], waits)

        def finishing(t: int) -> Callable:
            """Task t, its value kept for the tasks waiting for it and its time for the next run's order."""
            def run_task():
                start = time.perf_counter()
                results[t] = value = tasks[t][1]()
                seconds[t] = time.perf_counter() - start
                return value

            return run_task

        position = {t: i for i, t in enumerate(order)}
        side_by_side([finishing(t) for t in order], sum(work for work, _ in tasks),
                     [[position[w] for w in waits[t]] for t in order])
        return tuple(_made(results, makers[output]) for member in members for output in member.outputs)

    def replay(*values):
        env = dict(zip(external, values))
        for member in members:
            value = member.kernel(*[env[arg] for arg in member.args])
            env.update(zip(member.outputs, value if len(member.outputs) > 1 else (value,)))

    return replace(members[-1], kernel=_replaying(run, replay), args=external,
                   outputs=[output for member in members for output in member.outputs],
                   fused=tuple(node for member in members for node in _nodes(member)), unfused=None)


def _made(results: dict, maker: tuple):
    """An output of a group's member from its tasks' results: (task, place in the task's tuple or None)."""
    task, place = maker
    return results[task] if place is None else results[task][place]


def _line_task(member: Step, env: dict, makers: dict, results: dict):
    """The task of a member that is not a pair: its line's kernel on its arguments, those the group makes read from
    the results of the tasks it waits for."""
    def task():
        return _tagged(member, *[_made(results, makers[arg]) if arg in makers else env[arg] for arg in member.args])

    return task


def _longest_paths_first(costs: list[float], waits: list[list[int]]) -> list[int]:
    """Task positions by decreasing cost of the longest path from each through the tasks waiting for it (ties in
    their order)."""
    longest = list(costs)
    for t in reversed(range(len(costs))):  # a task waits only for tasks before it
        for waited in waits[t]:
            longest[waited] = max(longest[waited], costs[waited] + longest[t])
    return sorted(range(len(costs)), key=lambda t: -longest[t])


# -- beside -----------------------------------------------------------------------------------------

def _fuse_beside(steps: list[Step]) -> list[Step]:
    producers, lines_of = _producers(steps), _lines_of(steps)
    readers, waiting = _readers(steps), collections.defaultdict(list)  # per line, the lines with a control input on it
    for index, step in enumerate(steps):
        for control in _controls(step):
            if control in lines_of:
                waiting[lines_of[control]].append(index)
    moved: set[int] = set()  # lines taken to a split line's position
    fused: dict[int, Step] = {}
    for index, step in enumerate(steps):
        if not _splits(step) or index in moved:
            continue
        partner = _beside_before(steps, index, readers, waiting, moved)
        if partner is None:
            partner = _beside_after(steps, index, producers, lines_of, moved)
        if partner is not None:
            moved.add(partner)
            fused[index] = _beside_line(steps[partner], step)
    return _rebuilt(steps, fused, moved)


def _splits(step: Step) -> bool:
    """Whether a line's kernel splits its work across the run's threads (a convolution's), not a streaming one."""
    return (step.op is not None and not step.needs_step and step.kernel_def is not None
            and step.kernel_def.parallel and not step.kernel_def.streams)


def _streams(step: Step, beside: Step) -> bool:
    """Whether a line may run beside `beside`'s: a stateless kernel registered `streams`, on the same device."""
    return (step.op is not None and not step.needs_step and step.kernel_def is not None and step.kernel_def.streams
            and step.device == beside.device and not any(node.op.op_def.stateful for node in _nodes(step)))


def _beside_before(steps: list[Step], index: int, readers, waiting, moved: set[int]) -> int | None:
    """The nearest streaming line since the last split line before `index` that may move down to it: what reads
    its outputs or waits for it runs after `index` and stays there."""
    for position in range(index - 1, -1, -1):
        if _splits(steps[position]):
            return None
        if position in moved or not _streams(steps[position], steps[index]):
            continue
        later = [r for output in steps[position].outputs for r in readers[output]] + waiting[position]
        if all(r > index and r not in moved for r in later):
            return position
    return None


def _beside_after(steps: list[Step], index: int, producers, lines_of, moved: set[int]) -> int | None:
    """The nearest streaming line before the next split line after `index` that may move up to it: all it waits
    for, data and control inputs, is computed before `index`."""
    for position in range(index + 1, len(steps)):
        step = steps[position]
        if _splits(step):
            return None
        if position in moved or not _streams(step, steps[index]):
            continue
        if all(wait < index for wait in _waits(steps, step, producers, lines_of)):
            return position
    return None


def _beside_line(streaming: Step, split: Step) -> Step:
    """The line running `streaming`'s kernel beside `split`'s (intra_op.run_beside), giving both lines' outputs."""
    own, one, several = len(streaming.args), len(streaming.outputs) == 1, len(split.outputs) > 1

    def run(*args):
        value, result = run_beside(lambda: _tagged(streaming, *args[:own]),
                                   lambda: split.kernel(*args[own:]) if split.fused else _tagged(split, *args[own:]))
        return ((value,) if one else tuple(value)) + (tuple(result) if several else (result,))

    return replace(split, kernel=run, args=streaming.args + split.args, outputs=streaming.outputs + split.outputs,
                   fused=_nodes(streaming) + _nodes(split), unfused=None)


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
    readers = _readers(steps)
    drop: set[int] = set()
    fused: dict[int, Step] = {}
    for group in groups:
        if len(group.positions) < 2:
            continue
        positions = sorted(group.positions)
        members = [steps[p] for p in positions]
        inside = set(positions)
        outputs = [v for m in members for v in m.outputs if v in fetched or set(readers[v]) - inside]
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


def _or_one_by_one(fused_kernel, separately):
    """fused_kernel; where it gives None (the arrays do not fit) or fails having written nothing, `separately`: the
    fused lines one by one, so that an error names the op that fails."""

    def run(*args):
        try:
            result = fused_kernel(*args)
        except Exception:
            result = None
        return separately(*args) if result is None else result

    return run


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
