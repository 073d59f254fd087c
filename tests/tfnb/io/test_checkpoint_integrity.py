"""Checkpoints detect corruption: checksums, index validation, truncation, crashed saves' leftovers, max_to_keep."""

import json
import os
import pathlib
import re
import struct

import numpy as np
import pytest

import tfnb as tf

W = np.arange(12, dtype=np.float32).reshape(4, 3)
B = np.array([1.5, -2.5, 3.5], np.float32)


@pytest.fixture
def checkpoint(tmp_path):
    """A checkpoint of w (float32 [4, 3]) and b (float32 [3]) at step 5, in a fresh default graph afterwards."""
    w, b = tf.Variable(W, name="w"), tf.Variable(B, name="b")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver([w, b]).save(sess, str(tmp_path / "model.ckpt"), global_step=5)
    tf.reset_default_graph()
    return path


def _restore_fresh(path):
    """Restores `path` into variables that start as 7s; returns (error or None, the variables' values after)."""
    with tf.Graph().as_default():
        w = tf.Variable(np.full((4, 3), 7, np.float32), name="w")
        b = tf.Variable(np.full(3, 7, np.float32), name="b")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            try:
                tf.train.Saver([w, b]).restore(sess, path)
                error = None
            except tf.errors.OpError as raised:
                error = raised
            return error, sess.run([w, b])


def _index(path) -> dict:
    return json.loads(pathlib.Path(path + ".index.json").read_text())


def _write_index(path, index: dict) -> None:
    pathlib.Path(path + ".index.json").write_text(json.dumps(index))


def _data_region(path, name) -> tuple[int, int]:
    return tuple(_index(path)["tensors"][name]["offsets"])


def test_a_flipped_byte_in_a_value_is_a_data_loss_naming_the_file_and_tensor(checkpoint):
    begin, _ = _data_region(checkpoint, "w")
    with open(checkpoint + ".safetensors", "r+b") as f:
        f.seek(begin + 5)
        byte = f.read(1)
        f.seek(begin + 5)
        f.write(bytes([byte[0] ^ 0x10]))
    error, (w, b) = _restore_fresh(checkpoint)
    assert isinstance(error, tf.errors.DataLossError)
    assert f"{checkpoint}.safetensors" in error.message and "tensor 'w'" in error.message
    assert "checksum does not match" in error.message
    assert (w == 7).all() and (b == 7).all()  # no variable changed


def test_swapped_offsets_of_two_same_size_tensors_are_a_data_loss(tmp_path):
    a, c = tf.Variable([1.0, 2.0], name="a"), tf.Variable([3.0, 4.0], name="c")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver([a, c]).save(sess, str(tmp_path / "m"))
    data = bytearray(pathlib.Path(path + ".safetensors").read_bytes())
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header["a"]["data_offsets"], header["c"]["data_offsets"] = header["c"]["data_offsets"], header["a"]["data_offsets"]
    text = json.dumps(header, separators=(",", ":")).encode().ljust(length)
    pathlib.Path(path + ".safetensors").write_bytes(data[:8] + text + data[8 + length:])
    with tf.Session() as sess, pytest.raises(tf.errors.DataLossError, match="tensor 'a'"):
        tf.train.Saver([a, c]).restore(sess, path)


@pytest.mark.parametrize("mutate, message", [
    (lambda i: i["tensors"]["w"].update(dtype="float64"), "tensor 'w': 48 bytes for a float64 tensor"),
    (lambda i: i["tensors"]["w"].update(shape=[3, 4]), "tensor 'w': the index records"),
    (lambda i: i["tensors"]["w"].update(crc32=i["tensors"]["w"]["crc32"] ^ 1), "tensor 'w': the index records"),
    (lambda i: i["tensors"]["w"].update(offsets=[0, 48]), "the index records|overlap"),
    (lambda i: i["tensors"]["b"].update(offsets=i["tensors"]["w"]["offsets"][:1] * 2), "b"),
    (lambda i: i["tensors"].pop("b"), "tensor 'b' is only in the data file"),
    (lambda i: i["tensors"].update(x=dict(i["tensors"]["b"])), "overlap"),
    (lambda i: i.update(format="tfnb-checkpoint-1"), "format 'tfnb-checkpoint-1'"),
    (lambda i: i.update(tensors=[]), "tensors a JSON object"),
    (lambda i: i.update(data_bytes=i["data_bytes"] + 1), "truncated|bytes where its index"),
    (lambda i: i["tensors"]["w"].update(shape=[-4, 3]), "is not a list of sizes"),
    (lambda i: i["tensors"]["w"].update(dtype="string"), "is not a dtype a checkpoint holds"),
    (lambda i: i.pop("save_id"), "not a tfnb checkpoint index"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_an_index_that_does_not_fit_its_data_is_refused_before_any_variable_changes(checkpoint, mutate, message):
    index = _index(checkpoint)
    mutate(index)
    _write_index(checkpoint, index)
    error, (w, b) = _restore_fresh(checkpoint)
    assert isinstance(error, tf.errors.DataLossError | tf.errors.OutOfRangeError), error
    assert re.search(message, error.message), error.message
    assert (w == 7).all() and (b == 7).all()
    for reader in (lambda: tf.train.list_variables(checkpoint), lambda: tf.train.load_variable(checkpoint, "w")):
        with pytest.raises((tf.errors.DataLossError, tf.errors.OutOfRangeError)):
            reader()


@pytest.mark.parametrize("garbage", [b"", b"{", b"[1, 2]", b"\xff\xfe\x00", b"[" * 5000 + b"]" * 5000, b"null"])
def test_an_index_that_is_not_json_is_a_data_loss_not_a_python_error(checkpoint, garbage):
    pathlib.Path(checkpoint + ".index.json").write_bytes(garbage)
    error, _ = _restore_fresh(checkpoint)
    assert isinstance(error, tf.errors.DataLossError) and "model.ckpt-5.index.json" in error.message
    with pytest.raises(tf.errors.DataLossError):
        tf.train.list_variables(checkpoint)


def test_a_truncated_data_file_is_out_of_range_as_in_tf(checkpoint):
    size = os.path.getsize(checkpoint + ".safetensors")
    with open(checkpoint + ".safetensors", "r+b") as f:
        f.truncate(size - 4)
    error, (w, _) = _restore_fresh(checkpoint)
    assert isinstance(error, tf.errors.OutOfRangeError) and "is truncated" in error.message
    assert (w == 7).all()


def test_list_and_load_validate_and_read_exact_values(checkpoint):
    assert tf.train.list_variables(checkpoint) == [("b", [3]), ("w", [4, 3])]
    np.testing.assert_array_equal(tf.train.load_variable(checkpoint, "w:0"), W)
    assert tf.train.load_variable(checkpoint, "b").dtype == np.float32
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found"):
        tf.train.load_variable(checkpoint, "nope")


def test_a_save_cut_between_its_data_and_its_index_restores_the_new_data(tmp_path):
    """An unnumbered save renames its data into place before its index; between the two, the data decides."""
    v = tf.Variable([1.0, 2.0], name="v")
    saver = tf.train.Saver([v])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
        old_index = pathlib.Path(path + ".index.json").read_bytes()
        sess.run(v.assign([3.0, 4.0]))
        saver.save(sess, str(tmp_path / "m"))
        pathlib.Path(path + ".index.json").write_bytes(old_index)  # as if killed before the index's rename
        sess.run(v.assign([0.0, 0.0]))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [3.0, 4.0])


def test_saving_creates_one_missing_directory_level_as_tf_does(tmp_path):
    v = tf.Variable(1.0, name="v")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver([v]).save(sess, str(tmp_path / "new" / "model.ckpt"))
        assert tf.train.checkpoint_exists(path)
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
            tf.train.Saver([v]).save(sess, str(tmp_path / "a" / "b" / "model.ckpt"))


def test_a_save_removes_what_crashed_saves_left_and_keeps_max_to_keep_on_disk(tmp_path):
    v = tf.Variable(1.0, name="v")
    dead_pid = 2**22 + 12345  # above Linux's pid_max default: no such process
    leftovers = [f".model.ckpt-9.safetensors.{dead_pid}.abc_123.tmp", f".checkpoint.{dead_pid}.xyz.tmp"]
    live = f".model.ckpt-9.index.json.{os.getpid()}.live.tmp"
    other = f".other.safetensors.{dead_pid}.abc.tmp"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = tf.train.Saver([v], max_to_keep=2)
        for step in (1, 2):
            first.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
        # A process killed after writing step 3's files but before the state file, and one killed between the
        # state file and the deletion of step 1: both leave checkpoints that no state file lists.
        tf.train.Saver([v]).save(sess, str(tmp_path / "model.ckpt"), global_step=3, write_state=False)
        for name in leftovers + [live, other]:
            (tmp_path / name).write_bytes(b"partial")
        second = tf.train.Saver([v], max_to_keep=2)  # a new process: it counts the state file's checkpoints
        second.save(sess, str(tmp_path / "model.ckpt"), global_step=4)
    names = set(os.listdir(tmp_path))
    assert not names & set(leftovers) and {live, other} <= names
    kept = sorted(n for n in names if n.endswith(".safetensors") and not n.startswith("."))
    assert kept == ["model.ckpt-2.safetensors", "model.ckpt-4.safetensors"]
    assert [p.rsplit("-", 1)[1] for p in tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths] == [
        "2", "4"]


def test_import_meta_graph_rebuilds_the_graph_and_a_saver_for_its_variables(checkpoint):
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(checkpoint + ".meta.json", import_scope="restored")
        with tf.Session() as sess:
            saver.restore(sess, checkpoint)
            np.testing.assert_array_equal(sess.run("restored/w/Read/ReadVariableOp:0"), W)
    with pytest.raises(OSError, match="File does not exist"):
        tf.train.import_meta_graph(checkpoint + ".nothing.json")
