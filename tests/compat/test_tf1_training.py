"""TF1 training: the steps optimizers take, minimize with a global step, sparse updates."""

from __future__ import annotations

from program_registry import (
    Programs,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


@program
def optimizers_take_the_same_steps(tf):
    results = []
    for make in (lambda: tf.train.GradientDescentOptimizer(0.1), lambda: tf.train.MomentumOptimizer(0.1, 0.9),
                 lambda: tf.train.AdamOptimizer(0.1), lambda: tf.train.AdagradOptimizer(0.1),
                 lambda: tf.train.RMSPropOptimizer(0.1)):
        with tf.Graph().as_default():
            w = tf.Variable([1.0, -2.0])
            loss = tf.reduce_sum(w ** 2 + w)
            step = make().minimize(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(step)
                results.append(sess.run(w))
    return results



@program
def minimize_with_a_global_step(tf):
    w = tf.Variable(2.0)
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.5).minimize(w * w, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        return sess.run([w, step]), step.name



@program
def sparse_update_of_an_embedding_variable(tf):
    table = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    loss = tf.reduce_sum(tf.nn.embedding_lookup(table, [2, 0, 2]) ** 2)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        return sess.run(table)
