"""CNN training step: tfnb vs PyTorch eager and TF1 graph mode, on the same weights and data.

32x32x3 input, batch 64: conv 5x5x32 SAME + ReLU + maxpool 2, conv 5x5x64 SAME + ReLU + maxpool 2,
dense 10, softmax cross-entropy, one SGD step. Each framework runs in a process of its own
(benchmarks/isolated.py), the processes taking turns. Also prints the convolution algorithm tfnb picked.
"""

from __future__ import annotations

import numpy as np

import tfnb
from benchmarks.harness import optional_tensorflow, report, training_step
from benchmarks.isolated import isolated_medians
from tfnb.kernels.conv import chosen_algorithms

BATCH = 64
LEARNING_RATE = 0.01
SHAPES = [(5, 5, 3, 32), (32,), (5, 5, 32, 64), (64,), (8 * 8 * 64, 10), (10,)]


def initial_parameters(seed: int = 0) -> list[np.ndarray]:
    """Weights scaled by 1/sqrt(fan in), biases zero, all float32."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) / np.sqrt(np.prod(s[:-1]))).astype(np.float32) if len(s) > 1
            else np.zeros(s, np.float32) for s in SHAPES]


def batch(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(100 + seed)
    return rng.standard_normal((BATCH, 32, 32, 3)).astype(np.float32), rng.integers(0, 10, BATCH).astype(np.int32)


def build_cnn(lib, params, config=None):
    """The CNN in tfnb or TF1: returns (session, x, labels, loss, train_op)."""
    graph = lib.Graph()
    with graph.as_default():
        x = lib.placeholder(lib.float32, [BATCH, 32, 32, 3], name="x")
        labels = lib.placeholder(lib.int32, [BATCH], name="labels")
        w1, b1, w2, b2, w3, b3 = (lib.Variable(p) for p in params)
        h = x
        for w, b in ((w1, b1), (w2, b2)):
            h = lib.nn.relu(lib.nn.bias_add(lib.nn.conv2d(h, w, [1, 1, 1, 1], "SAME"), b))
            h = lib.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        logits = lib.matmul(lib.reshape(h, [BATCH, -1]), w3) + b3
        loss = lib.reduce_mean(lib.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train = lib.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        init = lib.global_variables_initializer()
    session = lib.Session(graph=graph, config=config)
    session.run(init)
    return session, x, labels, loss, train


def torch_step(params, x_value, label_value):
    """The same step in PyTorch eager (NCHW), or None if torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    functional = torch.nn.functional
    w1, b1, w2, b2, w3, b3 = (torch.tensor(p.transpose(3, 2, 0, 1) if p.ndim == 4 else p.T if p.ndim == 2 else p,
                                           requires_grad=True) for p in params)
    weights = [w1, b1, w2, b2, w3, b3]
    x = torch.tensor(x_value.transpose(0, 3, 1, 2))
    labels = torch.tensor(label_value, dtype=torch.int64)

    def step():
        h = functional.max_pool2d(functional.relu(functional.conv2d(x, w1, b1, padding=2)), 2)
        h = functional.max_pool2d(functional.relu(functional.conv2d(h, w2, b2, padding=2)), 2)
        # NHWC flattening order, so that the dense weights mean the same as in tfnb and TF1.
        loss = functional.cross_entropy(functional.linear(h.permute(0, 2, 3, 1).reshape(BATCH, -1), w3, b3), labels)
        for w in weights:
            w.grad = None
        loss.backward()
        with torch.no_grad():
            for w in weights:
                w -= LEARNING_RATE * w.grad
        return loss.item()

    return step


def tfnb_contender(config=None):
    """One tfnb training step on the benchmark's weights and batch (a factory for benchmarks.isolated)."""
    return training_step(build_cnn(tfnb, initial_parameters(), config), batch())


def tfnb_one_thread_contender():
    return tfnb_contender(tfnb.ConfigProto(intra_op_parallelism_threads=1))


def torch_contender():
    return torch_step(initial_parameters(), *batch())


def tf1_contender():
    tf1 = optional_tensorflow()
    if tf1 is None:
        return None
    return training_step(build_cnn(tf1, initial_parameters()), batch())


# Rounds of turns, timed calls a turn, seconds of pause before each (benchmarks/isolated.py).
TURNS = {"rounds": 9, "number": 10, "pause": 0.2}
CONTENDERS = {"tfnb Session.run": "benchmarks.bench_cnn:tfnb_contender",
              "tfnb, intra_op threads 1": "benchmarks.bench_cnn:tfnb_one_thread_contender",
              "pytorch eager": "benchmarks.bench_cnn:torch_contender",
              "tf1 Session.run": "benchmarks.bench_cnn:tf1_contender"}


def main() -> None:
    # Each framework in a process of its own: in one process their thread pools and libraries disturb each other.
    medians = isolated_medians(CONTENDERS, **TURNS)
    # The target for this model is TF1's C++ kernels: the ratios are to TF1 where it is installed.
    baseline = next(name for name in ("tf1 Session.run", "pytorch eager", "tfnb Session.run") if name in medians)
    report("CNN training step (2 conv 5x5 + pool, dense 10), batch 64, SGD; each in its own process", medians,
           baseline, 1e-3, "ms", "tfnb ≤ 1.0x tf1 Session.run, and below pytorch eager")
    check_losses_match(initial_parameters(), optional_tensorflow())
    for key, name in sorted(chosen_algorithms().items(), key=str):
        print(f"  {key[0]:<16} {str(key[1]):<18} {str(key[2]):<18} -> {name}")


def check_losses_match(params, tf1, steps: int = 5) -> None:
    """Trains each contender from the same weights on the same batch; prints their losses after `steps` steps."""
    x_value, label_value = batch()
    runs = {"tfnb": build_cnn(tfnb, params)}
    if tf1 is not None:
        runs["tf1"] = build_cnn(tf1, params)
    losses = {}
    for name, (sess, x, labels, loss, train) in runs.items():
        for _ in range(steps):
            value, _ = sess.run([loss, train], {x: x_value, labels: label_value})
        losses[name] = float(value)
    step = torch_step(params, x_value, label_value)
    if step is not None:
        losses["pytorch"] = [step() for _ in range(steps)][-1]
    print(f"  loss at step {steps}: " + ", ".join(f"{n} {v:.6f}" for n, v in losses.items()))


if __name__ == "__main__":
    main()
