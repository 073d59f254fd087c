"""The registry's example cases and what the tests that sweep them share: sampling inputs, building an
example in a graph of its own, calling a build or reference function, checking an output against its reference."""

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


def call_example(fn, args, dtype):
    """`fn(*args)`, passing `dtype` too where `fn` takes one (an example's build or reference function)."""
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
            outputs = call_example(example.build, inputs, dtype)
    return graph, inputs, outputs


def _tolerance(dtype, example):
    if dtype in (tf.float16,):
        return 1e-2
    if dtype in (tf.float32, tf.complex64):
        return max(example.atol, 1e-5)
    return example.atol


def check_output(actual, expected, tensor, dtype, example, label: str) -> None:
    """Asserts a kernel's output has the inferred dtype and a shape compatible with the static one, and matches the
    reference within the example's tolerance."""
    expected = np.asarray(expected)
    actual_array = np.asarray(actual)
    assert actual_array.dtype == tensor.dtype.np_dtype, \
        f"{label}: kernel dtype {actual_array.dtype} != inferred {tensor.dtype.name}"
    assert tensor.shape.is_compatible_with(actual_array.shape), \
        f"{label}: static {tensor.shape} vs actual {actual_array.shape}"
    assert actual_array.shape == expected.shape, f"{label}: shape {actual_array.shape} != reference {expected.shape}"
    if actual_array.dtype == object:
        assert actual_array.tolist() == expected.tolist(), label
    elif tensor.dtype.is_floating or tensor.dtype.is_complex:
        tol = _tolerance(dtype, example)
        np.testing.assert_allclose(actual_array, expected.astype(actual_array.dtype), rtol=tol, atol=tol, err_msg=label)
    else:
        np.testing.assert_array_equal(actual_array, expected, err_msg=label)


# Differentiable examples that run in float64 (finite differences need its precision).
GRADIENT_CASES = [(t, i, e) for t, i, e in CASES if e.differentiable
                  and tf.float64 in (e.dtypes or registered_ops()[t].dtypes)]


def gradient_values(index: int, example) -> list:
    """float64 inputs for a gradient case, seeded by `index`; skips the test when none is floating."""
    rng = np.random.default_rng(100 + index)
    values = [sample(spec, tf.float64, example.low, example.high, rng) for spec in example.inputs]
    if not any(v.dtype.kind == "f" for v in values):
        pytest.skip("no floating input to differentiate")
    return values
