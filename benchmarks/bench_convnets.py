"""The paper's experiment 1 on this CPU: training steps of AlexNet, Overfeat, OxfordNet and GoogLeNet.

Each model (benchmarks/convnets.py) takes float32 SGD steps on synthetic images at its published image
size, in tfnb, in TF1 (tf.compat.v1) and in PyTorch eager, from the same weights and data; each framework
runs in a process of its own, the processes taking turns (benchmarks/isolated.py). The paper measured
batches of 128 on one GPU; a CPU of a few cores takes seconds per image, so the batch here is small
(BATCH, or --batch). Printed: ms per step in the paper's format with the paper's 2016 rows beside it,
the ratios to TF1 and how noisy the rounds were, each process's resident memory, and first-step losses.

    python -m benchmarks.bench_convnets [--batch 4] [--rounds 7] [--models AlexNet,GoogLeNet] [--save run.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
from dataclasses import asdict, dataclass

import numpy as np

import tfnb
from benchmarks.convnets import MODELS, Model, training_step
from benchmarks.harness import optional_tensorflow
from benchmarks.isolated import isolated_runs

BATCH = 4
ROUNDS = 7
LEARNING_RATE = 0.01

# The paper's Table 1 (OSDI 2016, section 6.1): ms per training step on one GPU, with the public benchmarks'
# batches (128 images; 64 for OxfordNet).
PAPER_MS = {"Caffe": (324, 823, 1068, 1935), "Neon": (87, 211, 320, 270), "Torch": (81, 268, 529, 470),
            "TensorFlow": (81, 279, 540, 445)}
PAPER_MODELS = ("AlexNet", "Overfeat", "OxfordNet", "GoogLeNet")

FRAMEWORKS = {"tfnb": "tfnb_contender", "TF1": "tf1_contender", "PyTorch": "torch_contender"}


def parameter_shapes(model: Model, image_size: int) -> list[tuple]:
    """The shapes of the model's trainable variables, in the order the `tf` model function creates them."""
    with tfnb.Graph().as_default():
        images = tfnb.placeholder(tfnb.float32, [1, image_size, image_size, 3])
        training_step(tfnb, model, images, tfnb.placeholder(tfnb.int32, [1]))
        return [tuple(v.shape.as_list()) for v in tfnb.trainable_variables()]


def initial_parameters(model: Model, image_size: int, seed: int = 0) -> list[np.ndarray]:
    """Normal weights scaled by 1/sqrt(fan in) and zero biases, float32: the logits start small, and SGD
    steps on one batch stay finite (overflowing values would time a different computation)."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s, np.float32) / np.float32(np.sqrt(np.prod(s[:-1])))) if len(s) > 1
            else np.zeros(s, np.float32) for s in parameter_shapes(model, image_size)]


def synthetic_batch(batch: int, image_size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """NHWC float32 images and int32 labels in [0, 1000)."""
    rng = np.random.default_rng(100 + seed)
    images = rng.standard_normal((batch, image_size, image_size, 3), np.float32)
    return images, rng.integers(0, 1000, batch).astype(np.int32)


def graph_session(lib, model: Model, batch: int, image_size: int | None = None, config=None) -> tuple:
    """The model's training step in tfnb or TF1, from the benchmark's weights: (session, [loss, train_op], feeds).

    `image_size` defaults to the model's published one."""
    size = image_size or model.image_size
    graph = lib.Graph()
    with graph.as_default():
        images = lib.placeholder(lib.float32, [batch, size, size, 3], name="images")
        labels = lib.placeholder(lib.int32, [batch], name="labels")
        loss, train = training_step(lib, model, images, labels, LEARNING_RATE)
        variables = lib.trainable_variables()
        init = lib.global_variables_initializer()
    session = lib.Session(graph=graph, config=config)
    with graph.as_default():  # TF2 loads variables of the default graph only
        session.run(init)
        for variable, value in zip(variables, initial_parameters(model, size)):
            variable.load(value, session)
    return session, [loss, train], dict(zip((images, labels), synthetic_batch(batch, size)))


def graph_step(lib, model: Model, batch: int, image_size: int | None = None, config=None):
    """A training step of the model in tfnb or TF1: a callable returning the loss."""
    session, fetches, feeds = graph_session(lib, model, batch, image_size, config)
    return lambda: session.run(fetches, feeds)[0]


def torch_step(model: Model, batch: int, image_size: int | None = None):
    """The same training step in PyTorch eager (benchmarks/convnets_torch.py): a callable returning the loss."""
    import torch

    from benchmarks.convnets_torch import torch_logits, torch_parameters
    size = image_size or model.image_size
    params = torch_parameters(initial_parameters(model, size))
    images, labels = synthetic_batch(batch, size)
    images, labels = torch.tensor(images.transpose(0, 3, 1, 2).copy()), torch.tensor(labels, dtype=torch.int64)

    def step():
        loss = torch.nn.functional.cross_entropy(torch_logits(model, images, params), labels)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LEARNING_RATE * p.grad
        return loss.item()

    return step


def tfnb_contender(model_name: str, batch: str):
    """One tfnb training step (a factory for benchmarks.isolated)."""
    return graph_step(tfnb, MODELS[model_name], int(batch))


def tf1_contender(model_name: str, batch: str):
    """One TF1 training step, or None without TensorFlow."""
    tf1 = optional_tensorflow()
    return None if tf1 is None else graph_step(tf1, MODELS[model_name], int(batch))


def torch_contender(model_name: str, batch: str):
    """One PyTorch eager training step, or None without PyTorch."""
    if importlib.util.find_spec("torch") is None:
        return None
    return torch_step(MODELS[model_name], int(batch))


@dataclass
class Result:
    """One framework's figures for one model: median ms per step and its spread over the rounds (interquartile
    range over median), resident MiB after the first step and at the peak while timed, first-step loss."""

    ms: float
    spread: float
    built_mib: float
    peak_mib: float
    loss: float


def measure(model_name: str, batch: int, rounds: int) -> dict[str, Result]:
    """Each framework's step of one model, timed in its own process, the processes taking turns."""
    factories = {name: f"benchmarks.bench_convnets:{function}:{model_name}:{batch}"
                 for name, function in FRAMEWORKS.items()}
    runs = isolated_runs(factories, rounds=rounds, number=1, pause=0.5)
    return {name: Result(run.median * 1e3, run.spread, run.built_bytes / 2**20, run.peak_bytes / 2**20,
                         run.first_value) for name, run in runs.items()}


def measure_all(models: list[str], batch: int, rounds: int) -> dict:
    """Every model's results, with the run's settings and the machine's load around it (what `--save` writes)."""
    load_before = os.getloadavg()[0]
    results = {name: {framework: asdict(result) for framework, result in measure(name, batch, rounds).items()}
               for name in models}
    return {"batch": batch, "rounds": rounds, "cores": os.cpu_count(),
            "image_sizes": {name: MODELS[name].image_size for name in models},
            "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)], "results": results}


def print_table(run: dict) -> None:
    """ms per step in the paper's format: this run's rows, then the paper's 2016 GPU rows for context."""
    results = run["results"]
    names = [n for n in PAPER_MODELS if n in results]
    sizes = ", ".join(f"{n} {run['image_sizes'][n]}x{run['image_sizes'][n]}" for n in names)
    print(f"Training step, ms (this CPU, {run['cores']} cores, batch {run['batch']}, float32, SGD; images {sizes})")
    print(f"  {'Library':<22}" + "".join(f"{n:>11}" for n in names))
    for framework in FRAMEWORKS:
        print(f"  {framework:<22}" + "".join(f"{_cell(results[n], framework, 'ms'):>11}" for n in names))
    for framework in ("tfnb", "PyTorch"):
        ratios = [_ratio(results[n], framework) for n in names]
        print(f"  {framework + ' / TF1':<22}" + "".join(f"{r:>11}" for r in ratios))
    print("  [target: tfnb ≤ 1.0x TF1 and below PyTorch on every model]")
    spreads = [r["spread"] for by_framework in results.values() for r in by_framework.values()]
    print(f"  noise: rounds' interquartile range {min(spreads):.0%} to {max(spreads):.0%} of their median; "
          f"load average {run['load_average'][0]} before, {run['load_average'][1]} after, {run['rounds']} rounds")
    print("Paper, 2016 (one GPU; batch 128, OxfordNet 64), ms")
    for library, row in PAPER_MS.items():
        print(f"  {library:<22}" + "".join(f"{row[PAPER_MODELS.index(n)]:11d}" for n in names))


def _cell(by_framework: dict, framework: str, field: str) -> str:
    return f"{by_framework[framework][field]:.0f}" if framework in by_framework else "-"


def _ratio(by_framework: dict, framework: str) -> str:
    if framework not in by_framework or "TF1" not in by_framework:
        return "-"
    return f"{by_framework[framework]['ms'] / by_framework['TF1']['ms']:.2f}x"


def print_memory(run: dict) -> None:
    """Each process's resident memory: after the first step, and its peak while timed; and first-step losses."""
    print(f"Resident memory per process, MiB (batch {run['batch']}): after the first step / peak while timed")
    for name, by_framework in run["results"].items():
        cells = "".join(f"  {f} {r['built_mib']:5.0f} / {r['peak_mib']:5.0f}" for f, r in by_framework.items())
        print(f"  {name:<10}{cells}")
    print("First-step losses, same weights and data: " + "; ".join(
        f"{name} " + ", ".join(f"{f} {r['loss']:.4f}" for f, r in fw.items()) for name, fw in run["results"].items()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--models", default=",".join(PAPER_MODELS))
    parser.add_argument("--save", metavar="PATH", help="also write the results as JSON (read by notebook 08)")
    args = parser.parse_args(argv)
    run = measure_all(args.models.split(","), args.batch, args.rounds)
    print()
    print_table(run)
    print_memory(run)
    if args.save:
        pathlib.Path(args.save).write_text(json.dumps(run, indent=1) + "\n")


if __name__ == "__main__":
    main()
