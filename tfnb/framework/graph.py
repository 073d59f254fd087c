"""Graph: operations in creation order, with name, device, colocation and control-dependency scopes."""

from __future__ import annotations

import contextlib
import difflib
import re
import threading

from tfnb.framework import device_spec as _device
from tfnb.framework.default_stack import DefaultStack
from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.graph_def import VALID_NODE_NAME, GraphDef, graph_to_json
from tfnb.framework.operation import Operation, user_frame
from tfnb.framework.tensor import Tensor

_VALID_SCOPE_NAME = re.compile(r"[A-Za-z0-9_.\-/>]*")


class GraphKeys:
    """Standard collection names."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    GLOBAL_STEP = "global_step"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    UPDATE_OPS = "update_ops"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    SAVERS = "savers"
    VARIABLES = GLOBAL_VARIABLES


class Graph:
    """A dataflow graph. `version` grows whenever the graph changes."""

    def __init__(self) -> None:
        self._ops: list[Operation] = []
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._device_stack: list = []
        self._colocation_stack: list[Operation] = []
        self._control_stack: list[list[Operation] | None] = []
        self._collections: dict[str, list] = {}
        self._unfeedable: set = set()
        self._unfetchable: set = set()
        self._finalized = False
        self._version = 0
        self._lock = threading.RLock()
        self.seed: int | None = None
        self._variable_store = None
        self._control_flow_context = None
        self._container = ""

    # -- building ---------------------------------------------------------------------------------

    def create_op(self, op_type: str, inputs=(), attrs: dict | None = None, name: str | None = None) -> Operation:
        """Adds an op; infers its outputs' dtypes and static shapes from the op registry."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        inputs = tuple(inputs)
        for tensor in inputs:
            if not isinstance(tensor, Tensor):
                raise TypeError(f"Input to {op_type} must be a Tensor, got {tensor!r}")
            if tensor.graph is not self:
                raise ValueError(f"Tensor {tensor.name} must be from the same graph as the new {op_type} op.")
        attrs = dict(attrs or {})
        context = self._control_flow_context
        # An op with no input from inside its context (none at all, or only values routed in from
        # outside) would otherwise run once too often in a loop, or in an untaken branch: it gets a
        # control edge from the context's pivot, as TF1 does.
        gated = context is not None and context.pivot is not None and not any(context.contains(t) for t in inputs)
        if context is not None:
            inputs = tuple(context.route(t) for t in inputs)
        with self._lock:
            op_name = self._op_name(name or op_type)
            if self._container and attrs.get("container") == "":
                attrs["container"] = self._container
            if self._colocation_stack:
                attrs["_class"] = sorted({c.name for c in self._colocation_stack})
            control_inputs = self._current_control_inputs(inputs)
            if gated and context.pivot.op not in control_inputs:
                control_inputs = control_inputs + [context.pivot.op]
            op = Operation(self, len(self._ops), op_name, op_type, inputs, control_inputs,
                           attrs, "", user_frame())
            op.device = self._current_device(op)
            op._control_flow_context = context
            op.outputs = self._infer_outputs(op)
            self._ops.append(op)
            self._ops_by_name[op_name] = op
            self._version += 1
        return op

    def _infer_outputs(self, op: Operation) -> tuple:
        try:
            signature = op.op_def.infer(op)
        except (ValueError, TypeError, InvalidArgumentError) as error:
            # A shape rule may use a helper that kernels share (InvalidArgumentError); building a graph, TF raises
            # ValueError for shapes and TypeError for dtypes, naming the node, its inputs and their shapes.
            message = error.message if isinstance(error, InvalidArgumentError) else str(error)
            kind = TypeError if isinstance(error, TypeError) else ValueError
            shapes = ", ".join(shape_text(t.shape) for t in op.inputs)
            raise kind(f"{message} for '{{{{node {op.name}}}}} = {op.type}({', '.join(_input_names(op))})' with "
                       f"input shapes: {shapes}.\n  created at {op.creation_site}") from None
        return tuple(Tensor(op, i, dtype, shape) for i, (dtype, shape) in enumerate(signature))

    def _op_name(self, name: str) -> str:
        if name.endswith("/"):
            name = name[:-1]
            if name in self._ops_by_name:
                raise ValueError(f"Duplicate node name in graph: '{name}'")
            self._names_in_use.setdefault(name.lower(), 1)
            return name
        if not VALID_NODE_NAME.fullmatch(name):
            raise ValueError(f"'{name}' is not a valid node name")
        return self.unique_name(name)

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """`name` under the current name scope, made unique as TF does (`c`, `c_1`, `c_2`)."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{count}"
                count += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{count - 1}"
        return name

    def _bump_version(self) -> None:
        self._version += 1

    # -- scopes -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def name_scope(self, name: str | None):
        """Opens a name scope; yields its prefix ('outer/inner_1/'). '' or None resets to the top."""
        old = self._name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            if not (_VALID_SCOPE_NAME if old else VALID_NODE_NAME).fullmatch(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield f"{new}/" if new else ""
        finally:
            self._name_stack = old

    def get_name_scope(self) -> str:
        return self._name_stack

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Requests a device for ops created inside; partial specs merge with outer ones."""
        self._device_stack.append(device_name_or_function)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _current_device(self, op: Operation) -> str:
        """The device `op` requests: the device scopes merged outermost first; a device function (as
        `tf.train.replica_device_setter` returns) sees the op with the device of the scopes outside it."""
        current = ""
        for spec in self._device_stack:
            if spec is None:
                current = ""
            elif callable(spec):
                op.device = current
                current = _device.canonical(spec(op) or "")
            else:
                current = _device.merge(current, str(spec))
        return current

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False):
        """Places ops created inside on the same device as `op`: as in TF, they request op's device, not that of
        enclosing device scopes (a device scope opened inside still applies)."""
        op = as_operation(op)
        saved, saved_devices = self._colocation_stack, self._device_stack
        self._colocation_stack = ([] if ignore_existing else list(saved)) + ([op] if op is not None else [])
        if op is not None:
            self._device_stack = [op.device or None]
        try:
            yield
        finally:
            self._colocation_stack, self._device_stack = saved, saved_devices

    @contextlib.contextmanager
    def container(self, container_name: str):
        """Stateful ops created inside (variables, queues) keep their resources in container `container_name`."""
        saved = self._container
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = saved

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run after `control_inputs`; None clears the outer dependencies."""
        if control_inputs is None:
            self._control_stack.append(None)
        else:
            ops = []
            for item in control_inputs:
                op = as_operation(item)
                if op is None or op.graph is not self:
                    raise ValueError(f"Control input {item!r} must be an Operation or Tensor of this graph")
                ops.append(op)
            self._control_stack.append(ops)
        try:
            yield
        finally:
            self._control_stack.pop()

    def _current_control_inputs(self, inputs) -> list[Operation]:
        active: list[Operation] = []
        for frame in self._control_stack:
            if frame is None:
                active = []
            else:
                active.extend(op for op in frame if op not in active)
        input_ops = {t.op for t in inputs}
        return [op for op in active if op not in input_ops]

    # -- lookup -----------------------------------------------------------------------------------

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        """The op named `name`; KeyError, as TF, if there is none."""
        if ":" in name:
            raise ValueError(f"Name '{name}' appears to refer to a Tensor, not a Operation.")
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph." + self._suggest(name)) from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        """The tensor named `name` ('op:index'); KeyError, as TF, if there is none."""
        op_name, sep, index = name.rpartition(":")
        if not sep or not (index.isascii() and index.isdigit()):
            raise ValueError(f"The name '{name}' refers to an Operation, not a Tensor. Tensor names must be of the "
                             f"form \"<op_name>:<output_index>\".")
        op = self._ops_by_name.get(op_name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. The operation, '{op_name}', "
                           f"does not exist in the graph." + self._suggest(op_name))
        if int(index) >= len(op.outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. The operation, '{op_name}', "
                           f"exists but only has {len(op.outputs)} outputs.")
        return op.outputs[int(index)]

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """The Tensor or Operation that `obj` (a name, tensor, op or variable) stands for."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if ":" not in obj and allow_operation:
                return self.get_operation_by_name(obj)
            raise ValueError(f"Can't convert '{obj}' to a {'Tensor' if allow_tensor else 'Operation'}.")
        if isinstance(obj, Tensor) and allow_tensor or isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"{obj!r} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    def _suggest(self, name: str) -> str:
        close = difflib.get_close_matches(name, self._ops_by_name, n=3)
        return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""

    # -- state ------------------------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    @property
    def finalized(self) -> bool:
        return self._finalized

    def prevent_feeding(self, tensor: Tensor) -> None:
        """Marks `tensor` as one that Session.run may not be fed."""
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor: Tensor) -> bool:
        """Whether Session.run may feed `tensor` (every tensor unless prevent_feeding marked it)."""
        return tensor not in self._unfeedable

    def prevent_fetching(self, op: Operation) -> None:
        """Marks `op` (and its outputs) as one that Session.run may not fetch."""
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op) -> bool:
        """Whether Session.run may fetch a tensor or op (all unless prevent_fetching marked it or its op)."""
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable

    def finalize(self) -> None:
        """Makes the graph read-only: creating an op afterwards raises RuntimeError."""
        self._finalized = True

    def as_default(self):
        """Makes this graph the default graph inside a `with` block."""
        return _stack.scope(self)

    def as_graph_def(self) -> GraphDef:
        """The graph in tfnb's JSON graph format (see tfnb.framework.graph_def)."""
        return graph_to_json(self)

    # -- collections ------------------------------------------------------------------------------

    def add_to_collection(self, name: str, value) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value) -> None:
        for name in ([names] if isinstance(names, str) else set(names)):
            self.add_to_collection(name, value)

    def get_collection(self, name: str, scope: str | None = None) -> list:
        """A copy of a collection; with `scope`, only items whose name starts with a match of it."""
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [item for item in items if hasattr(item, "name") and pattern.match(item.name)]

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self) -> list[str]:
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)


def shape_text(shape) -> str:
    """A static shape as TF prints it in errors: [2,?,3], or ? for an unknown rank."""
    dims = shape.as_tuple()
    return "?" if dims is None else "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _input_names(op: Operation) -> list[str]:
    """op's inputs as a NodeDef lists them: 'x' for output 0, 'x:1' for another."""
    return [t.op.name if t.value_index == 0 else t.name for t in op.inputs]


def as_operation(obj) -> Operation | None:
    """The Operation an op, a tensor or a variable stands for (None for None)."""
    if obj is None:
        return None
    if isinstance(obj, Operation):
        return obj
    if isinstance(obj, Tensor):
        return obj.op
    if hasattr(obj, "op"):
        return obj.op
    raise TypeError(f"{obj!r} is neither an Operation nor a Tensor")


_default_graph = Graph()
_stack = DefaultStack()


def get_default_graph() -> Graph:
    """The graph that new ops go into."""
    return _stack.top() or _default_graph


def reset_default_graph() -> None:
    """Replaces the global default graph with a new empty one (not allowed inside `as_default`)."""
    global _default_graph
    if _stack.items:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs.")
    _default_graph = Graph()


def name_scope(name: str | None, default_name: str | None = None, values=None):
    """TF1's name_scope(name, default_name, values) on the default graph (or that of `values`)."""
    graph = get_default_graph()
    for value in values or ():
        if isinstance(value, Tensor):
            graph = value.graph
            break
    return graph.name_scope(name if name is not None else default_name)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def container(container_name: str):
    """Puts the resources of variables and queues created inside in container `container_name` (TF1's tf.container)."""
    return get_default_graph().container(container_name)


def colocate_with(op, ignore_existing: bool = False):
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name: str, value) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: str | None = None) -> list:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list:
    return get_default_graph().get_collection_ref(key)
