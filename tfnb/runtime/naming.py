"""Python identifiers for generated code, named after the graph: `conv1_Conv2D`, not `t7_0`.

Any op name becomes a safe identifier: every character outside [A-Za-z0-9_] turns into `_` (so no
text from a graph, imported or not, reaches the code as anything but an identifier), a name that
would start with a digit or `_` or be a keyword gets a `v` in front, and a clash gets `_2`, `_3`.
Names starting with `_` stay free for the helpers that generated code calls.
"""

from __future__ import annotations

import keyword
import re

from tfnb.framework.tensor import Tensor

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
RESERVED = frozenset({"feeds", "step", "run", "None", "True", "False"})


def identifier(text: str) -> str:
    """`text` as a Python identifier that does not start with `_` (see the module docstring)."""
    name = _NOT_IDENTIFIER.sub("_", text)
    if not name or name[0].isdigit() or name[0] == "_" or keyword.iskeyword(name) or name in RESERVED:
        name = "v" + name
    return name


def kernel_name(op_type: str) -> str:
    """The name a kernel of `op_type` is called by: Conv2D -> conv2d_kernel, BiasAdd -> bias_add_kernel.

    The suffix keeps kernels apart from values, which take their ops' names (often the op type: "Relu").
    """
    return identifier(_CAMEL.sub("_", op_type.lstrip("_")).lower() + "_kernel")


class Names:
    """Hands out distinct identifiers for one generated function."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._scalars: dict[str, str] = {}

    def new(self, text: str) -> str:
        """A fresh identifier for `text` (see `identifier`), with `_2`, `_3` ... on a clash."""
        base = identifier(text)
        name, count = base, 1
        while name in self._used:
            count += 1
            name = f"{base}_{count}"
        self._used.add(name)
        return name

    def helper(self, text: str) -> str:
        """A fresh identifier for a helper of the generated code: `_` and `text` made an identifier."""
        name = self.new(text)
        self._used.add("_" + name)
        return "_" + name

    def value(self, tensor: Tensor, suffix: str = "") -> str:
        """A name for `tensor`'s value: its op's name, `_i` for output i > 0, then `suffix`."""
        index = f"_{tensor.value_index}" if tensor.value_index else ""
        return self.new(f"{tensor.op.name}{index}{suffix}")

    def scalar_of(self, name: str) -> str:
        """The name of the NumPy-scalar form of the 0-d constant `name` (`name_s`), the same each time."""
        scalar = self._scalars.get(name)
        if scalar is None:
            scalar = self._scalars[name] = self.new(name + "_s")
        return scalar
