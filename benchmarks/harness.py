"""Side-by-side timing: contenders run interleaved (A B A B ...) and are compared by their medians."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable


def interleaved_medians(contenders: dict[str, Callable[[], object]], rounds: int = 15,
                        number: int = 20, clock: Callable[[], float] = time.perf_counter,
                        pause: float = 0.0) -> dict[str, float]:
    """Median seconds per call of each contender, measured in alternating rounds (`clock`: wall time, or
    `time.process_time` for this process's CPU time, which other processes on a busy machine disturb less).

    Each round starts with the next contender (A B C, B C A, ...), so that none always follows the same
    one. `pause` seconds pass before each contender's turn: thread pools that spin while idle (OpenMP's,
    OpenBLAS's, TF's) then stop before the next contender starts, so none runs beside another's spin.
    """
    for fn in contenders.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    order = list(contenders.items())
    for round_index in range(rounds):
        shift = round_index % len(order)
        for name, fn in order[shift:] + order[:shift]:
            time.sleep(pause)
            start = clock()
            for _ in range(number):
                fn()
            samples[name].append((clock() - start) / number)
    return {name: statistics.median(times) for name, times in samples.items()}


def report(title: str, medians: dict[str, float], baseline: str, unit: float = 1e-6, unit_name: str = "µs",
           target: str = "") -> None:
    """Prints each contender's median and its ratio to the baseline."""
    print(f"\n{title}" + (f"  [target: {target}]" if target else ""))
    base = medians[baseline]
    for name, seconds in medians.items():
        print(f"  {name:<28} {seconds / unit:10.2f} {unit_name}   {seconds / base:6.2f}x {baseline}")


def training_step(built: tuple, inputs: tuple) -> Callable[[], list]:
    """One training step, `sess.run([loss, train], feeds)`, of a model built as (session, x, labels, loss, train)
    and fed `inputs` (x's and labels' values): what a side-by-side contender times."""
    sess, x, labels, loss, train = built
    feeds = dict(zip((x, labels), inputs))
    return lambda: sess.run([loss, train], feeds)


def optional_tensorflow():
    """TF1 graph mode (tf.compat.v1) if the bench extra is installed, else None.

    TensorFlow 2.16+ serves tf.compat.v1.layers from tf_keras only when TF_USE_LEGACY_KERAS is set
    before its import (the Makefile installs tf_keras). TensorFlow 2.21 turned its oneDNN CPU kernels off by
    default (on from 2.9 through 2.20): they are TF's fastest on x86, so the benchmarks turn them on
    (TF_ENABLE_ONEDNN_OPTS) unless the environment says otherwise. Without them, TF1's AlexNet step at batch 4
    took 653 ms on this project's machine, with them 291 (runs minutes apart).
    """
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    try:
        import tensorflow as tf
    except ImportError:
        return None
    tf.compat.v1.disable_eager_execution()
    return tf.compat.v1


def tensorflow_config_without_rewrites(tf1):
    """A TF1 ConfigProto with Grappler and the classic graph optimizer off (for 'graph rewrites off')."""
    from tensorflow.core.protobuf import rewriter_config_pb2
    rewrites = rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)
    optimizer = tf1.OptimizerOptions(opt_level=tf1.OptimizerOptions.L0)
    return tf1.ConfigProto(graph_options=tf1.GraphOptions(optimizer_options=optimizer, rewrite_options=rewrites))
