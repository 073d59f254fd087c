"""Recurrent networks, each run under TensorFlow (tf.compat.v1.nn.rnn_cell, static_rnn, dynamic_rnn) and under
tfnb: the same variable names, shapes, outputs, final states and gradients.

TensorFlow 2.16+ serves the TF1 RNN cells from the `tf_keras` package only when TF_USE_LEGACY_KERAS is set;
without tf_keras these programs skip. Every variable starts from a fixed ramp so that values compare.
"""

from __future__ import annotations

import numpy as np
import pytest
from program_registry import (
    Programs,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)
from program_registry import run as run_in_session

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"), pytest.mark.usefixtures("legacy_cells")]

PROGRAMS = Programs()
program = PROGRAMS.register


@pytest.fixture
def legacy_cells(monkeypatch):
    """TensorFlow's tf.compat.v1.nn.rnn_cell, which it serves from tf_keras when TF_USE_LEGACY_KERAS is set."""
    pytest.importorskip("tf_keras", reason="TensorFlow's tf.compat.v1.nn.rnn_cell needs the tf_keras package")
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "1")


RNG = np.random.RandomState(1)
SEQUENCES = RNG.uniform(-1, 1, (3, 5, 2)).astype(np.float32)  # batch 3, 5 steps, depth 2
LENGTHS = np.array([5, 2, 3], np.int32)


def fixed(tf):
    """An initializer for `tf`'s variable scopes: a fixed value, different per entry (a sine over positions)."""
    return lambda shape, dtype=None, partition_info=None: tf.constant(
        np.sin(np.arange(np.prod(shape)) * 0.7).reshape(shape).astype(np.float32) * 0.5)


def trained(tf, loss):
    """(names of the trainable variables, loss, their gradients) in a new session after initialization."""
    variables = tf.trainable_variables()
    grads = tf.gradients(loss, variables)
    return [v.name for v in variables], run_in_session(tf, [loss, grads], init=True)


# -- cells on one step -------------------------------------------------------------------------------


@program
def basic_rnn_cell_step(tf):
    with tf.variable_scope("step", initializer=fixed(tf)):
        cell = tf.nn.rnn_cell.BasicRNNCell(3)
        x = tf.constant(SEQUENCES[:, 0])
        output, state = cell(x, cell.zero_state(3, tf.float32))
    return cell.state_size, cell.output_size, shapes(output, state), trained(tf, tf.reduce_sum(output * state))


@program
def basic_lstm_cell_step(tf):
    with tf.variable_scope("step", initializer=fixed(tf)):
        cell = tf.nn.rnn_cell.BasicLSTMCell(4, forget_bias=0.5)
        state = cell.zero_state(3, tf.float32)
        output, new_state = cell(tf.constant(SEQUENCES[:, 0]), state)
        output, new_state = cell(tf.constant(SEQUENCES[:, 1]), new_state)
    return (type(new_state).__name__, list(cell.state_size), shapes(output, new_state.c, new_state.h),
            trained(tf, tf.reduce_sum(output) + tf.reduce_sum(new_state.c ** 2)))


@program
def lstm_cell_with_peepholes_clip_and_projection(tf):
    with tf.variable_scope("step", initializer=fixed(tf)):
        cell = tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, cell_clip=0.3, num_proj=2, proj_clip=0.2)
        output, state = cell(tf.constant(SEQUENCES[:, 0]), cell.zero_state(3, tf.float32))
        output, state = cell(tf.constant(SEQUENCES[:, 1]), state)
    return list(cell.state_size), cell.output_size, trained(tf, tf.reduce_sum(output) + tf.reduce_sum(state.c))


@program
def lstm_cell_with_concatenated_state(tf):
    with tf.variable_scope("step", initializer=fixed(tf)):
        cell = tf.nn.rnn_cell.BasicLSTMCell(3, state_is_tuple=False)
        output, state = cell(tf.constant(SEQUENCES[:, 0]), cell.zero_state(3, tf.float32))
    return cell.state_size, shapes(state), trained(tf, tf.reduce_sum(state * 2.0) + tf.reduce_sum(output))


@program
def gru_cell_step(tf):
    with tf.variable_scope("step", initializer=fixed(tf)):
        cell = tf.nn.rnn_cell.GRUCell(3)
        output, state = cell(tf.constant(SEQUENCES[:, 0]), cell.zero_state(3, tf.float32))
        output, state = cell(tf.constant(SEQUENCES[:, 1]), state)
    return trained(tf, tf.reduce_sum(output * output))


@program
def multi_rnn_cell_names_and_state(tf):
    with tf.variable_scope("stack", initializer=fixed(tf)):
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.GRUCell(2)])
        output, state = cell(tf.constant(SEQUENCES[:, 0]), cell.zero_state(3, tf.float32))
    return cell.output_size, shapes(output, state[0].c, state[1]), trained(tf, tf.reduce_sum(output))


@program
def zero_state_with_a_tensor_batch_size(tf):
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    batch = tf.placeholder(tf.int32, [])
    state = cell.zero_state(batch, tf.float32)
    return shapes(state.c, state.h), run_in_session(tf, state.h, {batch: 2})


@program
def dropout_wrapper_keeping_everything_is_the_cell(tf):
    with tf.variable_scope("drop", initializer=fixed(tf)):
        cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(3), input_keep_prob=1.0,
                                             output_keep_prob=1.0)
        output, _ = cell(tf.constant(SEQUENCES[:, 0]), cell.zero_state(3, tf.float32))
    return trained(tf, tf.reduce_sum(output))


@program
def dropout_wrapper_drops_outputs(tf):
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(50), output_keep_prob=0.5)
    output, state = cell(tf.ones([4, 2]), cell.zero_state(4, tf.float32))
    out, st = run_in_session(tf, [output, state], init=True)
    # dropped entries are 0, kept ones are the state doubled; the state itself is not dropped
    return bool(np.all((out == 0) | np.isclose(out, 2 * st))), bool(0.2 < np.mean(out == 0) < 0.8)


# -- static_rnn ----------------------------------------------------------------------------------------


@program
def static_rnn_over_unstacked_steps(tf):
    with tf.variable_scope("model", initializer=fixed(tf)):
        x = tf.constant(SEQUENCES)
        outputs, state = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), tf.unstack(x, 5, 1), dtype=tf.float32)
    return len(outputs), shapes(outputs[-1], state.h), trained(tf, tf.reduce_sum(outputs[-1]) + tf.reduce_sum(
        tf.stack(outputs)))


@program
def static_rnn_with_sequence_length(tf):
    with tf.variable_scope("model", initializer=fixed(tf)):
        outputs, state = tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(3), tf.unstack(tf.constant(SEQUENCES), axis=1),
                                          dtype=tf.float32, sequence_length=tf.constant(LENGTHS))
    return trained(tf, tf.reduce_sum(tf.stack(outputs) ** 2) + tf.reduce_sum(state))


@program
def static_rnn_needs_a_dtype_or_a_state(tf):
    return tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(2), [tf.ones([1, 2])])


@program
def static_bidirectional_rnn_outputs_and_states(tf):
    with tf.variable_scope("model", initializer=fixed(tf)):
        steps = tf.unstack(tf.constant(SEQUENCES), axis=1)
        outputs, fw, bw = tf.nn.static_bidirectional_rnn(
            tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.BasicLSTMCell(2), steps, dtype=tf.float32,
            sequence_length=tf.constant(LENGTHS))
    return shapes(outputs[0], fw.h, bw.h), trained(tf, tf.reduce_sum(tf.stack(outputs) * 3.0) + tf.reduce_sum(bw.c))


# -- dynamic_rnn ---------------------------------------------------------------------------------------


@program
def dynamic_rnn_lstm(tf):
    with tf.variable_scope("model", initializer=fixed(tf)):
        x = tf.placeholder(tf.float32, [None, 5, 2])
        outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), x, dtype=tf.float32)
        loss = tf.reduce_sum(outputs[:, -1] * 2.0) + tf.reduce_sum(state.c)
    variables = tf.trainable_variables()
    fetched = run_in_session(tf, [outputs, state, tf.gradients(loss, variables)], {x: SEQUENCES}, init=True)
    return [v.name for v in variables], shapes(outputs, state.c), fetched


@program
def dynamic_rnn_with_sequence_length(tf):
    with tf.variable_scope("model", initializer=fixed(tf)):
        lengths = tf.placeholder(tf.int32, [None])
        outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), tf.constant(SEQUENCES), sequence_length=lengths,
                                           dtype=tf.float32)
        loss = tf.reduce_sum(outputs ** 2) + tf.reduce_sum(state)
    grads = tf.gradients(loss, tf.trainable_variables() + [outputs])
    return run_in_session(tf, [outputs, state, grads[:-1]], {lengths: LENGTHS}, init=True)


@program
def dynamic_rnn_time_major_multi_cell(tf):
    with tf.variable_scope("model", initializer=fixed(tf)):
        x = tf.constant(SEQUENCES.transpose(1, 0, 2))
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(3), tf.nn.rnn_cell.BasicRNNCell(2)])
        outputs, state = tf.nn.dynamic_rnn(cell, x, time_major=True, dtype=tf.float32)
    return shapes(outputs), trained(tf, tf.reduce_sum(outputs) + tf.reduce_sum(state[0].h))


@program
def dynamic_rnn_from_a_given_state(tf):
    with tf.variable_scope("model", initializer=fixed(tf)):
        cell = tf.nn.rnn_cell.BasicLSTMCell(2)
        start = tf.nn.rnn_cell.LSTMStateTuple(tf.fill([3, 2], 0.5), tf.fill([3, 2], -0.25))
        outputs, state = tf.nn.dynamic_rnn(cell, tf.constant(SEQUENCES), initial_state=start)
    return trained(tf, tf.reduce_sum(outputs) - tf.reduce_sum(state.c))


@program
def bidirectional_dynamic_rnn_names_and_values(tf):
    with tf.variable_scope("model", initializer=fixed(tf)):
        (fw, bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
            tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.GRUCell(2), tf.constant(SEQUENCES),
            sequence_length=tf.constant(LENGTHS), dtype=tf.float32)
    return shapes(fw, bw), trained(tf, tf.reduce_sum(tf.concat([fw, bw], 2) ** 2) + tf.reduce_sum(state_bw))


@program
def reverse_sequence_values_and_gradient(tf):
    x = tf.constant(SEQUENCES)
    y = tf.reverse_sequence(x, LENGTHS, seq_axis=1, batch_axis=0)
    return run_in_session(tf, [y, tf.gradients(tf.reduce_sum(y * x), x)[0]])


@program
def reusing_rnn_variables_by_scope(tf):
    x = tf.constant(SEQUENCES)
    with tf.variable_scope("shared"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(2), x, dtype=tf.float32)
    with tf.variable_scope("shared", reuse=True):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(2), x, dtype=tf.float32)
    return [v.name for v in tf.global_variables()]
