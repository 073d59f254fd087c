"""TF1 names: uniquified op names, name scopes, collections, graph lookups and which graph a tensor is in."""

from __future__ import annotations

from program_registry import (
    Programs,
    run,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


@program
def operator_op_names(tf):
    x, y = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    m = tf.constant([[1.0]])
    results = [x + y, x - y, x * y, x / y, x // y, x % y, x ** y, -x, abs(x), m @ m, x < y, x <= y, x > y,
               x >= y, 1.0 + x, 2.0 * x, x[0], x[1:], (x < y) & (x > y), (x < y) | (x > y), ~(x < y),
               (x < y) ^ (x > y)]
    return [t.name for t in results]



@program
def function_op_names(tf):
    x = tf.constant([[1.0, 2.0]])
    i = tf.constant([1, 0])
    results = [tf.add(x, x), tf.multiply(x, x), tf.subtract(x, x), tf.divide(x, x), tf.matmul(x, x, transpose_b=True),
               tf.nn.relu(x), tf.nn.softmax(x), tf.sigmoid(x), tf.tanh(x), tf.reduce_sum(x), tf.reduce_mean(x),
               tf.reduce_max(x, 1), tf.argmax(x, 1), tf.reshape(x, [-1]), tf.transpose(x), tf.concat([x, x], 0),
               tf.stack([x, x]), tf.expand_dims(x, 0), tf.squeeze(x), tf.cast(x, tf.int32), tf.ones([2]),
               tf.zeros([2]), tf.fill([2], 1.0), tf.zeros_like(x), tf.ones_like(x), tf.gather(x, [0]),
               tf.one_hot(i, 2), tf.shape(x), tf.size(x), tf.rank(x), tf.range(3), tf.identity(x), tf.tile(x, [1, 2]),
               tf.pad(x, [[0, 0], [1, 1]]), tf.nn.l2_loss(x), tf.nn.bias_add(x, [1.0, 2.0]), tf.square(x),
               tf.clip_by_value(x, 0.0, 1.0), tf.where(x > 1.0), tf.maximum(x, x), tf.exp(x), tf.add_n([x, x]),
               tf.nn.log_softmax(x)]
    return [t.name for t in results]



@program
def composite_op_names(tf):
    logits, labels = tf.constant([[1.0, 2.0]]), tf.constant([[0.0, 1.0]])
    results = [tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1]), logits=logits),
               tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1]), logits=logits, name="loss"),
               tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
               *tf.nn.moments(logits, [0]), tf.nn.l2_normalize(logits, 1), tf.unstack(logits)[0],
               tf.split(logits, 2, 1)[1], tf.nn.embedding_lookup(logits, [0]), tf.reduce_logsumexp(logits),
               tf.nn.dropout(logits, keep_prob=1.0)]
    return [t.name for t in results]



@program(differs="tfnb's softmax cross-entropy is one op named for the function; TF's result is the last of "
                 "several ops ('softmax_cross_entropy_with_logits/Reshape_2')")
def softmax_cross_entropy_op_name(tf):
    return tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.ones([1, 2]), logits=tf.ones([1, 2])).name



@program
def explicit_names_are_made_unique(tf):
    a = tf.constant(1.0, name="c")
    b = tf.constant(2.0, name="c")
    c = tf.add(a, b, name="c")
    d = tf.constant(3.0, name="c_1")
    e = tf.identity(a, name="C")
    return [t.name for t in (a, b, c, d, e, tf.constant(0.0), tf.constant(0.0), tf.placeholder(tf.float32),
                             tf.placeholder(tf.float32, name="x"), tf.Variable(0.0), tf.Variable(0.0))]



@program
def name_scopes(tf):
    with tf.name_scope("outer"):
        a = tf.constant(1.0, name="a")
        with tf.name_scope("inner"):
            b = tf.constant(1.0, name="b")
        with tf.name_scope("inner"):
            c = tf.constant(1.0, name="b")
        with tf.name_scope("inner/"):
            pass
    with tf.name_scope("outer") as scope:
        d = tf.add(a, b)
    with tf.name_scope(scope):
        e = tf.constant(1.0, name="e")
    with tf.name_scope(None, "default", [a]) as default_scope:
        f = tf.constant(1.0)
    with tf.name_scope("outer/inner/"):
        g = tf.constant(1.0, name="g")
    with tf.name_scope(""):
        h = tf.constant(1.0, name="h")
    return [a.name, b.name, c.name, d.name, scope, e.name, default_scope, f.name, g.name, h.name,
            tf.get_default_graph().get_name_scope()]



@program
def variable_names_in_name_scopes(tf):
    with tf.name_scope("ns"):
        v = tf.Variable(1.0)
        w = tf.Variable(1.0, name="w")
        x = v + 1.0
    return [v.name, w.name, v.op.name, x.name]



@program
def invalid_op_name_is_a_value_error(tf):
    return tf.constant(1.0, name="bad name!")



@program
def graph_lookups(tf):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(x, 2.0, name="y")
    graph = tf.get_default_graph()
    same = graph.get_tensor_by_name("y:0") is y and graph.get_operation_by_name("y") is y.op
    return same, y.op.inputs[0] is x, y.op.type, run(tf, "y:0", {"x:0": [1.0, 2.0]})



@program(differs="TF's generated op functions convert Python inputs inside a scope named for the op ('y/y'); "
                 "tfnb names the constant 'Const'")
def python_operands_become_constants_named_for_the_op(tf):
    return tf.multiply(tf.constant(1.0), 3.0, name="y").op.inputs[1].name



@program
def looking_up_a_missing_tensor_is_a_key_error(tf):
    return tf.get_default_graph().get_tensor_by_name("nothing:0")



@program
def looking_up_an_op_by_a_tensor_name_is_a_value_error(tf):
    tf.constant(1.0, name="c")
    return tf.get_default_graph().get_operation_by_name("c:0")



@program
def tensors_of_another_graph_are_a_value_error(tf):
    other = tf.Graph()
    with other.as_default():
        a = tf.constant(1.0)
    return tf.add(a, tf.constant(2.0))



@program
def finalized_graph_is_a_runtime_error(tf):
    graph = tf.get_default_graph()
    tf.constant(1.0)
    graph.finalize()
    return tf.constant(2.0)



@program
def ops_on_variables_in_name_scopes(tf):
    with tf.name_scope("layer"):
        v = tf.Variable([1.0])
        y = v * 2.0
        z = tf.nn.relu(y, name="act")
    return [y.name, z.name, v.initializer.name, tf.global_variables_initializer().name, tf.no_op().name,
            tf.group(v.initializer).name]



@program(differs="tfnb's `+` builds an Add op; TF since 1.15 builds AddV2 (the other types agree)")
def op_types_of_operators(tf):
    x, y = tf.constant([1.0]), tf.constant([2.0])
    return [t.op.type for t in (x + y, x - y, x * y, x / y, x // y, x % y, -x, x < y, tf.matmul([[1.0]], [[2.0]]),
                                tf.reduce_sum(x), tf.cast(x, tf.int32), x[0], tf.reshape(x, []), tf.stack([x, y]))]



@program
def collection_scopes(tf):
    with tf.variable_scope("layer1"):
        tf.get_variable("w", [1])
    with tf.variable_scope("layer2"):
        tf.get_variable("w", [1], trainable=False)
    tf.add_to_collection("mine", tf.constant(1.0, name="c"))
    tf.get_collection_ref("mine").append(tf.constant(2.0, name="d"))
    return ([v.name for v in tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="layer1")],
            [v.name for v in tf.trainable_variables(scope="layer")], [v.name for v in tf.global_variables("layer2")],
            [t.name for t in tf.get_collection("mine")])


@program
def colocate_with_sets_aside_the_device_scope(tf):
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.device("/device:CPU:1"):
        with tf.colocate_with(a):
            b = tf.identity(a, name="b")
            with tf.device("/cpu:0"):
                c = tf.identity(a, name="c")
        d = tf.identity(a, name="d")
    return [op.device for op in (b.op, c.op, d.op)], b.op.colocation_groups()
