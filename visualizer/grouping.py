"""Which groups a graph view draws around each op: name scopes, series of alike scopes, loop frames, cond branches.

Groups nest as the names do: a while loop's frame is its name scope (`while/`), a cond is its name
scope (`cond/`), and each cond branch is a group `cond/#true` or `cond/#false` inside the cond's
scope, holding the ops built by that branch's function (their control-flow context says which).
As in TensorBoard, an op named like a scope is drawn inside it (a variable `dense/kernel` in the
box `dense/kernel/` with its reads). Initializers and an optimizer's state are drawn under the
paths visualizer/roles.py gives them (`#initializers/...`, `Adam/#state/...`).
"""

from __future__ import annotations

import re
from collections import deque

from tfnb.framework.operation import Operation
from tfnb.ops.control_flow.context import CondContext

from .roles import INITIALIZERS, STATE, display_paths, optimizer_scopes

_SERIES_NAME = re.compile(r"^(?P<base>.*?)(?:(?P<sep>_?)(?P<index>\d+))?$")
BRANCH_MARK = "#"   # op names never hold it, so a branch id cannot clash with a scope's
_GRADIENTS = re.compile(r"^gradients(_\d+)?/$")
FOLDED_VISIBLE = 16


def scopes_of(name: str) -> list[str]:
    """The ids of the name scopes around an op, outermost first: 'a/b/c' -> ['a/', 'a/b/']."""
    parts = name.split("/")[:-1]
    return ["/".join(parts[:i + 1]) + "/" for i in range(len(parts))]


def _ranges(indices: list[int]) -> str:
    """'1-3,5' for [1, 2, 3, 5]."""
    runs: list[list[int]] = []
    for i in sorted(indices):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def find_series(scopes: dict[Operation, list[str]], paths: dict[Operation, str], minimum: int = 3) -> dict[str, str]:
    """Scope id -> series id for sibling scopes named like `layer_1`..`layer_8` holding the same op names and types.

    `scopes` holds each op's scopes, outermost first, and `paths` the path it is drawn under. A scope
    without a number (`layer` beside `layer_1`) counts as index 0.
    """
    contents: dict[str, list[tuple[str, str]]] = {}
    for op, op_scopes in scopes.items():
        for scope in op_scopes:
            contents.setdefault(scope, []).append((paths[op][len(scope):], op.type))
    siblings: dict[tuple, list[tuple[int, str]]] = {}
    for scope, members in contents.items():
        parent, _, name = scope[:-1].rpartition("/")
        match = _SERIES_NAME.match(name)
        key = (parent, match["base"], match["sep"] if match["index"] else "_", tuple(sorted(members)))
        siblings.setdefault(key, []).append((int(match["index"] or 0), scope))
    series = {}
    for (parent, base, sep, _), members in siblings.items():
        if len(members) >= minimum:
            series_id = f"{parent}/" * bool(parent) + f"{base}{sep}[{_ranges([i for i, _ in members])}]"
            series.update({scope: series_id for _, scope in members})
    return series


def op_scopes(paths: dict[Operation, str]) -> dict[Operation, list[str]]:
    """Op -> the scopes it is drawn in, outermost first; an op whose path is also a scope goes inside that scope."""
    scopes = {op: scopes_of(path) for op, path in paths.items()}
    known = {scope for chain in scopes.values() for scope in chain}
    for op, path in paths.items():
        if path + "/" in known:
            scopes[op].append(path + "/")
    return scopes


def frame_scopes(ops: list[Operation]) -> dict[str, str]:
    """Scope id -> loop frame name, for the scopes that hold a while loop (named by its Enter ops)."""
    return {op.attrs["frame_name"] + "/": op.attrs["frame_name"] for op in ops if op.type == "Enter"}


def cond_branches(op: Operation) -> dict[str, str]:
    """Cond scope id -> 'true' or 'false', for each cond branch the op was built in (nested conds: several)."""
    branches = {}
    context = op._control_flow_context
    while context is not None:
        if isinstance(context, CondContext):
            branches[scopes_of(context.pivot.op.name)[-1]] = "true" if context.branch else "false"
        context = context.outer
    return branches


def branch_id(cond_scope: str, branch: str) -> str:
    """The id of one branch of the cond whose scope is `cond_scope`: 'cond/#true'."""
    return f"{cond_scope}{BRANCH_MARK}{branch}"


class Grouping:
    """The groups over a set of ops: for each op, the groups around it, outermost first, and each group's kind."""

    def __init__(self, ops: list[Operation], series_min: int = 3) -> None:
        paths = display_paths(ops)
        scopes = op_scopes(paths)
        series = find_series(scopes, paths, series_min)
        self.frames = frame_scopes(ops)
        optimizers = optimizer_scopes(ops)
        self.chains: dict[Operation, tuple[str, ...]] = {}
        self.members: dict[str, list[Operation]] = {}
        self.kinds: dict[str, str] = {}
        for op in ops:
            branches = cond_branches(op)
            chain: list[str] = []
            for scope in scopes[op]:
                if scope in series:
                    chain.append(series[scope])
                    self.kinds[series[scope]] = "series"
                chain.append(scope)
                self.kinds.setdefault(scope, _scope_kind(scope, self.frames, optimizers))
                if scope in branches:
                    self.kinds[scope] = "cond"
                    chain.append(branch_id(scope, branches[scope]))
                    self.kinds[chain[-1]] = "branch"
            self.chains[op] = tuple(chain)
            for group in chain:
                self.members.setdefault(group, []).append(op)

    def kind(self, group: str) -> str:
        """'scope', 'series', 'frame' (a while loop), 'cond', 'branch' (one side of a cond), 'gradients',
        'optimizer', 'state' (an optimizer's slots) or 'initializers'."""
        return self.kinds[group]

    def label(self, group: str) -> str:
        """A group's short name: a scope's last part, a frame's name, a branch's side."""
        kind = self.kinds[group]
        if kind == "frame":
            return f"frame {self.frames[group]}"
        if kind == "branch":
            return group.rpartition(BRANCH_MARK)[2]
        return group.rstrip("/").rpartition("/")[2].lstrip(BRANCH_MARK)

    def unit(self, op: Operation, expanded: set[str]) -> tuple[str, tuple[str, ...]]:
        """The visible node standing for `op` (itself or its outermost collapsed group) and the clusters around it."""
        chain = self.chains[op]
        for i, group in enumerate(chain):
            if group not in expanded:
                return group, chain[:i]
        return op.name, chain

    def units(self, expanded: set[str]) -> dict[str, list[Operation]]:
        """Visible node id -> the ops it stands for, in op order."""
        result: dict[str, list[Operation]] = {}
        for op in self.chains:
            result.setdefault(self.unit(op, expanded)[0], []).append(op)
        return result

    def children(self, group: str) -> list[str]:
        """The nodes that expanding `group` shows in its place."""
        found: dict[str, None] = {}
        for op in self.members[group]:
            chain = self.chains[op]
            i = chain.index(group)
            found[chain[i + 1] if i + 1 < len(chain) else op.name] = None
        return list(found)

    def default_expanded(self, limit: int) -> set[str]:
        """Groups a view opens with. A graph of at most `limit` ops opens whole (series stay collapsed); a larger
        one opens with its top-level groups collapsed, as TensorBoard does, unless so few show that
        opening some still shows at most FOLDED_VISIBLE nodes (a model inside one scope)."""
        large = len(self.chains) > limit
        if large:
            limit = min(limit, FOLDED_VISIBLE)
        expanded: set[str] = set()
        visible = len(self.units(expanded))
        queue = deque(dict.fromkeys(chain[0] for chain in self.chains.values() if chain))
        while queue:
            group = queue.popleft()
            if self.kinds[group] == "series":
                continue
            children = self.children(group)
            # in a large graph, a box around a single node would only add height
            if (len(children) > 1 or not large) and visible + len(children) - 1 <= limit:
                expanded.add(group)
                visible += len(children) - 1
                queue.extend(child for child in children if child in self.members)
        return expanded


def _scope_kind(scope: str, frames: dict[str, str], optimizers: set[str]) -> str:
    if scope in frames:
        return "frame"
    if scope == INITIALIZERS:
        return "initializers"
    if scope in optimizers:
        return "optimizer"
    if scope.endswith(STATE) and scope[:-len(STATE)] in optimizers:
        return "state"
    return "gradients" if _GRADIENTS.match(scope) else "scope"
