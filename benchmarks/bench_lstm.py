"""LSTM training step: tfnb vs TF1 graph mode and PyTorch eager, on the same weights and data.

Digits as sequences (MNIST's shape): batch 128, 28 time steps of 28 inputs, an LSTM of 128 units
(tf.nn.dynamic_rnn over BasicLSTMCell: one tf.while_loop over time, its gradient a second loop), a dense
layer to 10 classes, softmax cross-entropy, one SGD step. PyTorch runs torch.nn.LSTM with the same weights
(its gates reordered). Each framework runs in a process of its own (benchmarks/isolated.py), taking turns.

Also measures a tf.data input pipeline feeding the digits CNN (tfnb): the time a step spends in
IteratorGetNext, as a share of the step.
"""

from __future__ import annotations

import time

import numpy as np

import tfnb
from benchmarks.harness import optional_tensorflow, report, training_step
from benchmarks.isolated import isolated_medians

BATCH, STEPS, INPUTS, UNITS, CLASSES = 128, 28, 28, 128, 10
LEARNING_RATE = 0.1


def initial_parameters(seed: int = 0) -> list[np.ndarray]:
    """LSTM kernel [inputs + units, 4 units] (gates i, j, f, o), its bias, dense weights and bias; float32."""
    rng = np.random.default_rng(seed)
    kernel = rng.uniform(-0.1, 0.1, (INPUTS + UNITS, 4 * UNITS)).astype(np.float32)
    dense = rng.uniform(-0.1, 0.1, (UNITS, CLASSES)).astype(np.float32)
    return [kernel, np.zeros(4 * UNITS, np.float32), dense, np.zeros(CLASSES, np.float32)]


def batch(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(100 + seed)
    return (rng.uniform(0, 1, (BATCH, STEPS, INPUTS)).astype(np.float32),
            rng.integers(0, CLASSES, BATCH).astype(np.int32))


def build_lstm(lib, params, config=None):
    """The model in tfnb or TF1: (session, x, labels, loss, train_op)."""
    kernel, bias, dense, dense_bias = params
    graph = lib.Graph()
    with graph.as_default():
        x = lib.placeholder(lib.float32, [BATCH, STEPS, INPUTS], name="x")
        labels = lib.placeholder(lib.int32, [BATCH], name="labels")
        cell = lib.nn.rnn_cell.BasicLSTMCell(UNITS)
        outputs, _ = lib.nn.dynamic_rnn(cell, x, dtype=lib.float32)
        logits = lib.matmul(outputs[:, -1], lib.Variable(dense)) + lib.Variable(dense_bias)
        loss = lib.reduce_mean(lib.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train = lib.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        init = lib.global_variables_initializer()
    session = lib.Session(graph=graph, config=config)
    session.run(init)
    cell.weights[0].load(kernel, session)
    cell.weights[1].load(bias, session)
    return session, x, labels, loss, train


def torch_step(params, x_value, label_value):
    """The same step with torch.nn.LSTM, or None if torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    kernel, bias, dense, dense_bias = params
    lstm = torch.nn.LSTM(INPUTS, UNITS, batch_first=True)
    i, j, f, o = np.split(kernel, 4, axis=1)
    b_i, b_j, b_f, b_o = np.split(bias, 4)
    with torch.no_grad():  # torch's gate order is i, f, g, o; TF's forget gate has a bias of 1.0
        gates = np.concatenate([i, f, j, o], axis=1)
        lstm.weight_ih_l0.copy_(torch.tensor(gates[:INPUTS].T))
        lstm.weight_hh_l0.copy_(torch.tensor(gates[INPUTS:].T))
        lstm.bias_ih_l0.copy_(torch.tensor(np.concatenate([b_i, b_f + 1.0, b_j, b_o])))
        lstm.bias_hh_l0.zero_()
    lstm.bias_hh_l0.requires_grad_(False)  # TF has one bias: a second one would learn twice as fast
    w = torch.tensor(dense.T, requires_grad=True)
    b = torch.tensor(dense_bias, requires_grad=True)
    weights = [p for p in lstm.parameters() if p.requires_grad] + [w, b]
    x = torch.tensor(x_value)
    labels = torch.tensor(label_value, dtype=torch.int64)

    def step():
        outputs, _ = lstm(x)
        loss = torch.nn.functional.cross_entropy(torch.nn.functional.linear(outputs[:, -1], w, b), labels)
        for weight in weights:
            weight.grad = None
        loss.backward()
        with torch.no_grad():
            for weight in weights:
                weight -= LEARNING_RATE * weight.grad
        return loss.item()

    return step


def tfnb_contender(config=None):
    """One tfnb training step (a factory for benchmarks.isolated)."""
    return training_step(build_lstm(tfnb, initial_parameters(), config), batch())


def tfnb_one_thread_contender():
    return tfnb_contender(tfnb.ConfigProto(intra_op_parallelism_threads=1))


def tf1_contender():
    tf1 = optional_tensorflow()
    if tf1 is None:
        return None
    return training_step(build_lstm(tf1, initial_parameters()), batch())


def torch_contender():
    return torch_step(initial_parameters(), *batch())


# Rounds of turns, timed calls a turn, seconds of pause before each (benchmarks/isolated.py).
TURNS = {"rounds": 7, "number": 5, "pause": 0.2}
CONTENDERS = {"tfnb dynamic_rnn": "benchmarks.bench_lstm:tfnb_contender",
              "tfnb, intra_op threads 1": "benchmarks.bench_lstm:tfnb_one_thread_contender",
              "tf1 dynamic_rnn": "benchmarks.bench_lstm:tf1_contender",
              "pytorch nn.LSTM": "benchmarks.bench_lstm:torch_contender"}


def check_losses_match(steps: int = 3) -> None:
    """Trains each framework from the same weights on the same batch; prints the losses after `steps` steps."""
    params, (x_value, label_value) = initial_parameters(), batch()
    losses = {}
    tf1 = optional_tensorflow()
    for name, lib in (("tfnb", tfnb), ("tf1", tf1)):
        if lib is None:
            continue
        sess, x, labels, loss, train = build_lstm(lib, params)
        for _ in range(steps):
            value, _ = sess.run([loss, train], {x: x_value, labels: label_value})
        losses[name] = float(value)
    step = torch_step(params, x_value, label_value)
    if step is not None:
        losses["pytorch"] = [step() for _ in range(steps)][-1]
    print(f"  loss at step {steps}: " + ", ".join(f"{n} {v:.6f}" for n, v in losses.items()))


# -- a tf.data pipeline feeding the digits CNN ---------------------------------------------------------------


def input_share(steps: int = 60) -> tuple[float, float]:
    """(median step seconds, median share of a step spent in IteratorGetNext) for the digits CNN fed by
    Dataset.from_tensor_slices(...).shuffle(1000).repeat().batch(64).prefetch(1), measured by traced runs."""
    from tfnb.datasets import load_digits  # noqa: PLC0415 (scikit-learn's digits, loaded only here)

    images, labels = load_digits()
    graph = tfnb.Graph()
    with graph.as_default():
        dataset = tfnb.data.Dataset.from_tensor_slices((images.reshape(-1, 8, 8, 1).astype(np.float32),
                                                        labels.astype(np.int32)))
        x, y = dataset.shuffle(1000, seed=0).repeat().batch(64).prefetch(1).make_one_shot_iterator().get_next()
        h = tfnb.layers.max_pooling2d(tfnb.layers.conv2d(x, 32, 3, padding="same", activation=tfnb.nn.relu), 2, 2)
        h = tfnb.layers.conv2d(h, 64, 3, padding="same", activation=tfnb.nn.relu)
        logits = tfnb.layers.dense(tfnb.layers.flatten(h), 10)
        loss = tfnb.losses.sparse_softmax_cross_entropy(y, logits)
        train = tfnb.train.AdamOptimizer(1e-3).minimize(loss)
        init = tfnb.global_variables_initializer()
    with tfnb.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(5):
            sess.run(train)
        step_times, shares = [], []
        options = tfnb.RunOptions(trace_level=tfnb.RunOptions.FULL_TRACE)
        for _ in range(steps):
            started = time.perf_counter()
            sess.run(train)
            step_times.append(time.perf_counter() - started)
            metadata = tfnb.RunMetadata()
            sess.run(train, options=options, run_metadata=metadata)
            shares.append(_get_next_share(metadata))
    return float(np.median(step_times)), float(np.median(shares))


def _get_next_share(metadata) -> float:
    """The share of a traced step's node time spent in IteratorGetNext."""
    stats = [node for device in metadata.step_stats.dev_stats for node in device.node_stats]
    total = sum(node.all_end_rel_micros for node in stats)
    reading = sum(node.all_end_rel_micros for node in stats if node.node_name.endswith("IteratorGetNext"))
    return reading / total if total else 0.0


def main() -> None:
    medians = isolated_medians(CONTENDERS, **TURNS)
    baseline = "tf1 dynamic_rnn" if "tf1 dynamic_rnn" in medians else "tfnb dynamic_rnn"
    report(f"LSTM training step (dynamic_rnn, batch {BATCH}, {STEPS} steps, {UNITS} units, dense {CLASSES}), SGD; "
           "each in its own process", medians, baseline, 1e-3, "ms", "tfnb ≤ 1.0x tf1")
    check_losses_match()
    step, share = input_share()
    print(f"\ntf.data feeding the digits CNN (shuffle, repeat, batch 64, prefetch): step {step * 1e3:.2f} ms, "
          f"IteratorGetNext {share * 100:.1f} % of the traced step's node time  [target: under 5 %]")


if __name__ == "__main__":
    main()
