"""Fuzzing checkpoints: every mutated checkpoint restores the saved values exactly or raises a TF error class.

Zero silent wrong values: a restore that succeeds gives exactly what was saved, and one that fails leaves
the variables as they were. TFNB_FUZZ_EXAMPLES sets how many mutations to try (default 300).
"""

import json
import os
import pathlib
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfnb as tf

EXAMPLES = int(os.environ.get("TFNB_FUZZ_EXAMPLES", "300"))
SAVED = {"w": np.arange(24, dtype=np.float32).reshape(4, 6), "b": np.array([1.5, -2.5, 3.5], np.float32),
         "same": np.arange(24, dtype=np.float32).reshape(4, 6)[::-1] * 2, "step": np.array(7, np.int64),
         "mask": np.array([True, False, True])}
FILES = (".safetensors", ".index.json")


@pytest.fixture(scope="module")
def world():
    """A saved checkpoint's files (bytes), and a session with the same variables to restore into."""
    directory = tempfile.mkdtemp()
    graph = tf.Graph()
    with graph.as_default():
        variables = {name: tf.Variable(value, name=name) for name, value in SAVED.items()}
        saver = tf.train.Saver(list(variables.values()))
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, os.path.join(directory, "model.ckpt"), write_meta_graph=False, write_state=False)
        files = {suffix: pathlib.Path(prefix + suffix).read_bytes() for suffix in FILES}
        sentinels = [v.assign(np.full(v.shape.as_list(), 9, v.dtype.np_dtype)) for v in variables.values()]
        reads = {name: v.value() for name, v in variables.items()}
    yield files, sess, saver, reads, sentinels
    sess.close()
    shutil.rmtree(directory)


def _flip(data: bytes, position: int, bit: int) -> bytes:
    position %= max(len(data), 1)
    return data[:position] + bytes([data[position] ^ (1 << bit)]) + data[position + 1:] if data else data


def _json_mutation(data: bytes, draw) -> bytes:
    """The index with one value somewhere in it replaced by another JSON value."""
    record = json.loads(data)
    paths = []

    def walk(node, path):
        paths.append(path)
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            walk(child, path + [key])
    walk(record, [])
    path = draw(st.sampled_from(paths[1:]))
    value = draw(st.one_of(st.integers(-2**64, 2**64), st.text(max_size=8), st.none(), st.booleans(),
                           st.floats(allow_nan=False), st.lists(st.integers(-5, 300), max_size=3)))
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(record).encode()


@st.composite
def mutations(draw):
    """(file suffix, mutated bytes) for one of the checkpoint's files."""
    suffix = draw(st.sampled_from(FILES))
    kind = draw(st.sampled_from(["flip", "truncate", "overwrite", "append", "json"]))
    return suffix, kind, draw(st.integers(0, 2**32)), draw(st.integers(0, 7)), draw(st.binary(min_size=1, max_size=16))


def _mutated(files: dict, mutation, draw_json) -> dict:
    suffix, kind, position, bit, junk = mutation
    data = files[suffix]
    if kind == "flip":
        data = _flip(data, position, bit)
    elif kind == "truncate":
        data = data[:position % len(data)]
    elif kind == "overwrite":
        start = position % len(data)
        data = data[:start] + junk + data[start + len(junk):]
    elif kind == "append":
        data = data + junk
    elif suffix == ".index.json":
        data = _json_mutation(data, draw_json)
    else:
        data = _flip(data, 8 + position % 64, bit)  # the data file's header
    return {**files, suffix: data}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])
@given(mutation=mutations(), data=st.data())
def test_a_mutated_checkpoint_restores_exactly_or_raises_a_tf_error(world, mutation, data):
    files, sess, saver, reads, sentinels = world
    directory = tempfile.mkdtemp()
    try:
        prefix = os.path.join(directory, "model.ckpt")
        for suffix, content in _mutated(files, mutation, data.draw).items():
            pathlib.Path(prefix + suffix).write_bytes(content)
        sess.run(sentinels)
        try:
            saver.restore(sess, prefix)
            restored = True
        except tf.errors.OpError as error:
            assert isinstance(error, tf.errors.DataLossError | tf.errors.OutOfRangeError), error
            restored = False
        values = sess.run(reads)
        for name, saved in SAVED.items():
            expected = saved if restored else np.full(saved.shape, 9, saved.dtype)
            np.testing.assert_array_equal(values[name], expected, err_msg=f"{name} after {mutation}")
        try:
            listed = tf.train.list_variables(prefix)
            assert listed == sorted((name, list(value.shape)) for name, value in SAVED.items())
            np.testing.assert_array_equal(tf.train.load_variable(prefix, "w"), SAVED["w"])
        except (tf.errors.DataLossError, tf.errors.OutOfRangeError):
            pass
    finally:
        shutil.rmtree(directory)
