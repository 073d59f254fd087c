"""Generic op tests: every registered op's example cases, in every dtype the op claims,
forward against the NumPy reference, with static shapes and dtypes checked against the values."""

import pytest
from registry_cases import (
    CASES,
    GRADIENT_CASES,
    call_example,
    check_output,
    example_graph,
    example_values,
    gradient_values,
)

import tfnb as tf
from tfnb.framework.op_registry import registered_ops

DEVICES = [pytest.param("/device:CPU:0", id="cpu"), pytest.param("/device:GPU:0", id="gpu", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("known_shapes", [True, False], ids=["static", "unknown-dims"])
@pytest.mark.parametrize("op_type,index,example", CASES, ids=[f"{t}-{i}" for t, i, _ in CASES])
def test_forward_matches_numpy(op_type, index, example, known_shapes, device):
    for dtype, values in example_values(op_type, index, example):
        graph, inputs, outputs = example_graph(example, dtype, values, known_shapes, device)
        assert any(op.type == op_type for op in graph.get_operations()), f"example did not build a {op_type} op"
        # As in TF, a GPU takes no strings: examples with strings run on the host by soft placement.
        config = tf.ConfigProto(allow_soft_placement=any(
            t.dtype is tf.string for op in graph.get_operations() for t in op.outputs))
        with graph.as_default(), tf.Session(graph=graph, config=config) as sess:
            actual = sess.run(outputs, dict(zip(inputs, values)))
        expected = call_example(example.reference, values, dtype)
        label = f"{op_type} example {index} in {dtype.name}"
        if isinstance(outputs, (list, tuple)):
            assert len(actual) == len(expected), label
            for a, e, t in zip(actual, expected, outputs):
                check_output(a, e, t, dtype, example, label)
        else:
            check_output(actual, expected, outputs, dtype, example, label)


def test_every_op_has_a_kernel_and_an_example():
    from tfnb.kernels import has_kernel
    missing_kernels = [t for t in registered_ops() if not has_kernel(t, "CPU")]
    assert not missing_kernels
    untested = [t for t, d in registered_ops().items() if not d.examples and t not in UNTESTED_BY_EXAMPLES]
    assert not untested, f"ops without example cases: {untested}"


# Ops that cannot be built from inputs alone; each has its own tests.
UNTESTED_BY_EXAMPLES = {"Placeholder", "NoOp", "Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond",
                        "VarHandleOp", "ReadVariableOp", "AssignVariableOp",
                        "AssignAddVariableOp", "AssignSubVariableOp", "VarIsInitializedOp",
                        "RandomStandardNormal", "RandomUniform", "TruncatedNormal", "RandomUniformInt"}
UNTESTED_BY_EXAMPLES |= {t for t in registered_ops() if t.startswith(("ResourceApply", "ResourceSparseApply"))}


@pytest.mark.parametrize("op_type,index,example", GRADIENT_CASES, ids=[f"{t}-{i}" for t, i, _ in GRADIENT_CASES])
def test_gradient_matches_finite_differences(op_type, index, example):
    values = gradient_values(index, example)
    tf.test.check_gradients(lambda *xs: call_example(example.build, xs, tf.float64), values, rtol=1e-4, atol=1e-6)
