"""Where a graph view draws the ops a training graph adds around a model: initializers and optimizer state.

Name scopes already keep `gradients/` and an optimizer's updates (`Adam/`) apart, but two kinds of ops
sit inside the model's own scopes: each variable's initializer (`dense/kernel/Initializer/...`,
`dense/kernel/Assign`, and `init`, which groups them) and the optimizer's state (the slots
`dense/kernel/Adam`, `beta1_power`). Drawn where their names put them, they tie every layer to `init`
and to `Adam/` with edges. The graph view draws them as TensorBoard users think of them: the
initializers in one box of their own, `#initializers/`, and an optimizer's state inside the
optimizer's box, under `Adam/#state/`. The ops keep their names; only the path they are drawn
under changes ('#' never occurs in an op name, so these paths cannot clash with a name scope).
"""

from __future__ import annotations

from tfnb.framework.graph import GraphKeys
from tfnb.framework.operation import Operation

INITIALIZERS = "#initializers/"
STATE = "#state/"
VARIABLE_TYPES = frozenset({"VarHandleOp", "VariableV2", "Variable"})
UPDATE_TYPE_PREFIXES = ("ResourceApply", "Apply", "ResourceSparseApply", "SparseApply")


def consumers_of(ops: list[Operation]) -> dict[Operation, list[Operation]]:
    """Op -> the ops among `ops` that read one of its outputs or wait for it (control edges)."""
    shown = set(ops)
    consumers: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op in ops:
        for producer in {tensor.op for tensor in op.inputs} | set(op.control_inputs):
            if producer in shown:
                consumers[producer].append(op)
    return consumers


def _variables(ops: list[Operation]) -> list:
    if not ops:
        return []
    graph = ops[0].graph
    return graph.get_collection(GraphKeys.GLOBAL_VARIABLES) + graph.get_collection(GraphKeys.LOCAL_VARIABLES)


def initializer_ops(ops: list[Operation], consumers: dict[Operation, list[Operation]]) -> set[Operation]:
    """The ops only initialization needs: each variable's initializer, the no-ops that group initializers
    (`init`), and every op that nothing but these reads (the initial values); never a variable itself."""
    shown = set(ops)
    found = {v.initializer for v in _variables(ops) if v.initializer in shown}
    if not found:
        return found
    for op in ops:  # groups of initializers, and groups of those groups, come after what they group
        if op.type == "NoOp" and not op.inputs and op.control_inputs and set(op.control_inputs) <= found:
            found.add(op)
    for op in reversed(ops):  # consumers are created after what they read
        readers = consumers[op]
        if op not in found and op.type not in VARIABLE_TYPES and readers and all(r in found for r in readers):
            found.add(op)
    return found


def optimizer_scopes(ops: list[Operation]) -> set[str]:
    """Top-level scopes that hold an optimizer's update ops (`Adam/`, `GradientDescent/`)."""
    return {op.name.split("/")[0] + "/" for op in ops if "/" in op.name and op.type.startswith(UPDATE_TYPE_PREFIXES)}


def optimizer_state(ops: list[Operation], consumers: dict[Operation, list[Operation]],
                    initializers: set[Operation]) -> dict[Operation, str]:
    """Op -> the optimizer scope it belongs to, for the ops of non-trainable variables (slots, beta powers)
    that only that optimizer's ops read (initializers and the variable's own ops aside)."""
    scopes = optimizer_scopes(ops)
    if not scopes:
        return {}
    shown = set(ops)
    graph = ops[0].graph
    excluded = {v.op for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)}
    excluded |= {v.op for v in graph.get_collection(GraphKeys.GLOBAL_STEP)}
    state: dict[Operation, str] = {}
    for variable in _variables(ops):
        if variable.op not in shown or variable.op in excluded:
            continue
        prefix = variable.op.name + "/"
        own = [op for op in ops if (op is variable.op or op.name.startswith(prefix)) and op not in initializers]
        readers = {r for op in own for r in consumers[op]} - set(own) - initializers
        owners = {scope for scope in scopes if readers and all(r.name.startswith(scope) for r in readers)}
        if len(owners) == 1:
            state.update(dict.fromkeys(own, owners.pop()))
    return state


def display_paths(ops: list[Operation]) -> dict[Operation, str]:
    """Op -> the path a graph view draws it under: its name, or its name moved under `#initializers/` or an
    optimizer's `#state/`."""
    consumers = consumers_of(ops)
    initializers = initializer_ops(ops, consumers)
    state = optimizer_state(ops, consumers, initializers)
    paths = {}
    for op in ops:
        if op in initializers:
            paths[op] = INITIALIZERS + op.name
        elif op in state:
            paths[op] = state[op] + STATE + op.name
        else:
            paths[op] = op.name
    return paths
