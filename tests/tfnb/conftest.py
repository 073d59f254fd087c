"""Fixtures shared by the tests of tfnb's packages."""

import weakref

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.op_registry import _OPS, register_op
from tfnb.kernels import kernel
from tfnb.kernels.registry import _KERNELS
from tfnb.ops.inference import same_as_input


@pytest.fixture
def probe():
    """A test-only op 'Probe': counts its runs, keeps weak references to its inputs, fails on negatives."""
    runs = []
    register_op("Probe", same_as_input(0))

    @kernel("Probe")
    def probe_kernel(node):
        def run(x):
            if np.any(x < 0):
                raise ValueError("the probe saw a negative value")
            runs.append((node.name, weakref.ref(x) if isinstance(x, np.ndarray) else None))
            return x.copy()
        return run

    def build(x, name=None):
        return tf.get_default_graph().create_op("Probe", [tf.convert_to_tensor(x)], None, name).outputs[0]

    yield build, runs
    del _OPS["Probe"]
    del _KERNELS[("Probe", "*")]
