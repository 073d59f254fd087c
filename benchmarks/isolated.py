"""Side-by-side timing with each contender in a process of its own, the processes taking turns (A B A B ...).

Frameworks in one process disturb each other: thread pools that spin while idle, allocators,
libraries that one loads and another then uses. A user runs one of them, so here each contender
lives in a worker process, built there by a factory `module:function` that returns the callable to
time (or None when its framework is not installed). Rounds rotate which contender goes first and
pause before each turn, as `harness.interleaved_medians` does.
"""

from __future__ import annotations

import importlib
import statistics
import subprocess
import sys
import tempfile
import time


def isolated_medians(factories: dict[str, str], rounds: int = 11, number: int = 5,
                     pause: float = 0.2) -> dict[str, float]:
    """Median seconds per call of each contender whose framework is installed, each timed in its own process."""
    workers = {name: _Worker(spec) for name, spec in factories.items()}
    try:
        order = [(name, worker) for name, worker in workers.items() if worker.available]
        samples: dict[str, list[float]] = {name: [] for name, _ in order}
        for round_index in range(rounds):
            shift = round_index % len(order)
            for name, worker in order[shift:] + order[:shift]:
                time.sleep(pause)
                samples[name].append(worker.seconds_per_call(number))
    finally:
        for worker in workers.values():
            worker.close()
    return {name: statistics.median(times) for name, times in samples.items()}


class _Worker:
    """A process holding one contender; it times `number` calls when asked and answers seconds per call."""

    def __init__(self, spec: str) -> None:
        self._log = tempfile.TemporaryFile(mode="w+")  # the frameworks' own logging, shown only on failure
        self._process = subprocess.Popen([sys.executable, "-m", "benchmarks.isolated", spec], text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log)
        self.available = self._answer(spec) == "ready"

    def seconds_per_call(self, number: int) -> float:
        self._process.stdin.write(f"{number}\n")
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


def _serve(spec: str) -> None:
    """The worker's side: build the contender, call it once, then time calls as asked on stdin."""
    module, function = spec.split(":")
    contender = getattr(importlib.import_module(module), function)()
    if contender is None:
        print("missing", flush=True)
        return
    contender()
    print("ready", flush=True)
    for line in sys.stdin:
        number = int(line)
        start = time.perf_counter()
        for _ in range(number):
            contender()
        print((time.perf_counter() - start) / number, flush=True)


if __name__ == "__main__":
    _serve(sys.argv[1])
