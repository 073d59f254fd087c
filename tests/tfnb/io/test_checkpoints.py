"""tf.train.Saver: safetensors + JSON checkpoints, numbering, max_to_keep, state files, restore checks, atomicity."""

import ast
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import threading
import time
import zlib

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework import dtypes

STORABLE = dtypes.REAL + (dtypes.bool_,)
ROOT = pathlib.Path(__file__).resolve().parents[3]


def _value(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype is tf.bool:
        return rng.random(shape) < 0.5
    if dtype.is_floating:
        return rng.standard_normal(shape).astype(dtype.np_dtype)
    return rng.integers(dtype.min, dtype.max, shape, endpoint=True, dtype=dtype.np_dtype)


def _session(*variables):
    sess = tf.Session()
    sess.run(tf.variables_initializer(list(variables)) if variables else tf.global_variables_initializer())
    return sess


def _saved(tmp_path, *variables, name="model.ckpt", **save_args):
    """Saves `variables` (initialized) with a fresh Saver; returns the checkpoint prefix."""
    with _session(*variables) as sess:
        return tf.train.Saver(list(variables)).save(sess, str(tmp_path / name), **save_args)


# -- round trips ------------------------------------------------------------------------------------


def test_every_storable_dtype_and_shape_round_trips_exactly(tmp_path):
    shapes = [(), (0,), (5,), (2, 3), (2, 1, 3)]
    values = {(d.name, s): _value(d, s, seed) for seed, (d, s) in enumerate((d, s) for d in STORABLE for s in shapes)}
    variables = {key: tf.Variable(v, name=f"{key[0]}_{len(key[1])}_{i}") for i, (key, v) in enumerate(values.items())}
    saver = tf.train.Saver()
    with _session() as sess:
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
    with tf.Session() as sess:
        saver.restore(sess, path)
        restored = sess.run({key: v.value() for key, v in variables.items()})
    for key, value in values.items():
        got = np.asarray(restored[key])
        assert got.dtype == value.dtype and got.shape == value.shape, key
        np.testing.assert_array_equal(got, value, err_msg=str(key))


def test_a_dict_var_list_names_the_variables_in_the_checkpoint(tmp_path):
    w = tf.Variable([1.0, 2.0], name="w")
    path = _saved(tmp_path, w)
    tf.reset_default_graph()
    other = tf.Variable([0.0, 0.0], name="renamed")
    with tf.Session() as sess:
        tf.train.Saver({"w": other}).restore(sess, path)
        np.testing.assert_array_equal(sess.run(other), [1.0, 2.0])


@pytest.mark.parametrize("dtype", [tf.string, tf.complex64, tf.complex128])
def test_string_and_complex_variables_are_refused_by_name(dtype):
    v = tf.Variable(np.array([b"a"], dtype=object) if dtype is tf.string else np.ones(2, dtype.np_dtype), name="odd")
    with pytest.raises(TypeError, match=f"Saver cannot store variable 'odd' of dtype {dtype.name}"):
        tf.train.Saver([v])


def test_var_list_errors():
    w = tf.Variable(1.0, name="w")
    with pytest.raises(TypeError, match="Variable to save is not a Variable"):
        tf.train.Saver([w.value()])
    with pytest.raises(ValueError, match="At least two variables have the same name: w"):
        tf.train.Saver([w, w])


def test_an_empty_saver_needs_allow_empty_and_saves_nothing(tmp_path):
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    saver = tf.train.Saver(allow_empty=True)
    with tf.Session() as sess:
        assert saver.save(sess, str(tmp_path / "model.ckpt")) is None
    assert os.listdir(tmp_path) == []


def test_save_and_restore_reuse_the_ops_built_once(tmp_path):
    tf.Variable(np.ones((2, 2), np.float32), name="w")
    saver = tf.train.Saver()
    graph = tf.get_default_graph()
    ops = [op.name for op in graph.get_operations()]
    assert "save/restore_all" in ops
    with _session() as sess:
        version = graph.version
        for step in range(3):
            path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
            saver.restore(sess, path)
        assert graph.version == version


def test_defer_build(tmp_path):
    saver = tf.train.Saver(defer_build=True)
    w = tf.Variable(2.0, name="w")
    with _session() as sess:
        with pytest.raises(RuntimeError, match="`build\\(\\)` should be called before save"):
            saver.save(sess, str(tmp_path / "model.ckpt"))
        saver.build()
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
    assert tf.train.list_variables(path) == [("w", [])]
    assert w.op.name == "w"


def test_reshape_restores_into_a_variable_of_another_shape_with_the_same_size(tmp_path):
    path = _saved(tmp_path, tf.Variable(np.arange(6.0).reshape(2, 3), name="w"))
    tf.reset_default_graph()
    w = tf.Variable(np.zeros((3, 2)), name="w")
    with tf.Session() as sess:
        tf.train.Saver(reshape=True).restore(sess, path)
        np.testing.assert_array_equal(sess.run(w), np.arange(6.0).reshape(3, 2))


# -- files and numbering ----------------------------------------------------------------------------


def test_files_index_and_meta_graph(tmp_path):
    w = tf.Variable(np.ones((2, 3), np.float32), name="w")
    path = _saved(tmp_path, w, global_step=7)
    assert path == str(tmp_path / "model.ckpt-7")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-7.index.json", "model.ckpt-7.meta.json",
                                            "model.ckpt-7.safetensors"]
    index = json.loads(pathlib.Path(path + ".index.json").read_text())
    entry = index["tensors"]["w"]
    assert (entry["dtype"], entry["shape"], entry["crc32"]) == ("float32", [2, 3], zlib.crc32(np.ones(6, np.float32)))
    begin, end = entry["offsets"]
    data = pathlib.Path(path + ".safetensors").read_bytes()
    assert data[begin:end] == np.ones(6, np.float32).tobytes() and index["data_bytes"] == len(data)
    assert index["global_step"] == 7 and index["tfnb_version"] == tf.__version__
    graph = tf.GraphDef.from_json(pathlib.Path(path + ".meta.json").read_text())
    assert "w" in [node.name for node in graph.node]
    assert tf.train.list_variables(str(tmp_path)) == [("w", [2, 3])]


def test_write_meta_graph_and_write_state_can_be_turned_off(tmp_path):
    path = _saved(tmp_path, tf.Variable(1.0, name="w"), write_meta_graph=False, write_state=False)
    assert sorted(os.listdir(tmp_path)) == ["model.ckpt.index.json", "model.ckpt.safetensors"]
    assert tf.train.checkpoint_exists(path) and tf.train.latest_checkpoint(str(tmp_path)) is None


@pytest.mark.parametrize("kind", ["int", "numpy", "variable", "tensor"])
def test_global_step_numbers_the_checkpoint(tmp_path, kind):
    step = tf.Variable(42, dtype=tf.int64, name="global_step")
    global_step = {"int": 42, "numpy": np.int64(42), "variable": step, "tensor": step.value()}[kind]
    path = _saved(tmp_path, step, global_step=global_step)
    assert path == str(tmp_path / "model.ckpt-42")
    assert json.loads(pathlib.Path(path + ".index.json").read_text())["global_step"] == 42


def test_pad_step_number_and_no_global_step(tmp_path):
    w = tf.Variable(1.0, name="w")
    with _session(w) as sess:
        assert tf.train.Saver(pad_step_number=True).save(sess, str(tmp_path / "m"), 12) == str(tmp_path / "m-00000012")
        assert tf.train.Saver().save(sess, str(tmp_path / "m")) == str(tmp_path / "m")


def test_saving_into_a_missing_directory_fails():
    w = tf.Variable(1.0, name="w")
    with _session(w) as sess, pytest.raises(ValueError, match="Parent directory of .*/nope/m doesn't exist"):
        tf.train.Saver().save(sess, "/nonexistent-tfnb-dir/nope/m")


def _steps(paths):
    return [int(p.rsplit("-", 1)[1]) for p in paths]


def test_max_to_keep_deletes_the_oldest_checkpoint_files(tmp_path):
    w = tf.Variable(1.0, name="w")
    saver = tf.train.Saver(max_to_keep=2)
    with _session(w) as sess:
        for step in range(1, 6):
            saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=4)  # a re-save becomes the newest
    assert _steps(saver.last_checkpoints) == [5, 4]
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".safetensors")) == [
        "model.ckpt-4.safetensors", "model.ckpt-5.safetensors"]
    assert len(os.listdir(tmp_path)) == 7
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert _steps(state.all_model_checkpoint_paths) == [5, 4]
    assert state.model_checkpoint_path == str(tmp_path / "model.ckpt-4")


def test_max_to_keep_none_keeps_everything_and_lists_only_the_latest(tmp_path):
    w = tf.Variable(1.0, name="w")
    saver = tf.train.Saver(max_to_keep=None)
    with _session(w) as sess:
        for step in range(1, 8):
            saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    assert len([f for f in os.listdir(tmp_path) if f.endswith(".safetensors")]) == 7
    assert _steps(tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths) == [7]


def test_keep_checkpoint_every_n_hours_preserves_one_per_period(tmp_path, monkeypatch):
    now = [0.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    w = tf.Variable(1.0, name="w")
    saver = tf.train.Saver(max_to_keep=2, keep_checkpoint_every_n_hours=1)
    with _session(w) as sess:
        for step, seconds in enumerate([0, 1000, 4000, 5000, 8000, 9000, 9500], start=1):
            now[0] = seconds
            saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    kept = sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(tmp_path) if f.endswith(".safetensors"))
    assert kept == [3, 5, 6, 7]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert _steps(state.all_model_checkpoint_paths) == [6, 7]
    assert state.all_model_checkpoint_timestamps == [9000, 9500] and state.last_preserved_timestamp == 8000


def test_recover_last_checkpoints_lets_a_new_saver_delete_old_ones(tmp_path):
    w = tf.Variable(1.0, name="w")
    with _session(w) as sess:
        first = tf.train.Saver(max_to_keep=2)
        for step in (1, 2):
            first.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
        second = tf.train.Saver(max_to_keep=2)
        second.recover_last_checkpoints(tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths)
        second.save(sess, str(tmp_path / "model.ckpt"), global_step=3)
    assert _steps(second.last_checkpoints) == [2, 3]
    assert not tf.train.checkpoint_exists(str(tmp_path / "model.ckpt-1"))


# -- the state file ---------------------------------------------------------------------------------


def test_latest_checkpoint_and_checkpoint_state(tmp_path):
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    w = tf.Variable(1.0, name="w")
    saver = tf.train.Saver()
    with _session(w) as sess:
        for step in (10, 20):
            saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
        saver.save(sess, str(tmp_path / "other"), global_step=1, latest_filename="other_state")
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-20")
    assert tf.train.latest_checkpoint(str(tmp_path), "other_state") == str(tmp_path / "other-1")
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == str(tmp_path / "model.ckpt-20")
    assert state.all_model_checkpoint_paths == [str(tmp_path / "model.ckpt-10"), str(tmp_path / "model.ckpt-20")]
    os.remove(tmp_path / "model.ckpt-20.safetensors")
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_relative_paths_survive_moving_the_directory(tmp_path):
    (tmp_path / "a").mkdir()
    path = _saved(tmp_path / "a", tf.Variable(3.0, name="w"), global_step=5)
    saver = tf.train.Saver(save_relative_paths=True)
    with _session() as sess:
        saver.save(sess, path.rsplit("-", 1)[0], global_step=6)
    stored = json.loads((tmp_path / "a" / "checkpoint").read_text())
    assert stored["model_checkpoint_path"] == "model.ckpt-6"
    os.rename(tmp_path / "a", tmp_path / "b")
    assert tf.train.latest_checkpoint(str(tmp_path / "b")) == str(tmp_path / "b" / "model.ckpt-6")


def test_a_state_file_that_is_not_json_is_ignored_with_a_warning(tmp_path):
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-1"\n')
    with pytest.warns(UserWarning, match="checkpoint state ignored"):
        assert tf.train.get_checkpoint_state(str(tmp_path)) is None


# -- restore checks ---------------------------------------------------------------------------------


@pytest.fixture
def checkpoint(tmp_path):
    """A checkpoint of w (float32 [4, 3]) and b (float32 [3]) at step 5."""
    w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="w")
    b = tf.Variable(np.ones(3, np.float32), name="b")
    path = _saved(tmp_path, w, b, global_step=5)
    tf.reset_default_graph()
    return path


def _restore(path, saver=None):
    with tf.Session() as sess:
        (saver or tf.train.Saver()).restore(sess, path)


def test_restore_names_the_missing_variables(checkpoint):
    tf.Variable(np.zeros((4, 3), np.float32), name="w")
    tf.Variable(0.0, name="c")
    tf.Variable(0.0, name="a")
    with pytest.raises(tf.errors.NotFoundError) as caught:
        _restore(checkpoint)
    assert caught.value.message == f"Variables not found in checkpoint {checkpoint}: 'a', 'c' (it holds 'b', 'w')"


def test_restore_names_a_shape_mismatch(checkpoint):
    tf.Variable(np.zeros((3, 4), np.float32), name="w")
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        _restore(checkpoint)
    assert caught.value.message == f"Variable 'w' has shape [3, 4] in the graph but [4, 3] in checkpoint {checkpoint}"


def test_restore_names_a_dtype_mismatch_and_every_other_difference(checkpoint):
    tf.Variable(np.zeros((4, 3), np.float64), name="w")
    tf.Variable(np.zeros(2, np.float32), name="b")
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        _restore(checkpoint)
    assert caught.value.message == (f"Variable 'b' has shape [2] in the graph but [3] in checkpoint {checkpoint}\n"
                                    f"Variable 'w' has dtype float64 in the graph but float32 in checkpoint "
                                    f"{checkpoint}")


def test_a_failed_restore_changes_no_variable(checkpoint):
    w = tf.Variable(np.full((4, 3), 7, np.float32), name="w")
    b = tf.Variable(np.zeros(2, np.float32), name="b")
    with _session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.train.Saver().restore(sess, checkpoint)
        np.testing.assert_array_equal(sess.run(w), np.full((4, 3), 7))
        np.testing.assert_array_equal(sess.run(b), np.zeros(2))


def test_restore_accepts_unknown_dims_and_ignores_extra_checkpoint_entries(checkpoint):
    w = tf.Variable(np.zeros((1, 3), np.float32), name="w", validate_shape=False)
    with tf.Session() as sess:
        tf.train.Saver([w]).restore(sess, checkpoint)
        np.testing.assert_array_equal(sess.run(w), np.arange(12).reshape(4, 3))


def test_restore_path_errors(checkpoint):
    tf.Variable(1.0, name="w")
    with pytest.raises(ValueError, match="Can't load save_path when it is None"):
        _restore(None)
    with pytest.raises(ValueError, match="The passed save_path is not a valid checkpoint: .*nothing-here"):
        _restore(checkpoint + "nothing-here")
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        tf.train.load_variable(checkpoint, "nope")


def test_a_truncated_checkpoint_raises_out_of_range_as_in_tf(checkpoint):
    tf.Variable(np.zeros((4, 3), np.float32), name="w")
    with open(checkpoint + ".safetensors", "r+b") as f:
        f.truncate(20)
    with pytest.raises(tf.errors.OutOfRangeError, match=f"Checkpoint file {checkpoint}.safetensors is truncated"):
        _restore(checkpoint)


# -- atomicity: a real process killed with SIGKILL in the middle of saving ----------------------------

_TRAINER = r"""
import sys
import time

import safetensors.numpy
import tfnb as tf


def slow_save_file(tensors, filename, metadata=None):
    # A slow disk: the values go out in pieces, so a random kill most likely lands in the middle of them.
    data = safetensors.numpy.save(tensors, metadata)
    piece = len(data) // 20 + 1
    with open(filename, "wb") as f:
        for start in range(0, len(data), piece):
            f.write(data[start:start + piece])
            f.flush()
            time.sleep(0.002)


safetensors.numpy.save_file = slow_save_file

directory, numbered = sys.argv[1], sys.argv[2] == "numbered"
step_var = tf.Variable(0, dtype=tf.int64, name="global_step")
value = tf.placeholder(tf.float32, [], name="value")
weights = [tf.Variable(tf.zeros([512, 1024]), name=f"w{i}") for i in range(6)]
set_all = tf.group(step_var.assign(tf.cast(value, tf.int64)), *[w.assign(tf.fill([512, 1024], value)) for w in weights])
saver = tf.train.Saver(max_to_keep=2)
sess = tf.Session()
state = tf.train.get_checkpoint_state(directory)
step = 0
if state is not None:
    saver.restore(sess, state.model_checkpoint_path)
    saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
    step = int(sess.run(step_var))
print("ready", flush=True)
while True:
    step += 1
    sess.run(set_all, {value: step})
    print("saving", step, flush=True)
    saver.save(sess, directory + "/model.ckpt", global_step=step if numbered else None)
"""


def _kill_during_a_save(directory, numbered, rng):
    """Starts the trainer, lets it begin its 2nd-4th save, and kills it a random moment later."""
    mode = "numbered" if numbered else "overwrite"
    trainer = subprocess.Popen([sys.executable, "-c", _TRAINER, str(directory), mode], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(120, trainer.kill)
    watchdog.start()
    try:
        assert trainer.stdout.readline() == "ready\n", trainer.stderr.read()
        for _ in range(rng.randint(2, 4)):
            assert trainer.stdout.readline().startswith("saving"), trainer.stderr.read()
        time.sleep(rng.uniform(0, 0.08))
    finally:
        trainer.send_signal(signal.SIGKILL)
        trainer.wait()
        watchdog.cancel()
        trainer.stdout.close()
        trainer.stderr.close()


@pytest.mark.parametrize("numbered", [True, False], ids=["numbered", "overwritten"])
def test_a_process_killed_mid_save_leaves_a_restorable_checkpoint(tmp_path, numbered):
    """Numbered saves keep the previous checkpoint; unnumbered ones replace it, each file whole or not at all."""
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    step_var = tf.Variable(0, dtype=tf.int64, name="global_step")
    weights = [tf.Variable(tf.zeros([512, 1024]), name=f"w{i}") for i in range(6)]
    saver = tf.train.Saver()
    latest = 0
    for _ in range(5):
        _kill_during_a_save(tmp_path, numbered, rng)
        state = tf.train.get_checkpoint_state(str(tmp_path))
        assert state is not None and state.model_checkpoint_path == state.all_model_checkpoint_paths[-1], seed
        steps = []
        for path in state.all_model_checkpoint_paths:
            with tf.Session() as sess:
                saver.restore(sess, path)
                step, *values = sess.run([step_var.value()] + [w.value() for w in weights])
            assert all((v == step).all() for v in values), (seed, path)
            assert not numbered or path.endswith(f"-{step}"), (seed, path)
            steps.append(step)
        assert steps[-1] > latest, seed
        latest = steps[-1]


# -- no pickle ------------------------------------------------------------------------------------

_PICKLERS = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "joblib", "shelve"}


def _pickle_uses(path: pathlib.Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in _PICKLERS]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _PICKLERS:
            found.append(node.module)
        elif isinstance(node, ast.keyword) and node.arg == "allow_pickle":
            found.append("allow_pickle=")
    return [f"{path.relative_to(ROOT)}:{name}" for name in found]


def test_no_module_of_tfnb_can_unpickle():
    packages = [ROOT / "tfnb", ROOT / "kernels", ROOT / "visualizer"]
    sources = [p for package in packages for p in package.rglob("*.py")]
    assert len(sources) > 20
    assert [use for p in sources for use in _pickle_uses(p)] == []
