"""A Session's process keeps the memory its steps free (kernels/host_memory.py): measured in fresh processes."""

import platform
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc thresholds")

# A step that makes 40 MB of arrays and frees them all at its end; the process prints its minor page faults a step.
_CHURN = textwrap.dedent("""
    import resource, sys
    import numpy as np
    import tfnb
    if sys.argv[1] == "session":
        tfnb.Session().close()

    def step():
        arrays = [np.ones(200_000, np.float32) for _ in range(50)]
        del arrays

    step(); step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        step()
    print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
""")


def _faults_a_step(what: str) -> float:
    result = subprocess.run([sys.executable, "-c", _CHURN, what], capture_output=True, text=True, check=True)
    return float(result.stdout)


def test_freed_step_memory_stays_mapped_once_a_session_is_made():
    # Without a session, glibc hands the 40 MB back after each step and every step faults it in again (10,000 pages).
    assert _faults_a_step("import only") > 5000
    assert _faults_a_step("session") < 100
