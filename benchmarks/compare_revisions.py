"""tfnb at another git revision against the checkout, side by side: did a change move a benchmark, or did the machine?

A ratio to TF1 or to the NumPy floor moves with this machine's slow phases, which slow tfnb's memory-bound NumPy
passes more than oneDNN's kernels. Timing two revisions of tfnb itself, on the same benchmark code, in
processes taking turns (benchmarks/isolated.py), separates the two: while the small CNN's ratio to TF1 read
1.06x, against 0.86x in earlier measurements, its step took 0.90-0.92x the time of the code at commits one and two
days older (0c0768d, 889b2b7).

The revision's package is built from `git archive` and installed without dependencies into a temporary directory,
which its worker processes import tfnb from (isolated_runs' import roots).

    python -m benchmarks.compare_revisions REVISION [--benchmark cnn|mlp|lstm|AlexNet|...] [--rounds N]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import math
import pathlib
import subprocess
import sys
import tarfile
import tempfile

from benchmarks import bench_cnn, bench_convnets, bench_lstm, bench_mlp
from benchmarks.convnets import MODELS
from benchmarks.harness import report
from benchmarks.isolated import isolated_runs

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]

# Per benchmark: tfnb's contender and the turns its own benchmark takes.
BENCHMARKS = {
    "mlp": (bench_mlp.CONTENDERS["tfnb Session.run"], bench_mlp.TURNS),
    "cnn": (bench_cnn.CONTENDERS["tfnb Session.run"], bench_cnn.TURNS),
    "lstm": (bench_lstm.CONTENDERS["tfnb dynamic_rnn"], bench_lstm.TURNS),
    **{name: (bench_convnets.contender_spec(bench_convnets.FRAMEWORKS["tfnb"], name, bench_convnets.BATCH),
              {"rounds": bench_convnets.ROUNDS, **bench_convnets.TURNS}) for name in MODELS},
}


def commit_of(revision: str) -> str:
    """The full hash of the commit a revision names; ValueError if it names none in this repository."""
    found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
                           cwd=REPOSITORY, capture_output=True, text=True, check=False)
    if found.returncode != 0:
        raise ValueError(f"{revision!r} names no commit of {REPOSITORY}")
    return found.stdout.strip()


def install_revision(commit: str, directory: pathlib.Path) -> pathlib.Path:
    """tfnb as of `commit`, installed into directory/site without its dependencies (this environment's serve it);
    returns that directory."""
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=REPOSITORY, capture_output=True,
                             check=True).stdout
    source, site = directory / "source", directory / "site"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(source, filter="data")
    # Built with this environment's setuptools where it has one (no download), else in pip's build environment.
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *isolation,
                                "--target", str(site), str(source)], capture_output=True, text=True, check=False)
    if installed.returncode != 0:
        raise RuntimeError(f"pip could not install tfnb as of {commit}:\n{installed.stderr[-3000:]}")
    return site


def compare(revision: str, benchmark: str, rounds: int | None = None) -> dict[str, float]:
    """Median seconds per call of the benchmark's tfnb step at `revision` and at the checkout (working tree)."""
    spec, turns = BENCHMARKS[benchmark]
    turns = {**turns, "rounds": rounds or turns["rounds"]}
    commit = commit_of(revision)
    then, now = f"tfnb at {commit[:10]}", "tfnb, this checkout"
    with tempfile.TemporaryDirectory() as directory:
        site = install_revision(commit, pathlib.Path(directory))
        runs = isolated_runs({then: spec, now: spec}, import_roots={then: str(site)}, **turns)
    if all(math.isfinite(run.first_value) for run in runs.values()):  # a loss: both revisions computed the same step
        print("  first step's loss: " + ", ".join(f"{name} {run.first_value:.6f}" for name, run in runs.items()))
    return {name: run.median for name, run in runs.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revision", help="a git revision: a commit, a tag, HEAD~3, ...")
    parser.add_argument("--benchmark", choices=list(BENCHMARKS), default="cnn")
    parser.add_argument("--rounds", type=int, help="rounds of turns (default: the benchmark's own)")
    args = parser.parse_args(argv)
    try:
        medians = compare(args.revision, args.benchmark, args.rounds)
    except ValueError as error:
        parser.error(str(error))
    baseline = next(iter(medians))
    report(f"{args.benchmark} training step, tfnb at two revisions; each in its own process", medians, baseline,
           1e-3, "ms")


if __name__ == "__main__":
    main()
