"""RNNs beyond the TF1 programs: the loop is the graph's own control flow, both executors agree, and the
contrib names are the same classes."""

import numpy as np

import tfnb as tf

SEQUENCES = np.random.default_rng(0).uniform(-1, 1, (3, 4, 2)).astype(np.float32)


def test_dynamic_rnn_is_one_while_loop_with_tensor_arrays():
    outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), tf.constant(SEQUENCES), dtype=tf.float32)
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert {"Enter", "Merge", "Switch", "NextIteration", "Exit", "LoopCond"} <= set(types)
    assert types.count("LoopCond") == 1
    assert {"TensorArrayV3", "TensorArrayReadV3", "TensorArrayWriteV3", "TensorArrayGatherV3"} <= set(types)
    assert outputs.op.type == "Transpose"


def test_dynamic_rnn_graph_size_does_not_grow_with_the_sequence():
    def op_count(steps: int) -> int:
        with tf.Graph().as_default() as graph:
            tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), tf.zeros([2, steps, 2]), dtype=tf.float32)
            return len(graph.get_operations())
    assert op_count(3) == op_count(30)


def test_static_rnn_unrolls_one_cell_call_per_step():
    def matmuls(steps: int) -> int:
        with tf.Graph().as_default() as graph:
            tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(3), [tf.zeros([2, 2])] * steps, dtype=tf.float32)
            return sum(op.type == "MatMul" for op in graph.get_operations())
    assert (matmuls(2), matmuls(5)) == (2, 5)


def test_generated_code_and_reference_executor_agree_on_a_masked_rnn_and_its_gradient():
    lengths = tf.placeholder(tf.int32, [None])
    outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True), tf.constant(SEQUENCES),
                                       sequence_length=lengths, dtype=tf.float32)
    grads = tf.gradients(tf.reduce_sum(outputs) + tf.reduce_sum(state.c), tf.trainable_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.test.run_both_executors([outputs, state, grads], {lengths: [4, 1, 2]}, sess)


def test_masked_rows_keep_their_state_and_output_zeros():
    lengths = tf.placeholder(tf.int32, [None])
    outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), tf.constant(SEQUENCES), sequence_length=lengths,
                                       dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, last = sess.run([outputs, state], {lengths: [4, 1, 0]})
    assert np.all(out[1, 1:] == 0) and np.all(out[2] == 0)
    np.testing.assert_allclose(last[1], out[1, 0])
    np.testing.assert_array_equal(last[2], np.zeros(3))


def test_training_an_lstm_lowers_its_loss():
    x = tf.constant(SEQUENCES)
    outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(8), x, dtype=tf.float32)
    loss = tf.reduce_mean(tf.square(tf.layers.dense(outputs[:, -1], 1) - 0.5))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(30):
            sess.run(train)
        assert sess.run(loss) < first / 5


def test_cells_share_variables_across_calls_and_report_them():
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(2), tf.nn.rnn_cell.GRUCell(2)])
    tf.nn.dynamic_rnn(cell, tf.constant(SEQUENCES), dtype=tf.float32)
    tf.nn.static_rnn(cell, tf.unstack(tf.constant(SEQUENCES), axis=1), dtype=tf.float32, scope="rnn")
    names = [v.name for v in tf.global_variables()]
    assert names == ["rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0",
                     "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0",
                     "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel:0",
                     "rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias:0",
                     "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel:0",
                     "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias:0"]
    assert len(cell.trainable_weights) == 6


def test_contrib_rnn_names_are_the_cells_and_functions_of_tf_nn():
    assert tf.contrib.rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell
    assert tf.contrib.rnn.static_rnn is tf.nn.static_rnn
    assert tf.contrib.rnn.static_bidirectional_rnn is tf.nn.static_bidirectional_rnn
    assert tf.contrib.rnn.LSTMStateTuple is tf.nn.rnn_cell.LSTMStateTuple
