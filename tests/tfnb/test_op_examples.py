"""Generic op tests: every registered op's example cases, in every dtype the op claims,
forward against the NumPy reference, with static shapes and dtypes checked against the values."""

import inspect

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.op_registry import registered_ops

CASES = [(op_type, i, example) for op_type, op_def in sorted(registered_ops().items())
         for i, example in enumerate(op_def.examples)]


def sample(spec, dtype: tf.DType, low: float, high: float, rng: np.random.Generator):
    """An input for an example: a fixed array as is, or random values of `dtype` for a shape."""
    if isinstance(spec, np.ndarray):
        return spec
    shape = tuple(spec)
    if dtype.is_bool:
        return rng.random(shape) < 0.5
    if dtype.is_integer:
        lo = max(int(np.floor(low)), int(dtype.min))
        return rng.integers(lo, int(np.ceil(high)) + 1, size=shape).astype(dtype.np_dtype)
    if dtype.is_complex:
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype.np_dtype)
    if dtype is tf.string:
        return np.array([b"s%d" % i for i in rng.integers(0, 99, size=shape).ravel()], dtype=object).reshape(shape)
    return rng.uniform(low, high, shape).astype(dtype.np_dtype)


def _call(fn, args, dtype):
    if inspect.isfunction(fn) and "dtype" in inspect.signature(fn).parameters:
        return fn(*args, dtype=dtype)
    return fn(*args)


def example_values(op_type: str, index: int, example):
    """Per dtype the example runs in (resources aside): (dtype, its sampled input values), seeded by `index`."""
    rng = np.random.default_rng(index)
    for dtype in example.dtypes or registered_ops()[op_type].dtypes:
        if dtype is not tf.resource:
            yield dtype, [sample(spec, dtype, example.low, example.high, rng) for spec in example.inputs]


def example_graph(example, dtype: tf.DType, values: list, known_shapes: bool, device: str) -> tuple:
    """An example built in a graph of its own on `device`: (graph, placeholders for `values`, its outputs)."""
    graph = tf.Graph()
    with graph.as_default():
        inputs = [tf.placeholder(tf.as_dtype(v.dtype) if v.dtype != object else tf.string,
                                 v.shape if known_shapes else [None] * v.ndim) for v in values]
        with tf.device(device):
            outputs = _call(example.build, inputs, dtype)
    return graph, inputs, outputs


def _tolerance(dtype, example):
    if dtype in (tf.float16,):
        return 1e-2
    if dtype in (tf.float32, tf.complex64):
        return max(example.atol, 1e-5)
    return example.atol


def _check(actual, expected, tensor, dtype, example, label):
    expected = np.asarray(expected)
    actual_array = np.asarray(actual)
    assert actual_array.dtype == tensor.dtype.np_dtype, f"{label}: kernel dtype {actual_array.dtype} != inferred {tensor.dtype.name}"
    assert tensor.shape.is_compatible_with(actual_array.shape), f"{label}: static {tensor.shape} vs actual {actual_array.shape}"
    assert actual_array.shape == expected.shape, f"{label}: shape {actual_array.shape} != reference {expected.shape}"
    if actual_array.dtype == object:
        assert actual_array.tolist() == expected.tolist(), label
    elif tensor.dtype.is_floating or tensor.dtype.is_complex:
        tol = _tolerance(dtype, example)
        np.testing.assert_allclose(actual_array, expected.astype(actual_array.dtype), rtol=tol, atol=tol, err_msg=label)
    else:
        np.testing.assert_array_equal(actual_array, expected, err_msg=label)


DEVICES = [pytest.param("/device:CPU:0", id="cpu"), pytest.param("/device:GPU:0", id="gpu", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("known_shapes", [True, False], ids=["static", "unknown-dims"])
@pytest.mark.parametrize("op_type,index,example", CASES, ids=[f"{t}-{i}" for t, i, _ in CASES])
def test_forward_matches_numpy(op_type, index, example, known_shapes, device):
    for dtype, values in example_values(op_type, index, example):
        graph, inputs, outputs = example_graph(example, dtype, values, known_shapes, device)
        assert any(op.type == op_type for op in graph.get_operations()), f"example did not build a {op_type} op"
        with graph.as_default(), tf.Session(graph=graph) as sess:
            actual = sess.run(outputs, dict(zip(inputs, values)))
        expected = _call(example.reference, values, dtype)
        label = f"{op_type} example {index} in {dtype.name}"
        if isinstance(outputs, (list, tuple)):
            assert len(actual) == len(expected), label
            for a, e, t in zip(actual, expected, outputs):
                _check(a, e, t, dtype, example, label)
        else:
            _check(actual, expected, outputs, dtype, example, label)


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


GRADIENT_CASES = [(t, i, e) for t, i, e in CASES if e.differentiable
                  and tf.float64 in (e.dtypes or registered_ops()[t].dtypes)]


@pytest.mark.parametrize("op_type,index,example", GRADIENT_CASES, ids=[f"{t}-{i}" for t, i, _ in GRADIENT_CASES])
def test_gradient_matches_finite_differences(op_type, index, example):
    rng = np.random.default_rng(100 + index)
    values = [sample(spec, tf.float64, example.low, example.high, rng) for spec in example.inputs]
    if not any(v.dtype.kind == "f" for v in values):
        pytest.skip("no floating input to differentiate")
    tf.test.check_gradients(lambda *xs: _call(example.build, xs, tf.float64), values, rtol=1e-4, atol=1e-6)
