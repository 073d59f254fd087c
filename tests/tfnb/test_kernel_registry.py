"""What the kernel registry promises: outputs of kernels registered `fresh_output` are new memory, checked
on every registry example; and the kernels package imports only the framework and itself, at module level."""

import ast
import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pytest
from test_op_examples import CASES, _call, sample

import tfnb as tf
from tfnb.framework.op_registry import registered_ops
from tfnb.kernels import find_kernel
from tfnb.kernels.registry import _KERNELS

FRESH_CASES = [(t, i, e) for t, i, e in CASES if find_kernel(t, "CPU").fresh_output]


def _checked(kernel_def, problems: list, calls: list):
    """kernel_def's factory, its kernels noting each output that shares memory with an input, another
    output, or is read-only. The kernels lose their variants (`inplace`, fused ones): the plain call runs."""

    def factory(node):
        run = kernel_def.factory(node)

        def checked(*inputs):
            outputs = run(*inputs)
            arrays = [o for o in (outputs if isinstance(outputs, tuple) else (outputs,)) if isinstance(o, np.ndarray)]
            given = [x for x in inputs if isinstance(x, np.ndarray)]
            problems.extend(f"output {i} shares memory with an input" for i, out in enumerate(arrays)
                            if any(np.shares_memory(out, x) for x in given))
            problems.extend(f"output {i} is read-only" for i, out in enumerate(arrays) if not out.flags.writeable)
            problems.extend("two outputs share memory" for a, b in itertools.combinations(arrays, 2)
                            if np.shares_memory(a, b))
            calls.append(node.name)
            return outputs

        return checked

    return dataclasses.replace(kernel_def, factory=factory)


@pytest.mark.parametrize("known_shapes", [True, False], ids=["static", "unknown-dims"])
@pytest.mark.parametrize("op_type,index,example", FRESH_CASES, ids=[f"{t}-{i}" for t, i, _ in FRESH_CASES])
def test_fresh_outputs_share_no_memory_with_inputs(op_type, index, example, known_shapes, monkeypatch):
    op_def, kernel_def = registered_ops()[op_type], find_kernel(op_type, "CPU")
    assert op_def.forwards_input is None, f"{op_type} may forward an input, yet its kernel claims fresh outputs"
    problems, calls = [], []
    monkeypatch.setitem(_KERNELS, (op_type, kernel_def.device_type), _checked(kernel_def, problems, calls))
    rng = np.random.default_rng(index)
    for dtype in example.dtypes or op_def.dtypes:
        if dtype is tf.resource:
            continue
        values = [sample(spec, dtype, example.low, example.high, rng) for spec in example.inputs]
        graph = tf.Graph()
        with graph.as_default():
            inputs = [tf.placeholder(tf.as_dtype(v.dtype) if v.dtype != object else tf.string,
                                     v.shape if known_shapes else [None] * v.ndim) for v in values]
            outputs = _call(example.build, inputs, dtype)
            with tf.Session(graph=graph) as sess:
                sess.run(outputs, dict(zip(inputs, values)))
        assert not problems, f"{op_type} example {index} in {dtype.name}: {sorted(set(problems))}"
    assert calls, f"no {op_type} kernel ran"


# -- the kernels package's imports ----------------------------------------------------------------

KERNELS_ROOT = Path(__file__).resolve().parents[2] / "kernels"
ALLOWED_FRAMEWORK = {"tfnb.framework.errors", "tfnb.framework.common_shapes", "tfnb.framework.summary_proto"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(KERNELS_ROOT).with_suffix("").parts
    return ".".join(("tfnb", "kernels") + (parts[:-1] if parts[-1] == "__init__" else parts))


MODULES = {_module_name(path): ast.parse(path.read_text()) for path in sorted(KERNELS_ROOT.rglob("*.py"))}


def _imported(node: ast.AST) -> list[str]:
    """The modules an import statement names (`from package import module` names the module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module for a in node.names]
    return []


def _imports(tree: ast.Module, at_module_level: bool) -> set[str]:
    statements = tree.body if at_module_level else [n for f in ast.walk(tree) if isinstance(
        f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)]
    return {name for node in statements for name in _imported(node)}


def test_kernels_import_the_framework_and_each_other_only_at_module_level():
    assert len(MODULES) > 20
    lazy = {m: sorted(n for n in _imports(tree, False) if n.startswith("tfnb")) for m, tree in MODULES.items()}
    assert {m: names for m, names in lazy.items() if names} == {}
    outside = {m: sorted(n for n in _imports(tree, True) if n.startswith("tfnb") and n not in ALLOWED_FRAMEWORK
                         and not n.startswith("tfnb.kernels")) for m, tree in MODULES.items()}
    assert {m: names for m, names in outside.items() if names} == {}
    assert not any("cupy" in _imports(tree, True) for tree in MODULES.values())  # CuPy stays optional


def test_kernel_modules_import_no_cycle():
    edges = {m: {n for n in _imports(tree, True) if n in MODULES and n != m} for m, tree in MODULES.items()}
    done, path = set(), []

    def visit(module: str) -> None:
        assert module not in path, f"import cycle: {' -> '.join(path[path.index(module):] + [module])}"
        if module in done:
            return
        path.append(module)
        for imported in sorted(edges[module]):
            visit(imported)
        path.pop()
        done.add(module)

    for module in sorted(edges):
        visit(module)
