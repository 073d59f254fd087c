"""Side-by-side timing in worker processes (benchmarks/isolated.py): turns, untimed warm-up calls."""

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchmarks import isolated
from benchmarks.isolated import _Worker, isolated_runs

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


def _importable_by_workers(tmp_path, monkeypatch, module: str, source: str) -> None:
    """Writes a contender's module where the worker processes import it from."""
    (tmp_path / f"{module}.py").write_text(source)
    root = str(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), root, *sys.path]))


def test_warm_up_calls_are_made_and_left_untimed(tmp_path, monkeypatch):
    _importable_by_workers(tmp_path, monkeypatch, "cold_contender", CONTENDER)
    spec = {"cold": "cold_contender:cold_after_a_pause"}
    cold = isolated_runs(spec, rounds=2, number=1, pause=0.3)["cold"]
    warm = isolated_runs(spec, rounds=2, number=1, pause=0.3, warmup=1)["cold"]
    assert cold.median > 0.15
    assert warm.median < 0.1
    assert warm.first_value == 1.0


# A contender whose process keeps a core busy after each call, as OpenBLAS's spinning threads do.
SPINNING = textwrap.dedent("""
    import threading
    import time

    def spinning_after_each_call():
        def spin():
            end = time.perf_counter() + 0.4
            while time.perf_counter() < end:
                pass

        def call():
            threading.Thread(target=spin).start()
            return 1.0
        return call
""")


def test_a_worker_answers_once_its_process_is_idle(tmp_path, monkeypatch):
    """The next contender's turn must not share a core with this one's leftover threads; the wait is not timed."""
    _importable_by_workers(tmp_path, monkeypatch, "spinning_contender", SPINNING)
    worker = _Worker("spinning_contender:spinning_after_each_call")
    try:
        start = time.perf_counter()
        seconds = worker.seconds_per_call(1)
        answered = time.perf_counter() - start
    finally:
        worker.close()
    assert answered > 0.3
    assert seconds < 0.1


def test_an_idle_process_waits_one_window_only():
    start = time.perf_counter()
    isolated._wait_until_idle()
    assert time.perf_counter() - start < 0.2


# A contender reporting which tfnb its process imported: a stand-in's MARK, or 1.0 for the checkout's.
IMPORTING = textwrap.dedent("""
    import tfnb

    def which_tfnb():
        return lambda: float(getattr(tfnb, "MARK", 1.0))
""")


def test_a_contender_imports_tfnb_from_its_import_root(tmp_path, monkeypatch):
    """Ahead of the checkout's tfnb, also where an editable install's finder would find that one first."""
    _importable_by_workers(tmp_path, monkeypatch, "importing_contender", IMPORTING)
    root = tmp_path / "site"
    (root / "tfnb").mkdir(parents=True)
    (root / "tfnb" / "__init__.py").write_text("MARK = 2.0\n")
    spec = "importing_contender:which_tfnb"
    runs = isolated_runs({"root": spec, "checkout": spec}, rounds=1, number=1, pause=0,
                         import_roots={"root": str(root)})
    assert runs["root"].first_value == 2.0
    assert runs["checkout"].first_value == 1.0


def test_an_import_root_without_tfnb_fails_the_worker(tmp_path, monkeypatch):
    _importable_by_workers(tmp_path, monkeypatch, "importing_contender", IMPORTING)
    with pytest.raises(RuntimeError, match="no tfnb installed in"):
        isolated_runs({"empty": "importing_contender:which_tfnb"}, rounds=1, number=1, pause=0,
                      import_roots={"empty": str(tmp_path / "empty")})
