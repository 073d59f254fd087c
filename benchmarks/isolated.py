"""Side-by-side timing with each contender in a process of its own, the processes taking turns (A B A B ...).

Frameworks in one process disturb each other: thread pools that spin while idle, allocators,
libraries that one loads and another then uses. A user runs one of them, so here each contender
lives in a worker process, built there by a factory `module:function[:argument...]` that returns the
callable to time (or None when its framework is not installed). Rounds rotate which contender goes
first and pause before each turn, as `harness.interleaved_medians` does. A turn may start with untimed
calls (`warmup`): a step right after a pause is not a training step in a loop. Each worker also reports its
resident memory: after the first call, and its peak while it was timed (Linux; NaN elsewhere).

A worker answers only once its process is idle (`_wait_until_idle`): NumPy's OpenBLAS keeps its threads spinning
for about 0.1 s after a product (measured: 0.10 s of CPU in the 0.1 s after a turn of the MLP's NumPy step, none
after TF1's), and a turn that starts while the previous contender's threads spin shares a core with them. Which
contender follows which depends on the rotation: with three contenders, the MLP benchmark's tfnb turns followed a
spinning process in two rounds of three and the floor's in one. tfnb's ratio to the floor, averaged over seven
runs: 1.012 before this wait, 0.991 with it (without TF1 in the rotation, where both follow a spinning process
alike: 0.960 and 0.956).

A contender may import tfnb from an import root of its own (`import_roots`): a directory where another revision of
tfnb is installed, which benchmarks/compare_revisions.py times against the checkout's.
"""

from __future__ import annotations

import importlib
import math
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

# The environment variable naming a worker's import root (isolated_runs).
_IMPORT_ROOT = "TFNB_BENCH_IMPORT_ROOT"
# A process is idle once it used under _IDLE_SHARE of a core over _IDLE_WINDOW seconds; a worker waits at most
# _IDLE_WAIT_LIMIT seconds for that.
_IDLE_WINDOW = 0.02
_IDLE_SHARE = 0.1
_IDLE_WAIT_LIMIT = 2.0


@dataclass
class IsolatedRun:
    """One contender's figures: seconds per call in each round, the first call's value (NaN if not a number),
    and its process's resident bytes after that first call and at its peak while timed."""

    samples: list[float]
    first_value: float
    built_bytes: float
    peak_bytes: float

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """The interquartile range of the rounds over their median: how noisy the machine was."""
        if len(self.samples) < 2:
            return 0.0
        quartiles = statistics.quantiles(self.samples, n=4)
        return (quartiles[2] - quartiles[0]) / self.median


def isolated_medians(factories: dict[str, str], rounds: int = 11, number: int = 5,
                     pause: float = 0.2) -> dict[str, float]:
    """Median seconds per call of each contender whose framework is installed, each timed in its own process."""
    return {name: run.median for name, run in isolated_runs(factories, rounds, number, pause).items()}


def isolated_runs(factories: dict[str, str], rounds: int = 11, number: int = 5,
                  pause: float = 0.2, warmup: int = 0, import_roots: dict[str, str] | None = None
                  ) -> dict[str, IsolatedRun]:
    """Each installed contender's IsolatedRun, each timed in its own process, the processes taking turns; each
    turn makes `warmup` untimed calls before its `number` timed ones. `import_roots` maps a contender's name to a
    directory its process imports tfnb from, ahead of the checkout's."""
    roots = import_roots or {}
    workers = {name: _Worker(spec, roots.get(name)) for name, spec in factories.items()}
    try:
        order = [(name, worker) for name, worker in workers.items() if worker.available]
        samples: dict[str, list[float]] = {name: [] for name, _ in order}
        for round_index in range(rounds):
            shift = round_index % len(order)
            for name, worker in order[shift:] + order[:shift]:
                time.sleep(pause)
                samples[name].append(worker.seconds_per_call(number, warmup))
        return {name: IsolatedRun(samples[name], worker.first_value, worker.built_bytes, worker.peak_bytes())
                for name, worker in order}
    finally:
        for worker in workers.values():
            worker.close()


class _Worker:
    """A process holding one contender; it times `number` calls when asked and answers seconds per call."""

    def __init__(self, spec: str, import_root: str | None = None) -> None:
        self._log = tempfile.TemporaryFile(mode="w+")  # the frameworks' own logging, shown only on failure
        environment = {**os.environ, _IMPORT_ROOT: import_root} if import_root else None
        self._process = subprocess.Popen([sys.executable, "-m", "benchmarks.isolated", spec], text=True,
                                         env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._log)
        ready = self._answer(spec).split()
        self.available = ready[0] == "ready"
        if self.available:
            self.built_bytes, self.first_value = float(ready[1]), float(ready[2])

    def peak_bytes(self) -> float:
        """The worker's peak resident bytes since its first call."""
        self._process.stdin.write("peak\n")
        self._process.stdin.flush()
        return float(self._answer("reading its peak memory"))

    def seconds_per_call(self, number: int, warmup: int = 0) -> float:
        self._process.stdin.write(f"{warmup} {number}\n")
        self._process.stdin.flush()
        return float(self._answer(f"timing {number} calls"))

    def close(self) -> None:
        self._process.stdin.close()
        self._process.wait()
        self._log.close()

    def _answer(self, what: str) -> str:
        line = self._process.stdout.readline().strip()
        if not line:
            self._log.seek(0)
            raise RuntimeError(f"benchmark worker failed while {what}:\n{self._log.read()[-3000:]}")
        return line


def _resident_bytes(field: str) -> float:
    """VmRSS (now) or VmHWM (the peak) of this process from /proc, in bytes; NaN where there is no /proc."""
    try:
        with open("/proc/self/status") as status:
            return next(float(line.split()[1]) * 1024 for line in status if line.startswith(field + ":"))
    except (OSError, StopIteration):
        return math.nan


def _reset_peak() -> None:
    """Starts VmHWM again from the current resident size (Linux's clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        pass


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _wait_until_idle() -> None:
    """Returns once this process's threads, all of them, keep no core busy (see the module docstring), or after
    _IDLE_WAIT_LIMIT seconds."""
    deadline = time.perf_counter() + _IDLE_WAIT_LIMIT
    while time.perf_counter() < deadline:
        before = time.process_time()
        time.sleep(_IDLE_WINDOW)
        if time.process_time() - before < _IDLE_SHARE * _IDLE_WINDOW:
            return


def _import_tfnb_from(root: str) -> None:
    """Makes this process import tfnb from `root`: first on sys.path, and without the import hooks that would find
    it elsewhere first (an editable install's finder runs before sys.path is searched)."""
    if not (pathlib.Path(root) / "tfnb" / "__init__.py").is_file():
        raise ImportError(f"no tfnb installed in {root}")
    sys.path.insert(0, root)
    for finder in list(sys.meta_path):
        find_spec = getattr(finder, "find_spec", None)
        found = find_spec("tfnb", None) if find_spec else None
        if found is not None and not _inside(found.origin, root):
            sys.meta_path.remove(finder)


def _inside(path: str | None, root: str) -> bool:
    return path is not None and pathlib.Path(path).resolve().is_relative_to(pathlib.Path(root).resolve())


def _serve(spec: str) -> None:
    """The worker's side: build the contender, call it once, then time calls (or report its peak) as asked on stdin."""
    if os.environ.get(_IMPORT_ROOT):
        _import_tfnb_from(os.environ[_IMPORT_ROOT])
    module, function, *arguments = spec.split(":")
    contender = getattr(importlib.import_module(module), function)(*arguments)
    if contender is None:
        print("missing", flush=True)
        return
    first = _number(contender())
    _wait_until_idle()
    print(f"ready {_resident_bytes('VmRSS')} {first}", flush=True)
    _reset_peak()
    for line in sys.stdin:
        if line.strip() == "peak":
            print(_resident_bytes("VmHWM"), flush=True)
            continue
        warmup, number = (int(word) for word in line.split())
        for _ in range(warmup):
            contender()
        start = time.perf_counter()
        for _ in range(number):
            contender()
        seconds = (time.perf_counter() - start) / number
        _wait_until_idle()
        print(seconds, flush=True)


if __name__ == "__main__":
    _serve(sys.argv[1])
