"""What a live Dashboard costs a training step: an MLP on digits, with and without one, interleaved."""

from __future__ import annotations

import itertools
import statistics
import time

import tfnb as tf
from benchmarks.harness import interleaved_medians, report

BATCH, HIDDEN = 64, 64


def dense(x: tf.Tensor, units: int, name: str) -> tf.Tensor:
    """x @ W + b with Glorot-uniform W and zero b, in variable scope `name`."""
    with tf.variable_scope(name):
        w = tf.get_variable("w", [x.shape[-1], units], initializer=tf.glorot_uniform_initializer(seed=0))
        b = tf.get_variable("b", [units], initializer=tf.zeros_initializer())
    return tf.matmul(x, w) + b


def build_digits_mlp(graph: tf.Graph):
    """An MLP on the digits with Adam and four summaries; returns (session, train fetches, merged, feeds)."""
    images, labels = tf.datasets.load_digits()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 64], name="images")
        y = tf.placeholder(tf.int32, [None], name="labels")
        hidden = tf.nn.relu(dense(x, HIDDEN, "hidden"))
        logits = dense(hidden, 10, "logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y), tf.float32))
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        tf.summary.scalar("loss", loss)
        tf.summary.scalar("accuracy", accuracy)
        tf.summary.histogram("hidden", hidden)
        tf.summary.histogram("logits", logits)
        merged = tf.summary.merge_all()
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    batches = tf.datasets.minibatches((images, labels), BATCH, seed=0, drop_remainder=True)
    feeds = ({x: bx, y: by} for bx, by in batches)
    return sess, [train, loss], merged, feeds


def contenders() -> tuple[dict, float]:
    """Three training loops' step functions (plain, summaries fetched, those plotted live), and the
    seconds the Dashboard spent starting up (its plots, and its resyncs of the first seconds)."""
    from tfnb.visualizer import Dashboard
    from tfnb.visualizer.dashboard import EARLY_RESYNCS

    sess, train, merged, feeds = build_digits_mlp(tf.Graph())
    dashboard = Dashboard()
    step = itertools.count()

    def with_dashboard():
        _, summary = sess.run([train, merged], next(feeds))
        dashboard.add_summary(summary, next(step))

    started = time.process_time()
    while dashboard._resyncs < EARLY_RESYNCS:
        with_dashboard()
    warm_up = time.process_time() - started
    steps = next(step)
    startup = warm_up - steps * _seconds_per_step(lambda: sess.run([train, merged], next(feeds)))
    return {"train step": lambda: sess.run(train, next(feeds)),
            "+ summaries fetched": lambda: sess.run([train, merged], next(feeds)),
            "+ summaries on a Dashboard": with_dashboard}, startup


def _seconds_per_step(fn, steps: int = 300) -> float:
    started = time.process_time()
    for _ in range(steps):
        fn()
    return (time.process_time() - started) / steps


def paired_overhead(without, with_dashboard, rounds: int = 11, number: int = 800) -> float:
    """Median over rounds of (CPU time with / without - 1), the two steps alternating one by one (A B A B ...),
    so that a busy machine slows both alike."""
    ratios = []
    for _ in range(rounds):
        spent = [0.0, 0.0]
        for _ in range(number):
            for arm, fn in enumerate((without, with_dashboard)):
                started = time.process_time()
                fn()
                spent[arm] += time.process_time() - started
        ratios.append(spent[1] / spent[0] - 1)
    return statistics.median(ratios)


def dashboard_overhead() -> tuple[float, dict, float]:
    """(Dashboard overhead on a step with summaries, median step times, startup seconds), all measured
    after the Dashboard's startup, in this process's CPU time (BLAS on one thread, so none is spent idling)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        steps, startup = contenders()
        medians = interleaved_medians(steps, rounds=5, number=500, clock=time.process_time)
        overhead = paired_overhead(steps["+ summaries fetched"], steps["+ summaries on a Dashboard"])
    return overhead, medians, startup


def main() -> None:
    overhead, medians, startup = dashboard_overhead()
    report(f"MLP 64-{HIDDEN}-10 on digits, batch {BATCH}, Adam; 2 scalar + 2 histogram summaries every step",
           medians, "train step", 1e-3, "ms", "a Dashboard adds ≤ 5% to the step with summaries")
    extra = overhead * medians["+ summaries fetched"]
    print(f"  Dashboard overhead: {overhead:+.1%} of a step with summaries ({extra * 1e6:.0f} µs, "
          f"{extra / medians['train step']:+.1%} of a plain step); once at the start: {startup:.2f} s "
          "(creating the plots, resyncing them in the first seconds); CPU time")


if __name__ == "__main__":
    main()
