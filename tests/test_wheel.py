"""The wheel: built from the checkout, installed into a fresh virtual environment, and trained with from there.

It takes seconds (pip installs tfnb's dependencies from its cache or index), so it runs when TFNB_TEST_WHEEL=1,
as `make test` sets it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("TFNB_TEST_WHEEL") != "1",
                                reason="builds and installs the wheel: `make test` runs it (TFNB_TEST_WHEEL=1)")

ROOT = Path(__file__).resolve().parent.parent
# Where each folder of the checkout goes in the installed package (pyproject.toml's package-dir).
INSTALLED_AS = {"tfnb": "tfnb", "kernels": "tfnb/kernels", "visualizer": "tfnb/visualizer"}
BUILD_FILES = ["pyproject.toml", "setup.py", "README.md"]

TRAINING_STEP = """
import numpy as np
import tfnb as tf

x = tf.placeholder(tf.float32, [None, 2])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(tf.zeros([2, 1]))
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
data = np.random.default_rng(0).normal(size=(32, 2)).astype(np.float32)
feed = {x: data, y: data @ np.array([[2.0], [-1.0]], np.float32)}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    before = sess.run(loss, feed)
    for _ in range(20):
        sess.run(train, feed)
    after = sess.run(loss, feed)
assert after < before / 10, (before, after)
print(tf.__file__)
"""


def run(*command: str | Path, cwd: Path | None = None) -> str:
    """Runs a command; fails the test with its output if it fails."""
    done = subprocess.run([str(part) for part in command], check=False, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        pytest.fail(f"{' '.join(map(str, command))} failed:\n{done.stdout}\n{done.stderr}", pytrace=False)
    return done.stdout


def build_wheel(folder: Path) -> Path:
    """The wheel built from a copy of the sources, so that no stale build/ of the checkout ends up in it."""
    sources = folder / "sources"
    for name in INSTALLED_AS:
        shutil.copytree(ROOT / name, sources / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in BUILD_FILES:
        shutil.copy(ROOT / name, sources / name)
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", folder / "dist", sources)
    (wheel,) = (folder / "dist").glob("tfnb-*.whl")
    return wheel


def checkout_files() -> set[str]:
    """The files of the checkout's packages, named as the installed package names them."""
    return {f"{installed}/{path.relative_to(ROOT / folder).as_posix()}"
            for folder, installed in INSTALLED_AS.items() for path in (ROOT / folder).rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}


def test_the_wheel_holds_every_module_and_trains_from_a_fresh_environment(tmp_path):
    wheel = build_wheel(tmp_path)
    missing = checkout_files() - set(zipfile.ZipFile(wheel).namelist())
    assert not missing, f"files of the checkout missing from the wheel: {sorted(missing)}"

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    # This environment's pip installs into the new one (--python): the same index and cache, and no seconds
    # spent bootstrapping a pip there. Modules compile when first imported, not all at install.
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-compile", wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # -I: no PYTHONPATH, no user site, and neither the checkout nor the working folder on sys.path.
    installed_at = Path(run(python, "-I", "-c", TRAINING_STEP, cwd=elsewhere).strip())
    assert installed_at.is_relative_to(venv), f"tfnb was imported from {installed_at}, not from the wheel"
