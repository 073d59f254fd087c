"""TF1's error contract for common mistakes: feeds, fetches, lookups, static shapes, variables, imports,
gradients, checkpoints, and the debugging ops (check_numerics, Assert, the assert_* family, to_number, unique)."""

from __future__ import annotations

import contextlib
import os
import tempfile

import numpy as np
from program_registry import (
    Programs,
    run,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


def _feed(tf, value, dtype="float32", shape=(None, 3)):
    x = tf.placeholder(getattr(tf, dtype), shape)
    return run(tf, x, {x: value})


# -- feeds -----------------------------------------------------------------------------------------------


@program
def feed_of_the_wrong_shape(tf):
    return _feed(tf, [1.0, 2.0, 3.0])


@program
def feed_of_strings_to_a_float(tf):
    return _feed(tf, [["a", "b", "c"]])


@program
def feed_of_numeric_strings_parses_them(tf):
    return _feed(tf, [["1.5", "2", "-3"]])


@program
def feed_of_none(tf):
    return _feed(tf, None)


@program
def feed_of_none_to_an_int(tf):
    return _feed(tf, None, "int32", ())


@program
def feed_of_a_tensor(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    return run(tf, x, {x: tf.ones([1, 3])})


@program
def feed_of_a_python_int_that_overflows_int32(tf):
    return _feed(tf, 2**40, "int32", ())


@program
def feed_of_a_python_int_that_overflows_uint8(tf):
    return _feed(tf, 300, "uint8", ())


@program
def feed_of_a_ragged_list(tf):
    return _feed(tf, [[1.0, 2.0, 3.0], [1.0]])


@program
def feed_of_a_dict(tf):
    return _feed(tf, {"a": 1})


@program
def feed_of_an_operation(tf):
    return _feed(tf, tf.no_op(), "float32", ())


@program
def feed_key_that_names_no_tensor(tf):
    x = tf.placeholder(tf.float32, [])
    return run(tf, x, {"nope:0": 1.0})


@program
def feed_key_that_is_an_op_name(tf):
    x = tf.placeholder(tf.float32, [], name="x")
    return run(tf, x, {"x": 1.0})


@program
def feeds_that_fit_still_run(tf):
    return _feed(tf, np.ones((2, 3), np.float32)), _feed(tf, [2**31 - 1], "int32", (1,)), _feed(tf, [[True, False, 1]])


# -- fetches and lookups -----------------------------------------------------------------------------------


@program
def fetch_of_a_missing_name(tf):
    tf.constant(1)
    return run(tf, "nope:0")


@program
def fetch_of_none(tf):
    tf.constant(1)
    return run(tf, None)


@program
def fetch_of_an_output_past_the_last(tf):
    tf.constant(1, name="c")
    return run(tf, "c:4")


@program
def fetch_from_another_graph(tf):
    with tf.Graph().as_default():
        other = tf.constant(2)
    tf.constant(1)
    return run(tf, other)


@program
def get_tensor_by_name_of_a_missing_tensor(tf):
    return tf.get_default_graph().get_tensor_by_name("nope:0")


@program
def get_tensor_by_name_of_an_op_name(tf):
    tf.constant(1, name="c")
    return tf.get_default_graph().get_tensor_by_name("c")


@program
def get_operation_by_name_of_a_missing_op(tf):
    return tf.get_default_graph().get_operation_by_name("nope")


@program
def get_operation_by_name_of_a_tensor_name(tf):
    tf.constant(1, name="c")
    return tf.get_default_graph().get_operation_by_name("c:0")


@program
def missing_names_are_key_errors_that_name_them(tf):
    graph = tf.get_default_graph()
    messages = []
    for lookup, name in ((graph.get_tensor_by_name, "ghost:0"), (graph.get_operation_by_name, "ghost")):
        try:
            lookup(name)
        except KeyError as error:
            messages.append("ghost" in str(error))
    return messages


# -- static shapes and dtypes --------------------------------------------------------------------------------


def _static_error(build) -> tuple:
    """The class of a static shape error and whether its message names the op and its inputs' shapes."""
    try:
        build()
    except ValueError as error:
        text = str(error)
        return type(error).__name__, "with input shapes:" in text and "{{node " in text
    return None


@program
def matmul_of_mismatched_shapes(tf):
    return _static_error(lambda: tf.matmul(tf.ones([2, 3]), tf.ones([4, 5])))


@program
def reshape_to_another_size(tf):
    return _static_error(lambda: tf.reshape(tf.ones([2, 3]), [4, 5]))


@program
def concat_of_mismatched_shapes(tf):
    return _static_error(lambda: tf.concat([tf.ones([2, 3]), tf.ones([4, 5])], 0))


@program
def add_that_cannot_broadcast(tf):
    return _static_error(lambda: tf.ones([2, 3]) + tf.ones([4, 5]))


@program
def conv2d_with_the_wrong_filter_depth(tf):
    return _static_error(lambda: tf.nn.conv2d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 4, 8]), [1, 1, 1, 1], "SAME"))


@program
def assign_of_another_shape(tf):
    return _static_error(lambda: tf.Variable(tf.ones([2, 3])).assign(tf.ones([4, 5])))


@program
def matmul_of_mixed_dtypes(tf):
    return tf.matmul(tf.ones([2, 2]), tf.ones([2, 2], tf.int32))


@program
def reduce_over_a_missing_axis(tf):
    return tf.reduce_sum(tf.ones([2, 3]), axis=5)


# -- variables -----------------------------------------------------------------------------------------------


@program
def reading_an_uninitialized_variable(tf):
    return run(tf, tf.Variable(1.0))


@program
def a_variable_without_an_initial_value(tf):
    return tf.Variable()


@program
def get_variable_twice(tf):
    tf.get_variable("v", [1])
    return tf.get_variable("v", [1])


@program
def assign_of_another_dtype(tf):
    return tf.Variable(1.0).assign(tf.constant(1))


# -- graph documents -------------------------------------------------------------------------------------------


def _node_graph_def(tf, name: str, op: str, inputs=(), attrs=None):
    """A GraphDef holding one node, built through each library's own GraphDef type."""
    with tf.Graph().as_default() as graph:
        tf.constant(1.0, name="c")
    graph_def = graph.as_graph_def()
    if hasattr(graph_def.node, "add"):  # TF's protocol buffer
        node = graph_def.node.add()
        node.name, node.op = name, op
        node.input.extend(inputs)
        for key, value in (attrs or {}).items():
            node.attr[key].type = value.as_datatype_enum
    else:
        graph_def.node.append({"name": name, "op": op, "input": list(inputs), "device": "", "attr": {
            key: {"type": "dtype", "name": value.name} for key, value in (attrs or {}).items()}})
    return graph_def


@program
def import_of_an_unknown_op_type(tf):
    return tf.import_graph_def(_node_graph_def(tf, "a", "FooBarBaz"), name="")


@program
def import_of_a_node_missing_its_attrs(tf):
    return tf.import_graph_def(_node_graph_def(tf, "a", "Placeholder"), name="")


@program
def import_of_an_input_that_does_not_exist(tf):
    return tf.import_graph_def(_node_graph_def(tf, "a", "Identity", ["zz"], {"T": tf.float32}), name="")


@program
def import_of_a_name_with_a_newline(tf):
    return tf.import_graph_def(_node_graph_def(tf, "a\n", "NoOp"), name="")


@program
def a_failed_import_leaves_the_graph_unchanged(tf):
    tf.constant(1.0, name="kept")
    with contextlib.suppress(Exception):  # the class is compared by other programs
        tf.import_graph_def(_node_graph_def(tf, "a", "FooBarBaz"))
    return [op.name for op in tf.get_default_graph().get_operations()]


@program
def parsing_garbage_as_a_graph_def(tf):
    return tf.GraphDef().ParseFromString(b"\xff\xfe garbage \x00\x01 }{")


@program
def import_meta_graph_of_a_missing_file(tf):
    return tf.train.import_meta_graph(os.path.join(tempfile.gettempdir(), "no-such-dir", "missing.meta"))


# -- gradients ----------------------------------------------------------------------------------------------------


@program
def gradients_with_xs_from_another_graph(tf):
    with tf.Graph().as_default():
        x = tf.constant(1.0)
    return tf.gradients(tf.constant(2.0) * 3, x)


@program
def gradients_with_ys_from_another_graph(tf):
    with tf.Graph().as_default():
        y = tf.constant(1.0) * 2
    return tf.gradients(y, tf.constant(2.0))


# -- checkpoints --------------------------------------------------------------------------------------------------


def _saved_checkpoint(tf, directory: str) -> str:
    v = tf.Variable(np.arange(4.0, dtype=np.float32), name="v")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return tf.train.Saver([v]).save(sess, os.path.join(directory, "model.ckpt"))


def _data_file(directory: str) -> str:
    return next(os.path.join(directory, f) for f in sorted(os.listdir(directory))
                if f.startswith("model.ckpt.") and (f.endswith(".safetensors") or ".data-" in f))


@program
def restoring_a_truncated_checkpoint(tf):
    with tempfile.TemporaryDirectory() as directory:
        path = _saved_checkpoint(tf, directory)
        data = _data_file(directory)
        with open(data, "r+b") as f:
            f.truncate(os.path.getsize(data) - 4)
        with tf.Session() as sess:
            return tf.train.Saver().restore(sess, path)


@program
def saving_into_one_missing_directory_creates_it(tf):
    with tempfile.TemporaryDirectory() as directory:
        path = _saved_checkpoint(tf, os.path.join(directory, "new"))
        return os.path.basename(path), tf.train.list_variables(path)


@program
def saving_into_two_missing_directory_levels(tf):
    with tempfile.TemporaryDirectory() as directory:
        return _saved_checkpoint(tf, os.path.join(directory, "a", "b"))


@program
def load_variable_of_a_missing_key(tf):
    with tempfile.TemporaryDirectory() as directory:
        return tf.train.load_variable(_saved_checkpoint(tf, directory), "nope")


@program
def restoring_variables_the_checkpoint_lacks(tf):
    with tempfile.TemporaryDirectory() as directory:
        path = _saved_checkpoint(tf, directory)
        with tf.Graph().as_default():
            tf.Variable(1.0, name="other")
            with tf.Session() as sess:
                return tf.train.Saver().restore(sess, path)


# -- the debugging ops ------------------------------------------------------------------------------------------


@program
def check_numerics_of_a_nan(tf):
    return run(tf, tf.check_numerics(tf.constant([1.0, np.nan]), "my message"))


@program
def check_numerics_passes_finite_values_on(tf):
    return run(tf, tf.debugging.check_numerics(tf.constant([1.0, 2.0]), "fine") * 2)


@program
def check_numerics_of_an_integer_tensor(tf):
    return tf.check_numerics(tf.constant([1]), "ints")


def _message_of(tf, fetch, feed_dict=None) -> tuple:
    """(error class name, whether the user's message is in it, then the value a second run gives)."""
    with tf.Session() as sess:
        try:
            sess.run(fetch, feed_dict)
        except tf.errors.OpError as error:
            return type(error).__name__, "user message" in error.message
    return None


@program
def check_numerics_message_and_session_stays_usable(tf):
    x = tf.placeholder(tf.float32, [2])
    y = tf.check_numerics(x, "user message") * 2
    with tf.Session() as sess:
        try:
            sess.run(y, {x: [np.inf, 1.0]})
        except tf.errors.InvalidArgumentError as error:
            failed = "user message" in error.message and "Inf" in error.message
        return failed, sess.run(y, {x: [1.0, 2.0]})


@program
def assert_equal_at_run_time(tf):
    x = tf.placeholder(tf.int32, [2])
    return _message_of(tf, tf.debugging.assert_equal(x, [1, 3], message="user message"), {x: [1, 2]})


@program
def assert_equal_known_while_building(tf):
    return tf.assert_equal(tf.constant([1, 2]), [1, 3], message="user message")


@program
def assert_equal_that_holds(tf):
    return run(tf, tf.assert_equal(tf.constant([1, 2]), [1, 2]))


@program
def assert_positive_and_negative(tf):
    x = tf.placeholder(tf.float32, [2])
    results = []
    for check in (tf.assert_positive, tf.assert_negative, tf.assert_non_negative, tf.assert_non_positive):
        results.append(_message_of(tf, check(x, message="user message"), {x: [1.0, -2.0]}))
    return results


@program
def assert_less_and_greater(tf):
    x = tf.placeholder(tf.int32, [2])
    checks = (tf.assert_less, tf.assert_less_equal, tf.assert_greater, tf.assert_greater_equal, tf.assert_none_equal)
    return [_message_of(tf, check(x, [1, 1], message="user message"), {x: [1, 2]}) for check in checks]


@program
def assert_rank_known_while_building(tf):
    return tf.assert_rank(tf.constant([1, 2]), 2)


@program
def assert_rank_at_run_time(tf):
    x = tf.placeholder(tf.float32)
    return _message_of(tf, tf.assert_rank(x, 2, message="user message"), {x: [1.0]})


@program
def assert_type_and_integer(tf):
    results = []
    for check in (lambda: tf.assert_type(tf.constant([1]), tf.float32), lambda: tf.assert_integer(tf.constant(1.0)),
                  lambda: tf.assert_scalar(tf.constant([1.0]))):
        try:
            check()
        except (TypeError, ValueError) as error:
            results.append(type(error).__name__)
    return results


@program
def tf_assert_with_data(tf):
    x = tf.placeholder(tf.float32, [3])
    check = tf.Assert(tf.reduce_all(x > 0), ["user message", x], summarize=2)
    return _message_of(tf, check, {x: [1.0, -1.0, 2.0]})


@program
def tf_assert_with_an_int_condition(tf):
    return tf.Assert(tf.constant(1), ["x"])


@program
def strings_to_number(tf):
    return run(tf, [tf.strings.to_number(tf.constant([" 1.5", "1e3", "-Inf", "0x10"])),
                    tf.strings.to_number(tf.constant(["7", "-007"]), out_type=tf.int32),
                    tf.string_to_number(tf.constant(["9223372036854775807"]), out_type=tf.int64)])


@program
def strings_to_number_of_a_word(tf):
    return run(tf, tf.strings.to_number(tf.constant(["1.5", "x"])))


@program
def strings_to_number_of_an_int32_overflow(tf):
    return run(tf, tf.strings.to_number(tf.constant(["2147483648"]), out_type=tf.int32))


@program
def strings_to_number_of_a_fraction_as_int(tf):
    return run(tf, tf.strings.to_number(tf.constant(["7.0"]), out_type=tf.int32))


@program
def unique_in_order_of_first_appearance(tf):
    y, idx = tf.unique(tf.constant([3, 1, 3, 2, 1]))
    words = tf.unique(tf.constant(["b", "a", "b"]), out_idx=tf.int64)
    return run(tf, [y, idx, words.y, words.idx]), y.shape.as_list(), idx.shape.as_list()


@program
def unique_of_a_matrix(tf):
    return tf.unique(tf.constant([[1, 2]]))
