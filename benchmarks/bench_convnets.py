"""The paper's experiment 1: training steps of AlexNet, Overfeat, OxfordNet and GoogLeNet, on this CPU or a GPU.

Each model (benchmarks/convnets.py) takes float32 SGD steps on synthetic images at its published image
size, in tfnb, in TF1 (tf.compat.v1) and in PyTorch eager, from the same weights and data; each framework
runs in a process of its own, the processes taking turns (benchmarks/isolated.py), each turn timing a step
of a training loop (its first step, after the pause, untimed). The paper measured
batches of 128 (64 for OxfordNet) on one GPU; a CPU of a few cores takes seconds per image, so the batch on
the CPU is small (BATCH, or --batch). With `--device gpu` the models run at the paper's batches on the first
CUDA device, tfnb's kernels in CuPy against PyTorch's on the same GPU (the bench extra's TF1 is
tensorflow-cpu), the synthetic batch kept on the GPU as the paper's benchmarks kept it. Printed: ms per step
(medians over the rounds) in the paper's format with the paper's 2016 rows beside it, tfnb's ratios to the
others, how noisy the rounds were, on the CPU each process's peak resident memory per model, and first-step
losses (equal when the frameworks compute the same step). `--breakdown` prints instead where tfnb's step of
each model spends its time, by op type, from timed steps (on a GPU each line waits for the device).

    python -m benchmarks.bench_convnets [--device gpu] [--batch 4] [--rounds 7] [--models AlexNet,GoogLeNet]
                                        [--image-size 96] [--save run.json | --load run.json | --breakdown]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
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
from tfnb.runtime.devices import gpu_count

BATCH = 4
ROUNDS = 7
# A turn (benchmarks/isolated.py): a pause, then steps in a training loop, where the first step, right after the
# pause, is not timed. On this 2-core VM a step after 0.5 s idle took 1.2x a step in a loop for tfnb's AlexNet (its
# second thread's core wakes slowly), 1.02x for TF1's.
TURNS = {"number": 1, "pause": 0.5, "warmup": 1}
LEARNING_RATE = 0.01

# The paper's Table 1 (OSDI 2016, section 6.1): ms per training step on one GPU, with the public benchmarks'
# batches (128 images; 64 for OxfordNet).
PAPER_MS = {"Caffe": (324, 823, 1068, 1935), "Neon": (87, 211, 320, 270), "Torch": (81, 268, 529, 470),
            "TensorFlow": (81, 279, 540, 445)}
PAPER_MODELS = ("AlexNet", "Overfeat", "OxfordNet", "GoogLeNet")
PAPER_BATCHES = {"AlexNet": 128, "Overfeat": 128, "OxfordNet": 64, "GoogLeNet": 128}

# The contenders on each device: on a GPU, TF1 is missing (the bench extra installs tensorflow-cpu).
FRAMEWORKS = {"tfnb": "tfnb_contender", "TF1": "tf1_contender", "PyTorch": "torch_contender"}
GPU_FRAMEWORKS = {"tfnb": "tfnb_gpu_contender", "PyTorch": "torch_gpu_contender"}
GPU = "/device:GPU:0"


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


def graph_session(lib, model: Model, batch: int, image_size: int | None = None, config=None,
                  device: str | None = None) -> tuple:
    """The model's training step in tfnb or TF1, from the benchmark's weights: (session, [loss, train_op], feeds).

    `image_size` defaults to the model's published one. On a `device`, the model's ops and variables are
    placed there, and the synthetic batch is two variables there, loaded once: a step feeds nothing."""
    size = image_size or model.image_size
    images_value, labels_value = synthetic_batch(batch, size)
    graph = lib.Graph()
    with graph.as_default(), (lib.device(device) if device else contextlib.nullcontext()):
        if device:
            images = lib.Variable(lib.zeros(images_value.shape), trainable=False, name="images")
            labels = lib.Variable(lib.zeros(labels_value.shape, lib.int32), trainable=False, name="labels")
        else:
            images = lib.placeholder(lib.float32, images_value.shape, name="images")
            labels = lib.placeholder(lib.int32, labels_value.shape, name="labels")
        loss, train = training_step(lib, model, images, labels, LEARNING_RATE)
        variables = lib.trainable_variables()
        init = lib.global_variables_initializer()
    session = lib.Session(graph=graph, config=config)
    with graph.as_default():  # TF2 loads variables of the default graph only
        session.run(init)
        for variable, value in zip(variables, initial_parameters(model, size)):
            variable.load(value, session)
        if device:
            images.load(images_value, session)
            labels.load(labels_value, session)
    return session, [loss, train], {} if device else {images: images_value, labels: labels_value}


def graph_step(lib, model: Model, batch: int, image_size: int | None = None, config=None,
               device: str | None = None):
    """A training step of the model in tfnb or TF1 (on `device`, see graph_session): a callable returning the loss.

    Fetching the loss copies it to the host after the step's updates were queued, so on a GPU a step's call
    returns when the device has finished the step."""
    session, fetches, feeds = graph_session(lib, model, batch, image_size, config, device)
    return lambda: session.run(fetches, feeds)[0]


def torch_step(model: Model, batch: int, image_size: int | None = None, device: str = "cpu"):
    """The same training step in PyTorch eager (benchmarks/convnets_torch.py) on `device`: a callable returning
    the loss (`.item()` waits for the device to finish the step)."""
    import torch

    from benchmarks.convnets_torch import torch_logits, torch_parameters
    size = image_size or model.image_size
    params = torch_parameters(initial_parameters(model, size), device)
    images, labels = synthetic_batch(batch, size)
    images = torch.tensor(images.transpose(0, 3, 1, 2).copy(), device=device)
    labels = torch.tensor(labels, dtype=torch.int64, device=device)

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


def tfnb_contender(model_name: str, batch: str, image_size: str = ""):
    """One tfnb training step (a factory for benchmarks.isolated; `image_size` "" is the published one)."""
    return graph_step(tfnb, MODELS[model_name], int(batch), int(image_size or 0))


def tf1_contender(model_name: str, batch: str, image_size: str = ""):
    """One TF1 training step, or None without TensorFlow."""
    tf1 = optional_tensorflow()
    return None if tf1 is None else graph_step(tf1, MODELS[model_name], int(batch), int(image_size or 0))


def torch_contender(model_name: str, batch: str, image_size: str = ""):
    """One PyTorch eager training step, or None without PyTorch."""
    if importlib.util.find_spec("torch") is None:
        return None
    return torch_step(MODELS[model_name], int(batch), int(image_size or 0))


def tfnb_gpu_contender(model_name: str, batch: str, image_size: str = ""):
    """One tfnb training step on the first GPU (CuPy kernels), or None without one."""
    if gpu_count() == 0:
        return None
    return graph_step(tfnb, MODELS[model_name], int(batch), int(image_size or 0), device=GPU)


def torch_gpu_contender(model_name: str, batch: str, image_size: str = ""):
    """One PyTorch eager training step on the first CUDA device, or None without PyTorch or a CUDA device.

    Its convolutions compute in float32, as the paper's and tfnb's do: PyTorch lets cuDNN round their inputs to
    TF32 by default, which is not the same arithmetic."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch
    if not torch.cuda.is_available():
        return None
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    return torch_step(MODELS[model_name], int(batch), int(image_size or 0), device="cuda")


@dataclass
class Result:
    """One framework's figures for one model: median ms per step and its spread over the rounds (interquartile
    range over median), resident MiB after the first step and at the peak while timed, first-step loss."""

    ms: float
    spread: float
    built_mib: float
    peak_mib: float
    loss: float


def contender_spec(function: str, model_name: str, batch: int, image_size: int | None = None) -> str:
    """The benchmarks.isolated factory of one framework's step of a model (`function`: a value of FRAMEWORKS)."""
    return f"benchmarks.bench_convnets:{function}:{model_name}:{batch}:{image_size or ''}"


def measure(model_name: str, batch: int, rounds: int, image_size: int | None = None,
            device: str = "cpu") -> dict[str, Result]:
    """Each installed framework's step of one model on `device` ("cpu" or "gpu"), timed in its own process,
    the processes taking turns."""
    frameworks = GPU_FRAMEWORKS if device == "gpu" else FRAMEWORKS
    factories = {name: contender_spec(function, model_name, batch, image_size) for name, function in frameworks.items()}
    runs = isolated_runs(factories, rounds=rounds, **TURNS)
    return {name: Result(run.median * 1e3, run.spread, run.built_bytes / 2**20, run.peak_bytes / 2**20,
                         run.first_value) for name, run in runs.items()}


def measure_all(models: list[str], batch: int | None, rounds: int, image_size: int | None = None,
                device: str = "cpu") -> dict:
    """Every model's results, with the run's settings and the machine's load around it (what `--save` writes).

    `batch` None times each model at the paper's batch, `image_size` None at its published size."""
    load_before = os.getloadavg()[0]
    batches = {name: batch or PAPER_BATCHES[name] for name in models}
    results = {name: {framework: asdict(result)
                      for framework, result in measure(name, batches[name], rounds, image_size, device).items()}
               for name in models}
    return {"batches": batches, "rounds": rounds, "cores": os.cpu_count(), "device": _device_name(device),
            "frameworks": list(GPU_FRAMEWORKS if device == "gpu" else FRAMEWORKS),
            "image_sizes": {name: image_size or MODELS[name].image_size for name in models},
            "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)], "results": results}


def step_breakdown(model_name: str, batch: int, image_size: int | None = None, device: str = "cpu",
                   steps: int = 3) -> list[tuple[str, float, int, float]]:
    """Where tfnb's training step of a model spends its time: (op type, ms, lines, cores busy) per op type of the
    executed plan, most time first. A line's time is its fastest over `steps` timed steps
    (RunOptions.SOFTWARE_TRACE: on a GPU each timed line waits for the device), after an untimed step that picks
    the convolution algorithms; a fused line counts under its fused type (`Conv2D+BiasAdd+Relu`). Cores busy: the
    process's CPU time over the wall time of those runs of the lines (on a GPU, the host's cores)."""
    session, fetches, feeds = graph_session(tfnb, MODELS[model_name], batch, image_size,
                                            device=GPU if device == "gpu" else None)
    with session:
        session.run(fetches, feeds)
        fastest: dict[tuple[str, str], tuple[float, float]] = {}  # line -> (wall, cpu) micros of its fastest run
        for _ in range(steps):
            metadata = tfnb.RunMetadata()
            session.run(fetches, feeds, options=tfnb.RunOptions(trace_level=tfnb.RunOptions.SOFTWARE_TRACE),
                        run_metadata=metadata)
            for stats in metadata.node_stats():
                line = (stats.node_name, stats.op_type)
                if stats.all_end_rel_micros < fastest.get(line, (float("inf"),))[0]:
                    fastest[line] = (stats.all_end_rel_micros, stats.cpu_micros)
    by_type: dict[str, list] = collections.defaultdict(lambda: [0.0, 0, 0.0])
    for (_, op_type), (micros, cpu_micros) in fastest.items():
        row = by_type[op_type]
        row[0] += micros / 1e3
        row[1] += 1
        row[2] += cpu_micros / 1e3
    return sorted(((op_type, ms, lines, cpu_ms / ms if ms else 0.0) for op_type, (ms, lines, cpu_ms) in by_type.items()),
                  key=lambda row: -row[1])


def breakdown_lines(model_name: str, batch: int, rows: list[tuple[str, float, int, float]], where: str,
                    top: int = 12) -> list[str]:
    """A step_breakdown as text: the op types taking the most time, each with its share of the timed lines and the
    cores it kept busy."""
    total = sum(ms for _, ms, _, _ in rows)
    busy = sum(ms * cores for _, ms, _, cores in rows) / total if total else 0.0
    lines = [f"tfnb's {model_name} step at batch {batch} on {where}, by op type: {total:.1f} ms in "
             f"{sum(n for _, _, n, _ in rows)} timed lines, {busy:.2f} cores busy on average"]
    lines += [f"  {ms:9.2f} ms {ms / total:6.1%} {n:5d} lines {cores:5.2f} cores  {op_type}"
              for op_type, ms, n, cores in rows[:top]]
    rest = rows[top:]
    if rest:
        rest_ms = sum(ms for _, ms, _, _ in rest)
        rest_cores = sum(ms * cores for _, ms, _, cores in rest) / rest_ms if rest_ms else 0.0
        lines.append(f"  {rest_ms:9.2f} ms {rest_ms / total:6.1%} {sum(n for _, _, n, _ in rest):5d} lines "
                     f"{rest_cores:5.2f} cores  {len(rest)} other op types")
    return lines


def _device_name(device: str) -> str:
    """What the run measured on: "CPU" or the GPU's name."""
    if device != "gpu":
        return "CPU"
    import cupy
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    return f"GPU ({name.decode() if isinstance(name, bytes) else name})"


def _batches(run: dict) -> dict[str, int]:
    """Each model's batch in a run (runs saved before per-model batches hold one "batch")."""
    return run.get("batches") or dict.fromkeys(run["results"], run["batch"])


def _batch_text(run: dict) -> str:
    """"batch 128 (OxfordNet 64)": the run's most common batch, and the models that differ."""
    batches = _batches(run)
    common = collections.Counter(batches.values()).most_common(1)[0][0]
    others = ", ".join(f"{name} {b}" for name, b in batches.items() if b != common)
    return f"batch {common}" + (f" ({others})" if others else "")


def _on_gpu(run: dict) -> bool:
    return run.get("device", "CPU").startswith("GPU")


def read_run(path: str) -> dict:
    """A run saved with --save, checked to hold what the tables print: a ValueError naming what is wrong."""
    try:
        run = json.loads(pathlib.Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a run saved by --save ({error})") from None

    def need(condition: bool, what: str) -> None:
        if not condition:
            raise ValueError(f"{path}: not a run saved by --save: {what}")

    def number(value) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)

    def count(value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    need(isinstance(run, dict) and isinstance(run.get("results"), dict) and run["results"], "no results")
    need(set(run["results"]) <= set(PAPER_MODELS), f"models other than {', '.join(PAPER_MODELS)}")
    need(count(run.get("rounds")) and count(run.get("cores")), "rounds and cores must be positive integers")
    need(isinstance(run.get("device", "CPU"), str), "device must be text")
    frameworks = run.get("frameworks", list(FRAMEWORKS))
    need(isinstance(frameworks, list) and frameworks and all(isinstance(f, str) for f in frameworks),
         "frameworks must be a list of names")
    batches = run.get("batches") or {name: run.get("batch") for name in run["results"]}
    sizes = run.get("image_sizes")
    need(isinstance(batches, dict) and isinstance(sizes, dict), "batches and image_sizes must be tables")
    fields = ("ms", "loss") if run.get("device", "CPU").startswith("GPU") else ("ms", "loss", "peak_mib")
    spread = False
    for name, by_framework in run["results"].items():
        need(count(batches.get(name)) and count(sizes.get(name)), f"{name} needs a batch and an image size")
        need(isinstance(by_framework, dict) and set(by_framework) <= set(frameworks),
             f"{name}'s results must be per framework of the run")
        for framework, result in by_framework.items():
            need(isinstance(result, dict) and all(number(result.get(field)) for field in fields),
                 f"{name} in {framework} needs numbers for {', '.join(fields)}")
            need(result["ms"] > 0, f"{name} in {framework}: ms must be positive")
            spread |= "spread" in result
            need(number(result.get("spread", 0.0)), f"{name} in {framework}: spread must be a number")
    load = run.get("load_average")
    need(not spread or (isinstance(load, list) and len(load) == 2 and all(map(number, load))),
         "load_average must be two numbers")
    return run


def table_lines(run: dict) -> list[str]:
    """Table 1's layout for a run (ms per step, medians over the rounds), tfnb's ratios to TF1 and PyTorch, and
    the paper's 2016 GPU rows beside it; a framework that did not run shows '-'. Each result needs only its "ms";
    the rounds' noise is printed when results have their "spread"."""
    results = run["results"]
    names = [n for n in PAPER_MODELS if n in results]
    sizes = ", ".join(f"{n} {run['image_sizes'][n]}x{run['image_sizes'][n]}" for n in names)
    where = f"this {run['device']}" if _on_gpu(run) else f"this CPU ({run['cores']} cores)"
    target = "below PyTorch's on the same GPU" if _on_gpu(run) else "≤ 1.0x TF1 and below PyTorch on every model"
    lines = [(f"Training step time, ms: {where}, {_batch_text(run)}, float32, SGD, median of {run['rounds']} "
              f"rounds, each the second step of a turn; images {sizes}"), *_framework_rows(run, names, "ms"),
             f"  [target: tfnb {target}]"]
    spreads = [r["spread"] for by_framework in results.values() for r in by_framework.values() if "spread" in r]
    if spreads:
        lines.append(f"  noise: rounds' interquartile range {min(spreads):.0%} to {max(spreads):.0%} of their median; "
                     f"load average {run['load_average'][0]} before, {run['load_average'][1]} after")
    lines.append("Paper, 2016: one GPU, batch 128 (OxfordNet 64), ms")
    for library, row in PAPER_MS.items():
        lines.append(f"  {library:<22}" + "".join(f"{row[PAPER_MODELS.index(n)]:11d}" for n in names))
    lines.append(f"  {'TensorFlow / Torch':<22}" + "".join(
        f"{PAPER_MS['TensorFlow'][i] / PAPER_MS['Torch'][i]:10.2f}x" for i in map(PAPER_MODELS.index, names)))
    return lines


def memory_lines(run: dict) -> list[str]:
    """On the CPU, each framework's process: its peak resident MiB while timed, per model, with tfnb's ratios;
    and the first-step losses (the same weights and data give the same loss in every framework)."""
    results = run["results"]
    names = [n for n in PAPER_MODELS if n in results]
    lines = [] if _on_gpu(run) else [
        f"Peak resident memory of each framework's process while timed, MiB ({_batch_text(run)})",
        *_framework_rows(run, names, "peak_mib")]
    lines.append("First-step losses: " + "; ".join(
        f"{name} " + ", ".join(f"{f} {r['loss']:.4f}" for f, r in results[name].items()) for name in names))
    return lines


def _framework_rows(run: dict, names: list[str], field: str) -> list[str]:
    """A header of model names, a row of `field` per framework of the run, and tfnb's ratios to the others."""
    results, frameworks = run["results"], run.get("frameworks", list(FRAMEWORKS))
    rows = [f"  {'Library':<22}" + "".join(f"{n:>11}" for n in names)]
    rows += [f"  {framework:<22}" + "".join(f"{_cell(results[n], framework, field):>11}" for n in names)
             for framework in frameworks]
    rows += [f"  {'tfnb / ' + baseline:<22}" + "".join(f"{_ratio(results[n], 'tfnb', baseline, field):>11}"
                                                      for n in names) for baseline in frameworks[1:]]
    return rows


def _cell(by_framework: dict, framework: str, field: str) -> str:
    return f"{by_framework[framework][field]:.0f}" if framework in by_framework else "-"


def _ratio(by_framework: dict, framework: str, baseline: str, field: str) -> str:
    if framework not in by_framework or baseline not in by_framework:
        return "-"
    return f"{by_framework[framework][field] / by_framework[baseline][field]:.2f}x"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--batch", type=int, help=f"images per step (default: {BATCH} on the CPU, the paper's on a GPU)")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--models", default=",".join(PAPER_MODELS))
    parser.add_argument("--image-size", type=int, help="one image size for every model (default: the published ones)")
    parser.add_argument("--save", metavar="PATH", help="also write the results as JSON")
    instead = parser.add_mutually_exclusive_group()
    instead.add_argument("--load", metavar="PATH", help="print a run saved with --save instead of measuring")
    instead.add_argument("--breakdown", action="store_true",
                         help="instead of the table, where tfnb's step of each model spends its time, by op type")
    args = parser.parse_args(argv)
    if args.breakdown and not (args.device == "gpu" and gpu_count() == 0):
        for name in args.models.split(","):
            batch = args.batch or (PAPER_BATCHES[name] if args.device == "gpu" else BATCH)
            rows = step_breakdown(name, batch, args.image_size, args.device)
            print("\n" + "\n".join(breakdown_lines(name, batch, rows, _device_name(args.device))))
        return
    if args.load:
        try:
            run = read_run(args.load)
        except ValueError as error:
            parser.error(str(error))
    elif args.device == "gpu" and gpu_count() == 0:
        print("\nThe paper's Table 1 on a GPU: no CUDA device visible to CuPy here (the gpu extra on a GPU machine "
              "measures it)")
        return
    else:
        batch = args.batch or (None if args.device == "gpu" else BATCH)
        run = measure_all(args.models.split(","), batch, args.rounds, args.image_size, args.device)
    if _on_gpu(run):
        print(f"\nThe paper's Table 1 (experiment 1) on one GPU, as the paper measured it, at {_batch_text(run)}")
    else:
        print(f"\nThe paper's Table 1 (experiment 1) on this CPU at {_batch_text(run)} (the paper's: 128, on a GPU; "
              f"`make bench` runs batch {BATCH}, {ROUNDS} rounds, which a CPU of 2 cores finishes in minutes)")
    print("\n".join(table_lines(run) + memory_lines(run)))
    if args.save:
        pathlib.Path(args.save).write_text(json.dumps(run, indent=1) + "\n")


if __name__ == "__main__":
    main()
