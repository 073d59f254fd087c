"""benchmarks/bench_convnets.py's figures: the table it prints from a run's results, and what a measurement holds."""

import math

import numpy as np
import pytest

import tfnb as tf
from benchmarks import bench_convnets
from benchmarks.convnets import MODELS


def result(ms: float, peak_mib: float, loss: float = 6.9) -> dict:
    return {"ms": ms, "spread": 0.1, "built_mib": peak_mib / 2, "peak_mib": peak_mib, "loss": loss}


def saved_run() -> dict:
    """A run as `--save` writes it: PyTorch missing on GoogLeNet, the models in an order other than the paper's."""
    return {"batch": 3, "rounds": 5, "cores": 2, "load_average": [0.5, 1.5],
            "image_sizes": {"GoogLeNet": 224, "AlexNet": 227},
            "results": {"GoogLeNet": {"tfnb": result(300, 900), "TF1": result(200, 600)},
                        "AlexNet": {"tfnb": result(120, 400), "TF1": result(60, 800), "PyTorch": result(240, 200)}}}


def row(lines: list[str], label: str) -> list[str]:
    """The cells of the first row that starts with `label`."""
    line = next(line for line in lines if line.strip().startswith(label + " ") or line.strip() == label)
    return line.strip()[len(label):].split()


def test_the_table_has_the_papers_columns_and_tfnbs_ratios():
    lines = bench_convnets.table_lines(saved_run())
    assert "batch 3" in lines[0] and "median of 5 rounds" in lines[0] and "AlexNet 227x227" in lines[0]
    assert row(lines, "Library") == ["AlexNet", "GoogLeNet"]
    assert row(lines, "tfnb") == ["120", "300"]
    assert row(lines, "PyTorch") == ["240", "-"]
    assert row(lines, "tfnb / TF1") == ["2.00x", "1.50x"]
    assert row(lines, "tfnb / PyTorch") == ["0.50x", "-"]


def test_the_papers_rows_follow_for_the_same_models():
    lines = bench_convnets.table_lines(saved_run())
    paper = lines[next(i for i, line in enumerate(lines) if line.startswith("Paper")):]
    assert row(paper, "TensorFlow") == ["81", "445"]
    assert row(paper, "Caffe") == ["324", "1935"]
    assert row(paper, "TensorFlow / Torch") == ["1.00x", f"{445 / 470:.2f}x"]


def test_memory_lines_give_each_processs_peak_and_tfnbs_ratios():
    lines = bench_convnets.memory_lines(saved_run())
    assert "batch 3" in lines[0]
    assert row(lines, "TF1") == ["800", "600"]
    assert row(lines, "tfnb / TF1") == ["0.50x", "1.50x"]
    assert row(lines, "tfnb / PyTorch") == ["2.00x", "-"]


def test_main_prints_a_saved_run(tmp_path, capsys):
    path = tmp_path / "run.json"
    bench_convnets.pathlib.Path(path).write_text(bench_convnets.json.dumps(saved_run()))
    bench_convnets.main(["--load", str(path)])
    printed = capsys.readouterr().out
    assert "batch 3" in printed.splitlines()[1]
    assert "\n".join(bench_convnets.table_lines(saved_run()) + bench_convnets.memory_lines(saved_run())) in printed


def test_a_measured_step_reports_its_loss_and_its_processs_memory(monkeypatch):
    monkeypatch.setattr(bench_convnets, "FRAMEWORKS", {"tfnb": "tfnb_contender"})
    run = bench_convnets.measure_all(["GoogLeNet"], batch=1, rounds=2, image_size=32)
    measured = run["results"]["GoogLeNet"]["tfnb"]
    assert run["image_sizes"] == {"GoogLeNet": 32} and run["batches"] == {"GoogLeNet": 1} and run["device"] == "CPU"
    first_loss = bench_convnets.graph_step(tf, MODELS["GoogLeNet"], 1, 32)()
    np.testing.assert_allclose(measured["loss"], first_loss, rtol=1e-4)
    assert math.isfinite(measured["ms"]) and measured["ms"] > 0
    assert 0 < measured["built_mib"] < 4096 and 0 < measured["peak_mib"] < 4096


def test_a_table_needs_only_the_medians():
    run = {"batch": 1, "rounds": 3, "cores": 2, "image_sizes": {"OxfordNet": 64},
           "results": {"OxfordNet": {"tfnb": {"ms": 30.0}, "TF1": {"ms": 20.0}}}}
    lines = bench_convnets.table_lines(run)
    assert row(lines, "tfnb / TF1") == ["1.50x"] and row(lines, "tfnb / PyTorch") == ["-"]
    assert not any("noise" in line for line in lines)


def gpu_run() -> dict:
    """A GPU run as `--device gpu --save` writes it: the paper's batches, tfnb against PyTorch only."""
    return {"batches": {"AlexNet": 128, "OxfordNet": 64}, "rounds": 5, "cores": 16, "device": "GPU (NVIDIA H100)",
            "frameworks": ["tfnb", "PyTorch"], "load_average": [0.5, 0.6],
            "image_sizes": {"AlexNet": 227, "OxfordNet": 224},
            "results": {"AlexNet": {"tfnb": result(90, 900), "PyTorch": result(60, 800)},
                        "OxfordNet": {"tfnb": result(600, 900), "PyTorch": result(400, 800)}}}


def test_a_gpu_run_is_tabled_at_the_papers_batches_against_pytorch_alone():
    lines = bench_convnets.table_lines(gpu_run())
    assert "this GPU (NVIDIA H100), batch 128 (OxfordNet 64)" in lines[0]
    assert row(lines, "tfnb / PyTorch") == ["1.50x", "1.50x"]
    assert not any(line.strip().startswith(("TF1", "tfnb / TF1")) for line in lines)
    assert "below PyTorch's on the same GPU" in "\n".join(lines)
    memory = bench_convnets.memory_lines(gpu_run())  # host memory says nothing of a GPU's: losses only
    assert len(memory) == 1 and memory[0].startswith("First-step losses: AlexNet tfnb 6.9000, PyTorch 6.9000")


def test_on_a_device_the_step_feeds_nothing_and_is_the_cpu_step():
    """The GPU path on the device that behaves as CuPy's (tfnb/runtime/strict_numpy.py)."""
    config = tf.ConfigProto(device_count={"STRICT": 1})
    session, fetches, feeds = bench_convnets.graph_session(tf, MODELS["GoogLeNet"], 1, 32, config,
                                                           device="/device:STRICT:0")
    assert feeds == {}
    plan = session.plan(fetches)
    convolutions = [op for op in plan.ops if op.type.startswith("Conv2D")]
    assert convolutions and {plan.placement[op] for op in convolutions} == {"/job:localhost/replica:0/task:0/device:STRICT:0"}
    loss = float(session.run(fetches, feeds)[0])
    np.testing.assert_allclose(loss, bench_convnets.graph_step(tf, MODELS["GoogLeNet"], 1, 32)(), rtol=1e-5)
    assert float(session.run(fetches, feeds)[0]) < loss  # the batch stays on the device, and SGD descends on it


def test_without_a_gpu_the_gpu_table_says_so_and_measures_nothing(monkeypatch, capsys):
    monkeypatch.setattr(bench_convnets, "gpu_count", lambda: 0)
    monkeypatch.setattr(bench_convnets, "measure_all", lambda *args: pytest.fail("measured without a GPU"))
    bench_convnets.main(["--device", "gpu"])
    assert "no CUDA device visible to CuPy" in capsys.readouterr().out
    assert bench_convnets.tfnb_gpu_contender("AlexNet", "1") is None


@pytest.mark.parametrize("corrupt,message", [
    (lambda run: "{not json", "not a run saved by --save"),
    (lambda run: [run], "no results"),
    (lambda run: {**run, "results": {"ResNet": run["results"]["AlexNet"]}}, "models other than"),
    (lambda run: {**run, "rounds": "5"}, "rounds and cores"),
    (lambda run: {**run, "image_sizes": {"GoogLeNet": 224}}, "AlexNet needs a batch and an image size"),
    (lambda run: {**run, "results": {"AlexNet": {"tfnb": {**result(120, 400), "ms": "fast"}}}}, "needs numbers"),
    (lambda run: {**run, "results": {"AlexNet": {"tfnb": result(-1, 400)}}}, "ms must be positive"),
    (lambda run: {**run, "results": {"AlexNet": {"MXNet": result(120, 400)}}}, "per framework of the run"),
    (lambda run: {**run, "load_average": [1]}, "load_average"),
])
def test_a_saved_run_is_checked_before_it_is_printed(tmp_path, capsys, corrupt, message):
    corrupted = corrupt(saved_run())
    path = tmp_path / "run.json"
    path.write_text(corrupted if isinstance(corrupted, str) else bench_convnets.json.dumps(corrupted))
    with pytest.raises(SystemExit):
        bench_convnets.main(["--load", str(path)])
    assert message in capsys.readouterr().err


def test_the_recorded_gpu_run_prints_as_a_table(capsys):
    path = bench_convnets.pathlib.Path(bench_convnets.__file__).parent / "runs" / "experiment1_gpu_h200.json"
    bench_convnets.main(["--load", str(path)])
    lines = capsys.readouterr().out.splitlines()
    assert row(lines, "Library") == list(bench_convnets.PAPER_MODELS)
    assert [name for name, _ in bench_convnets.read_run(str(path))["results"].items()] == list(
        bench_convnets.PAPER_MODELS) and any("GPU (NVIDIA H200)" in line for line in lines)


def test_a_breakdown_gives_each_op_types_time_in_the_executed_step(capsys):
    rows = bench_convnets.step_breakdown("AlexNet", 1, image_size=67, steps=2)
    assert any(op_type.startswith("Conv2D") for op_type, *_ in rows)
    assert all(ms >= 0 and lines >= 1 and cores >= 0 for _, ms, lines, cores in rows)
    assert [ms for _, ms, *_ in rows] == sorted((ms for _, ms, *_ in rows), reverse=True)
    text = bench_convnets.breakdown_lines("AlexNet", 1, rows, "CPU", top=3)
    assert len(text) == 5 and text[-1].endswith(f"{len(rows) - 3} other op types")
    assert "cores busy on average" in text[0] and all(" cores  " in line for line in text[1:])
    bench_convnets.main(["--breakdown", "--models", "AlexNet", "--batch", "1", "--image-size", "67"])
    assert "tfnb's AlexNet step at batch 1 on CPU, by op type" in capsys.readouterr().out


@pytest.mark.gpu
def test_on_a_gpu_a_breakdown_times_the_devices_work():
    rows = bench_convnets.step_breakdown("AlexNet", 2, image_size=67, device="gpu", steps=1)
    assert any(op_type.startswith("Conv2D") for op_type, *_ in rows) and sum(ms for _, ms, *_ in rows) > 0


@pytest.mark.gpu
def test_on_a_gpu_tfnb_and_pytorch_take_the_same_step():
    run = bench_convnets.measure_all(["AlexNet"], batch=2, rounds=2, image_size=67, device="gpu")
    results = run["results"]["AlexNet"]
    assert run["device"].startswith("GPU (") and run["frameworks"] == ["tfnb", "PyTorch"]
    assert math.isfinite(results["tfnb"]["ms"]) and results["tfnb"]["ms"] > 0
    if "PyTorch" in results:
        np.testing.assert_allclose(results["tfnb"]["loss"], results["PyTorch"]["loss"], rtol=1e-4)
