"""MLP training step: tfnb vs a hand-written NumPy step with preallocated buffers (and TF1), each contender in a
process of its own (benchmarks/isolated.py), the processes taking turns."""

from __future__ import annotations

import tfnb
from benchmarks.harness import optional_tensorflow, report, training_step
from benchmarks.isolated import isolated_medians
from benchmarks.mlp_numpy import SIZES, NumpyMLP, batch, initial_parameters

LEARNING_RATE = 0.1


def build_mlp(lib, params, batch_size: int = 128):
    """The same MLP in tfnb or TF1: returns (session, x, labels, loss, train_op)."""
    graph = lib.Graph()
    with graph.as_default():
        x = lib.placeholder(lib.float32, [batch_size, SIZES[0]], name="x")
        labels = lib.placeholder(lib.int32, [batch_size], name="labels")
        variables = [lib.Variable(p) for p in params]
        h = x
        for layer in range(3):
            w, b = variables[2 * layer], variables[2 * layer + 1]
            h = lib.matmul(h, w) + b
            if layer < 2:
                h = lib.nn.relu(h)
        loss = lib.reduce_mean(lib.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=h))
        train = lib.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        init = lib.global_variables_initializer()
    session = lib.Session(graph=graph)
    session.run(init)
    return session, x, labels, loss, train


def numpy_contender():
    """One hand-written NumPy step (a factory for benchmarks.isolated)."""
    floor, (x_value, label_value) = NumpyMLP(initial_parameters(), learning_rate=LEARNING_RATE), batch(0)
    return lambda: floor.step(x_value, label_value)


def tfnb_contender():
    return training_step(build_mlp(tfnb, initial_parameters()), batch(0))


def tf1_contender():
    tf1 = optional_tensorflow()
    return None if tf1 is None else training_step(build_mlp(tf1, initial_parameters()), batch(0))


# Rounds of turns, timed calls a turn, seconds of pause before each (benchmarks/isolated.py). The step takes about
# 5 ms and one round's ratio of tfnb to the floor ranged 0.76-1.49x within a run: at one revision, within an hour,
# three runs of 15 rounds read 1.00-1.08x, three of 30 rounds 0.96-0.99x (about 40 s a run, with TF1).
TURNS = {"rounds": 30, "number": 10, "pause": 0.1}
CONTENDERS = {"numpy floor (preallocated)": "benchmarks.bench_mlp:numpy_contender",
              "tfnb Session.run": "benchmarks.bench_mlp:tfnb_contender",
              "tf1 Session.run": "benchmarks.bench_mlp:tf1_contender"}


def main() -> None:
    medians = isolated_medians(CONTENDERS, **TURNS)
    report("MLP 784-512-512-10 training step, batch 128, SGD; each in its own process", medians,
           "numpy floor (preallocated)", 1e-3, "ms", "tfnb ≤ 1.0x numpy floor")
    check_losses_match()


def check_losses_match(steps: int = 50) -> float:
    """Trains both from the same weights and data for `steps` steps; returns |loss difference| at the end."""
    params = initial_parameters()
    floor = NumpyMLP(params, learning_rate=LEARNING_RATE)
    sess, x, labels, loss, train = build_mlp(tfnb, params)
    for step in range(steps):
        x_value, label_value = batch(step)
        numpy_loss = floor.step(x_value, label_value)
        tfnb_loss, _ = sess.run([loss, train], {x: x_value, labels: label_value})
    difference = abs(numpy_loss - float(tfnb_loss))
    print(f"  loss after {steps} steps: numpy {numpy_loss:.6f}, tfnb {float(tfnb_loss):.6f}, |diff| {difference:.2e}"
          "  [target: ≤ 1e-4]")
    return difference


if __name__ == "__main__":
    main()
