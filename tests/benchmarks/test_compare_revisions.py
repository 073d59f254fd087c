"""benchmarks/compare_revisions.py: tfnb at a git revision against the checkout, each in its own processes."""

import subprocess

import pytest

from benchmarks import compare_revisions

IN_A_REPOSITORY = subprocess.run(["git", "rev-parse", "HEAD"], cwd=compare_revisions.REPOSITORY,
                                 capture_output=True, check=False).returncode == 0
needs_repository = pytest.mark.skipif(not IN_A_REPOSITORY, reason="the checkout is not a git repository")


@needs_repository
def test_a_revision_that_names_no_commit_is_refused():
    with pytest.raises(ValueError, match="names no commit"):
        compare_revisions.commit_of("no-such-revision")
    with pytest.raises(ValueError, match="names no commit"):
        compare_revisions.commit_of("--output=x")  # an option, not a revision


@needs_repository
@pytest.mark.slow
def test_the_mlp_at_head_against_the_checkout(capsys):
    """HEAD's package is built and installed apart, and both steps run and are reported."""
    compare_revisions.main(["HEAD", "--benchmark", "mlp", "--rounds", "1"])
    printed = capsys.readouterr().out
    head = compare_revisions.commit_of("HEAD")[:10]
    assert f"tfnb at {head}" in printed
    assert "tfnb, this checkout" in printed
    assert "1.00x tfnb at" in printed
