"""What the kernel registry promises: the outputs of a kernel registered `fresh_output` are new memory that
the plan may overwrite, checked on every registry example of its op."""

import dataclasses
import itertools

import numpy as np
import pytest
from registry_cases import CASES, example_graph, example_values

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
    for dtype, values in example_values(op_type, index, example):
        graph, inputs, outputs = example_graph(example, dtype, values, known_shapes, "/device:CPU:0")
        with tf.Session(graph=graph) as sess:
            sess.run(outputs, dict(zip(inputs, values)))
        assert not problems, f"{op_type} example {index} in {dtype.name}: {sorted(set(problems))}"
    assert calls, f"no {op_type} kernel ran"

