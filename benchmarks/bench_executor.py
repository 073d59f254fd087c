"""Executor overhead: long chains of adds, the fixed cost of a run, and fetching many tensors."""

from __future__ import annotations

import numpy as np

import tfnb
from benchmarks.harness import (
    interleaved_medians,
    optional_tensorflow,
    report,
    tensorflow_config_without_rewrites,
)

CHAIN = 1000
NO_REWRITES = tfnb.ConfigProto(
    graph_options=tfnb.GraphOptions(tfnb.OptimizerOptions(opt_level=tfnb.OptimizerOptions.L0)))


def chain_graph(lib, shape, session_kwargs):
    """A chain of CHAIN float32 adds of a fed placeholder, in tfnb or TF1."""
    graph = lib.Graph()
    with graph.as_default():
        x = lib.placeholder(lib.float32, shape)
        y = x
        for _ in range(CHAIN):
            y = y + lib.constant(1.0, lib.float32)
    return lib.Session(graph=graph, **session_kwargs), x, y


def numpy_chain(value, one):
    for _ in range(CHAIN):
        value = np.add(value, one)
    return value


def bench_chain(tf1) -> None:
    for shape in ((), (1000,)):
        value = np.zeros(shape, np.float32)
        one = np.array(1.0, np.float32)  # the graph's constant: a 0-d float32, broadcast against x
        sess, x, y = chain_graph(tfnb, shape, {"config": NO_REWRITES})
        contenders = {"numpy loop": lambda: numpy_chain(value, one),
                      "tfnb Session.run": lambda: sess.run(y, {x: value})}
        if tf1 is not None:
            tf_sess, tf_x, tf_y = chain_graph(tf1, shape, {"config": tensorflow_config_without_rewrites(tf1)})
            contenders["tf1 Session.run"] = lambda: tf_sess.run(tf_y, {tf_x: value})
        medians = interleaved_medians(contenders, rounds=15, number=10)
        report(f"chain of {CHAIN} adds, shape {shape} (per run)", medians, "numpy loop", 1e-3, "ms",
               "tfnb ≤ 1.15x numpy loop")
        per_node = (medians["tfnb Session.run"] - medians["numpy loop"]) / CHAIN * 1e6
        print(f"  tfnb executor overhead per node: {per_node:+.3f} µs")


def one_node_graph(lib):
    graph = lib.Graph()
    with graph.as_default():
        c = lib.constant(1.0)
    return lib.Session(graph=graph), c


def many_fetches_graph(lib, count=100):
    graph = lib.Graph()
    with graph.as_default():
        x = lib.placeholder(lib.float32, [])
        outs = [x + lib.constant(float(i)) for i in range(count)]
    return lib.Session(graph=graph), x, outs


def bench_fixed_costs(tf1) -> None:
    sess, c = one_node_graph(tfnb)
    contenders = {"tfnb": lambda: sess.run(c)}
    if tf1 is not None:
        tf_sess, tf_c = one_node_graph(tf1)
        contenders["tf1"] = lambda: tf_sess.run(tf_c)
    report("fixed cost of Session.run, 1-node graph", interleaved_medians(contenders, 15, 200), "tfnb",
           target="tfnb ≤ 20 µs")
    sess, x, outs = many_fetches_graph(tfnb)
    value = np.float32(2.0)
    contenders = {"tfnb": lambda: sess.run(outs, {x: value})}
    if tf1 is not None:
        tf_sess, tf_x, tf_outs = many_fetches_graph(tf1)
        contenders["tf1"] = lambda: tf_sess.run(tf_outs, {tf_x: value})
    report("one run fetching 100 tensors", interleaved_medians(contenders, 15, 50), "tfnb",
           target="tfnb ≤ 300 µs")


def main() -> None:
    tf1 = optional_tensorflow()
    if tf1 is None:
        print("(TensorFlow not installed: install the bench extra for TF1 figures)")
    bench_chain(tf1)
    bench_fixed_costs(tf1)


if __name__ == "__main__":
    main()
