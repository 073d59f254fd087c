"""The README's tour runs as written, block after block, in one namespace."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_tour_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    blocks = python_blocks()
    assert len(blocks) >= 5
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    printed = capsys.readouterr().out
    assert "[[2.]\n [0.]]" in printed and "[[6.]]" in printed and "1.0" in printed and "15 1" in printed
    assert "[[12.]]" in printed and "_Recv" in printed
    assert (tmp_path / "trace.json").exists()
