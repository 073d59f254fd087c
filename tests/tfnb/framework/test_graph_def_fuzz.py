"""Fuzzing the graph loaders: a mutated GraphDef is refused with TF's error classes, or imports and runs.

Each example mutates the JSON of a real graph (a model trained with Adam, a while loop with a cond, queues
and checks), then parses it, imports it and, if that works, runs it. Parsing and importing may only raise
ValueError (GraphDef's DecodeError is one), TypeError or NotFoundError, as TF's loaders do; a run may only
raise TF's error classes or the ValueError and TypeError of a bad feed. Never RecursionError, KeyError,
SyntaxError or any other Python error, and no example may hang. TFNB_FUZZ_EXAMPLES sets how many (default 300).
"""

import json
import os
from datetime import timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfnb as tf
from tfnb.framework.graph_def import GraphDef
from tfnb.framework.op_registry import registered_ops

EXAMPLES = int(os.environ.get("TFNB_FUZZ_EXAMPLES", "300"))
IMPORT_ERRORS = (ValueError, TypeError, tf.errors.NotFoundError)
RUN_ERRORS = (ValueError, TypeError, tf.errors.OpError)
RUN_DEADLINE = tf.RunOptions(timeout_in_ms=5_000)


def _trained_model():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    hidden = tf.nn.relu(tf.matmul(x, tf.Variable(tf.ones([4, 8]), name="w1")) + tf.Variable(tf.zeros([8]), name="b1"))
    logits = tf.matmul(hidden, tf.Variable(tf.ones([8, 3]) * 0.1, name="w2"))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits), name="loss")
    train = tf.train.AdamOptimizer(0.1).minimize(loss, name="train")
    return [tf.global_variables_initializer(), train, loss]


def _control_flow():
    n = tf.placeholder(tf.int32, [], name="n")
    _, total = tf.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, tf.cond(i > 2, lambda: t + i, lambda: t * 2)),
                             [tf.constant(0), tf.constant(1)])
    return [tf.identity(total, name="total")]


def _queues_and_checks():
    queue = tf.FIFOQueue(4, [tf.float32], shapes=[[2]], name="queue")
    put = queue.enqueue([tf.constant([1.0, 2.0])])
    with tf.control_dependencies([put]):
        value = tf.check_numerics(queue.dequeue(), "queue value")
    checked = tf.debugging.assert_positive(value, message="positive")
    numbers = tf.strings.to_number(tf.constant(["1.5", "2"]))
    with tf.control_dependencies([checked]):
        result = tf.add(value, numbers, name="result")
    return [result, tf.unique(tf.constant([3, 1, 3]), name="unique").y]


def _document(build) -> tuple[str, list[str]]:
    with tf.Graph().as_default() as graph:
        fetches = build()
    return graph.as_graph_def().to_json(), [f.name for f in fetches]


DOCUMENTS = [_document(build) for build in (_trained_model, _control_flow, _queues_and_checks)]
OP_TYPES = sorted(registered_ops())
DTYPE_NAMES = [d.name for d in tf.dtypes.ALL]
NAMES = sorted({node["name"] for text, _ in DOCUMENTS for node in json.loads(text)["node"]}) + ["a\n", "", "x:0"]
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=6), st.sampled_from(["a\n", "x:0", "^x", "float32", "", "/cpu:0", "Enter"])),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(st.text(max_size=5), children,
                                                                               max_size=3)),
    max_leaves=6)


_NEST = "nested deep here"


def _paths(node, path=()):
    yield path
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _paths(child, path + (key,))


def _set(document, path, value):
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


@st.composite
def _leaf(draw, value):
    """Another value of the same JSON type: most mutations keep a document well formed, to reach import and run."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return draw(st.one_of(st.integers(-3, 70_000), st.sampled_from([2**31, -2**63, 2**64])))
    if isinstance(value, float):
        return draw(st.floats(allow_nan=False, allow_infinity=False))
    if isinstance(value, str):
        return draw(st.one_of(st.sampled_from(DTYPE_NAMES + NAMES), st.text(max_size=4)))
    return draw(JSON_VALUES)


@st.composite
def mutated_documents(draw):
    """(JSON text of a mutated graph, names of what to fetch)."""
    text, fetches = draw(st.sampled_from(DOCUMENTS))
    document = json.loads(text)
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(document))[1:]
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(["leaf"] * 4 + ["input"] * 2 + ["value", "delete", "drop", "op", "name", "nest",
                                                                     "duplicate"]))
        nodes = document.get("node") if isinstance(document, dict) else None
        if not isinstance(nodes, list) or not nodes or not all(isinstance(n, dict) and "name" in n for n in nodes):
            break  # an earlier mutation already broke the node list: that document is the case
        if kind == "leaf":
            leaves = [p for p in paths if not isinstance(_get(document, p), dict | list)]
            numbers = [p for p in leaves if type(_get(document, p)) in (int, bool) or p[-1] in ("dims", "name")]
            leaf = draw(st.sampled_from(numbers if numbers and draw(st.booleans()) else leaves))
            _set(document, leaf, draw(_leaf(_get(document, leaf))))
        elif kind == "input":
            node = draw(st.sampled_from(nodes))
            source = draw(st.sampled_from(nodes))["name"]
            ref = draw(st.sampled_from([source, f"{source}:1", f"^{source}"]))
            # A leaf mutation may have made the inputs a string or deleted them.
            inputs = node["input"] if isinstance(node.get("input"), list) else []
            node["input"] = [ref] + inputs[1:] if draw(st.booleans()) else inputs + [ref]
        elif kind == "value":
            _set(document, path, draw(JSON_VALUES))
        elif kind == "delete" and isinstance(_get(document, path[:-1]), dict):
            del _get(document, path[:-1])[path[-1]]
        elif kind == "drop" and len(nodes) > 1:
            nodes.remove(draw(st.sampled_from(nodes)))
        elif kind == "op":
            draw(st.sampled_from(nodes))["op"] = draw(st.one_of(st.sampled_from(OP_TYPES), st.just("NotAnOp")))
        elif kind == "name":
            node = draw(st.sampled_from(nodes))
            node["name"] = node["name"] + draw(st.sampled_from(["\n", " ", "\\", ":1", "/", "_1", "-x"]))
        elif kind == "nest":
            _set(document, path, _NEST)  # written as lists nested thousands deep, once the rest is text
        else:
            nodes.append(dict(draw(st.sampled_from(nodes))))
    depth = draw(st.integers(1, 3000))
    text = json.dumps(document).replace(json.dumps(_NEST), "[" * depth + "1" + "]" * depth)
    if draw(st.integers(0, 9)) == 0:
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(["", "}", "]", "\x00", "\\u0000", "9" * 5000])) + text[cut + 1:]
    return text, fetches


def _get(document, path):
    for key in path:
        document = document[key]
    return document


def _feed(graph) -> dict:
    """A value for every placeholder: its static shape with unknown dims 2, of its dtype."""
    feeds = {}
    for op in graph.get_operations():
        if op.type == "Placeholder":
            tensor = op.outputs[0]
            dims = [2 if d is None else d for d in (tensor.shape.as_tuple() or ())]
            if tensor.dtype not in (tf.string, tf.resource) and int(np.prod(dims)) < 10**6:
                feeds[tensor] = np.ones(dims, tensor.dtype.np_dtype)
    return feeds


@settings(max_examples=EXAMPLES, deadline=timedelta(seconds=60),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_documents())
def test_a_mutated_graph_def_fails_only_with_tf_errors(case):
    text, fetch_names = case
    with tf.Graph().as_default() as graph:
        try:
            tf.import_graph_def(GraphDef.from_json(text), name="")
        except IMPORT_ERRORS:
            assert graph.get_operations() == []  # a failed import leaves the graph as it was
            return
        fetches = [graph.get_operation_by_name(name.partition(":")[0]) for name in fetch_names
                   if name.partition(":")[0] in {op.name for op in graph.get_operations()}]
        with tf.Session() as sess:
            for fetch in fetches:
                try:  # a mutated loop condition may never turn false, as in TF: the deadline ends that run
                    sess.run(fetch, _feed(graph), options=RUN_DEADLINE)
                except RUN_ERRORS:
                    pass
