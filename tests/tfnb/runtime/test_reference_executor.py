"""The reference executor defines what a plan means: every registry example runs through it and through the
generated code, and the two must agree exactly (same values, dtypes and shapes)."""

import numpy as np
import pytest
from registry_cases import CASES, example_graph, sample

import tfnb as tf
from tfnb.framework.op_registry import registered_ops

FULL_TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
NO_REWRITES = tf.ConfigProto(graph_options=tf.GraphOptions(tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))


def both_paths(graph, fetches, feed_dict):
    """(values from the generated code, values from the reference executor), each in a fresh session.

    Without rewrites, so that every op runs in both (constant folding would compute some before either runs).
    """
    with graph.as_default(), tf.Session(graph=graph, config=NO_REWRITES) as sess:
        generated = sess.run(fetches, feed_dict)
    with graph.as_default(), tf.Session(graph=graph, config=NO_REWRITES) as sess:
        metadata = tf.RunMetadata()
        reference = sess.run(fetches, feed_dict, FULL_TRACE, metadata)
    assert metadata.executor_record.events, "the traced run did not go through the reference executor"
    return generated, reference


def assert_identical(generated, reference, label: str) -> None:
    generated = generated if isinstance(generated, (list, tuple)) else [generated]
    reference = reference if isinstance(reference, (list, tuple)) else [reference]
    assert len(generated) == len(reference), label
    for a, b in zip(generated, reference):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, f"{label}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype == object:
            assert a.tolist() == b.tolist(), label
        else:
            np.testing.assert_array_equal(a, b, err_msg=label)


@pytest.mark.parametrize("op_type,index,example", CASES, ids=[f"{t}-{i}" for t, i, _ in CASES])
def test_generated_code_agrees_with_the_reference_executor(op_type, index, example):
    op_def = registered_ops()[op_type]
    rng = np.random.default_rng(index)
    for dtype in example.dtypes or op_def.dtypes:
        if dtype is tf.resource:
            continue
        values = [sample(spec, dtype, example.low, example.high, rng) for spec in example.inputs]
        graph, inputs, outputs = example_graph(example, dtype, values, True, "/device:CPU:0")
        generated, reference = both_paths(graph, outputs, dict(zip(inputs, values)))
        assert_identical(generated, reference, f"{op_type} example {index} in {dtype.name}")
