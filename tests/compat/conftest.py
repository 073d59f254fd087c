"""The differential harness: each TF1 program runs under TensorFlow (the reference) and under tfnb.

A program is a function `program(tf)` that builds a graph with the module it is given
(`tensorflow.compat.v1` or `tfnb`) and returns what it fetched, or raises. `assert_same_outcome`
runs it under both and compares values, dtypes and shapes, or the class of the error a user
would catch.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import os

import numpy as np
import pytest

import tfnb

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# TensorFlow's oneDNN kernels, its default on x86 from 2.9 through 2.20 (2.21 turned them off): with them its CPU
# Conv2D takes NCHW images too, as tfnb's does, where TF's own kernels raise UnimplementedError.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

_FLOAT_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}
_HALF_TOLERANCE = {"rtol": 1e-3, "atol": 1e-3}  # one float16 ulp: TF computes some float16 ops in float32


def pytest_generate_tests(metafunc):
    """Runs the shared program test once per program registered in the `PROGRAMS` of the file that imports it."""
    if metafunc.definition.originalname == "test_program_does_what_tensorflow_does":
        metafunc.parametrize("program", metafunc.module.PROGRAMS)


@pytest.fixture(scope="session")
def same_as_tf():
    """`same_as_tf(program)` fails unless tfnb does what TensorFlow does; skips without TensorFlow (`bench` extra)."""
    tensorflow = pytest.importorskip("tensorflow", reason="TensorFlow (the `bench` extra) is not installed")
    return functools.partial(assert_same_outcome, tensorflow.compat.v1)


@contextlib.contextmanager
def _tf1_defaults(tf1):
    """A fresh TensorFlow graph with TF1's defaults: Dimension shapes, v1 control flow, reference variables.

    Set for the program only, so other tests that use TensorFlow eagerly are not affected.
    """
    tf1.disable_v2_tensorshape()
    tf1.disable_control_flow_v2()
    tf1.disable_resource_variables()
    try:
        with tf1.Graph().as_default():
            yield
    finally:
        tf1.enable_v2_tensorshape()
        tf1.enable_control_flow_v2()
        tf1.enable_resource_variables()


def _plain(value):
    """A fetched value with framework objects (shapes, dims, dtypes, sparse values) made comparable."""
    kind = type(value).__name__
    if isinstance(value, np.ndarray | np.generic | bytes | str | int | float | bool | type(None)):
        return value
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        items = [_plain(item) for item in value]
        return items if isinstance(value, list) else ("tuple", *items)
    if kind == "TensorShape":
        return ("TensorShape", None if value.ndims is None else value.as_list())
    if kind == "Dimension":
        return ("Dimension", value.value)
    if hasattr(value, "as_numpy_dtype"):
        return ("DType", value.name)
    if hasattr(value, "op") and hasattr(value, "value_index"):  # a Tensor: what a user sees of it unrun
        return ("Tensor", value.name, value.dtype.name, None if value.shape.ndims is None else value.shape.as_list())
    if kind in ("IndexedSlicesValue", "IndexedSlices"):
        return ("IndexedSlices", _plain(value.values), _plain(value.indices), _plain(value.dense_shape))
    raise TypeError(f"a program returned a {kind}; return fetched values or plain descriptions")


def _outcome(module, program):
    """('value', plain result) or ('raises', the exception) of `program(module)`."""
    try:
        return "value", _plain(program(module))
    except Exception as error:  # noqa: BLE001 (the class of any error is part of the outcome)
        return "raises", error


def _catching_class(error: Exception) -> type:
    """The tfnb (or builtin) class that catches what TensorFlow raised: its most specific named class."""
    for cls in type(error).__mro__:
        if cls.__module__.startswith("tensorflow") and hasattr(tfnb.framework.errors, cls.__name__):
            return getattr(tfnb.framework.errors, cls.__name__)
        if cls.__module__ == "builtins" and cls is not Exception:
            return getattr(builtins, cls.__name__)
    return Exception


def _assert_same_value(expected, got, path: str = "result") -> None:
    if isinstance(expected, np.ndarray | np.generic):
        assert type(got) is type(expected), f"{path}: {type(got).__name__}, TF gives {type(expected).__name__}"
        assert got.dtype == expected.dtype, f"{path}: dtype {got.dtype}, TF gives {expected.dtype}"
        assert np.shape(got) == np.shape(expected), f"{path}: shape {np.shape(got)}, TF gives {np.shape(expected)}"
        if expected.dtype.kind in "fc":
            tolerance = _HALF_TOLERANCE if expected.dtype == np.float16 else _FLOAT_TOLERANCE
            np.testing.assert_allclose(got, expected, err_msg=path, equal_nan=True, **tolerance)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=path)
        return
    assert type(got) is type(expected), f"{path}: {got!r}, TF gives {expected!r}"
    if isinstance(expected, dict):
        assert got.keys() == expected.keys(), f"{path}: keys {list(got)}, TF gives {list(expected)}"
        for key in expected:
            _assert_same_value(expected[key], got[key], f"{path}[{key!r}]")
    elif isinstance(expected, list | tuple):
        assert len(got) == len(expected), f"{path}: {len(got)} items, TF gives {len(expected)}"
        for index, (want, have) in enumerate(zip(expected, got)):
            _assert_same_value(want, have, f"{path}[{index}]")
    elif isinstance(expected, float):
        np.testing.assert_allclose(got, expected, err_msg=path, **_FLOAT_TOLERANCE)
    else:
        assert got == expected, f"{path}: {got!r}, TF gives {expected!r}"


def assert_same_outcome(tf1, program) -> None:
    """Runs `program` under TensorFlow (TF1 defaults) and under tfnb, each in a fresh graph, and compares."""
    with _tf1_defaults(tf1):
        expected_kind, expected = _outcome(tf1, program)
    with tfnb.Graph().as_default():
        got_kind, got = _outcome(tfnb, program)
    if expected_kind == "raises":
        catching = _catching_class(expected)
        if got_kind == "value":
            pytest.fail(f"TF raises {type(expected).__name__} ({expected}); tfnb returns {got!r}")
        if not isinstance(got, catching):
            raise AssertionError(f"TF raises {type(expected).__name__} ({str(expected)[:300]}); "
                                 f"tfnb raises {type(got).__name__}, not a {catching.__name__}") from got
    elif got_kind == "raises":
        raise AssertionError(f"tfnb raises where TF returns {expected!r}") from got
    else:
        _assert_same_value(expected, got)
