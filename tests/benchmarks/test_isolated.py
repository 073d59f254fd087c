"""Side-by-side timing in worker processes (benchmarks/isolated.py): turns, untimed warm-up calls."""

import os
import sys
import textwrap
from pathlib import Path

from benchmarks.isolated import isolated_runs

# A contender slow on the first call of each turn (after the pause) and fast on the calls right after it.
CONTENDER = textwrap.dedent("""
    import time

    def cold_after_a_pause():
        last = [0.0]

        def call():
            idle = time.perf_counter() - last[0]
            time.sleep(0.2 if idle > 0.1 else 0.001)
            last[0] = time.perf_counter()
            return 1.0
        return call
""")


def test_warm_up_calls_are_made_and_left_untimed(tmp_path, monkeypatch):
    (tmp_path / "cold_contender.py").write_text(CONTENDER)
    root = str(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), root, *sys.path]))
    spec = {"cold": "cold_contender:cold_after_a_pause"}
    cold = isolated_runs(spec, rounds=2, number=1, pause=0.3)["cold"]
    warm = isolated_runs(spec, rounds=2, number=1, pause=0.3, warmup=1)["cold"]
    assert cold.median > 0.15
    assert warm.median < 0.1
    assert warm.first_value == 1.0
