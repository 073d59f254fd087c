"""Operation: a node of the dataflow graph."""

from __future__ import annotations

import linecache
import os
import sys

from tfnb.framework.default_session import default_session_for
from tfnb.framework.graph_def import NodeDef, node_to_json
from tfnb.framework.op_registry import get_op_def

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tfnb/
_SKIPPED_FILES = (os.sep + "contextlib.py", os.sep + "functools.py")


def user_frame() -> tuple[str, int, str]:
    """(file, line, function) of the innermost caller outside tfnb: where the user built an op."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) and not filename.endswith(_SKIPPED_FILES):
            return filename, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return "<unknown>", 0, ""


class Operation:
    """A node: a type, input tensors, control inputs, attrs, a requested and an assigned device.

    `traceback` is where in the user's code it was created; errors about the op show it.
    """

    def __init__(self, graph, op_id: int, name: str, op_type: str, inputs, control_inputs,
                 attrs: dict, device: str, site: tuple[str, int, str]) -> None:
        self.graph = graph
        self._id = op_id
        self.name = name
        self.type = op_type
        self.op_def = get_op_def(op_type)
        self._inputs = tuple(inputs)
        self._control_inputs = list(control_inputs)
        self.attrs = attrs
        self.device = device
        self.assigned_device = ""
        self.placement_reasons: dict = {}
        self.traceback = site
        self.outputs: tuple = ()
        self._control_flow_context = None

    @property
    def inputs(self) -> tuple:
        return self._inputs

    @property
    def control_inputs(self) -> list:
        return list(self._control_inputs)

    @property
    def creation_site(self) -> str:
        """`file:line` where the user created this op, with that line's text when available."""
        filename, line, _ = self.traceback
        text = linecache.getline(filename, line).strip()
        return f"{filename}:{line}" + (f": {text}" if text else "")

    def get_attr(self, name: str):
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self.name}' has no attr named '{name}'.") from None

    def values(self) -> tuple:
        return self.outputs

    def colocation_groups(self) -> list[bytes]:
        return [f"loc:@{name}".encode() for name in self.attrs.get("_class", [])] or [f"loc:@{self.name}".encode()]

    def _update_input(self, index: int, tensor) -> None:
        """Replaces input `index` (TF's private API; used to close a loop's NextIteration -> Merge edge)."""
        inputs = list(self._inputs)
        inputs[index] = tensor
        self._inputs = tuple(inputs)
        self.graph._bump_version()

    def _add_control_input(self, op: Operation) -> None:
        """Adds a control edge after creation (TF's private API; the graph version changes)."""
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            self.graph._bump_version()

    def _add_control_inputs(self, ops) -> None:
        for op in ops:
            self._add_control_input(op)

    @property
    def node_def(self) -> NodeDef:
        """This op as a node of the JSON graph format."""
        return node_to_json(self)

    def run(self, feed_dict=None, session=None) -> None:
        """Runs this op in the default (or given) session."""
        default_session_for(self.graph, session).run(self, feed_dict)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self.name}' type={self.type}>"

    def __hash__(self) -> int:
        return id(self)


def is_loop_back_edge(consumer: Operation, tensor) -> bool:
    """Whether `tensor` reaches `consumer` around a loop: NextIteration -> Merge (2015 paper, section 4.4).

    A loop's Merge waits for its Enter in the first iteration and for its NextIteration after; every
    dependency count and order leaves the back edge out.
    """
    return consumer.type == "Merge" and tensor.op.type == "NextIteration"
