"""Input readers: text lines, CSV parsing, .npy/.npz shards, producers and batching, and their errors."""

import re
from collections import Counter

import numpy as np
import pytest

import tfnb as tf
from tfnb.input.readers import NpyShardReader


def _write(path, text: str) -> str:
    path.write_bytes(text.encode())
    return str(path)


def _drain(sess, fetch) -> list:
    """Runs `fetch` until OutOfRangeError; the list of results."""
    out = []
    try:
        while True:
            out.append(sess.run(fetch))
    except tf.errors.OutOfRangeError:
        return out


def _run_pipeline(fetch, local_init: bool = True) -> list:
    """Runs the graph's queue runners and collects `fetch` until the input runs out; join re-raises errors."""
    with tf.Session() as sess:
        if local_init:
            sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            return _drain(sess, fetch)
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)


def _names(files) -> tf.FIFOQueue:
    """A closed queue of file names (filled when the session first runs `fill`)."""
    queue = tf.FIFOQueue(len(files), tf.string)
    with tf.control_dependencies([queue.enqueue_many([files])]):
        return queue, queue.close()


# -- TextLineReader -------------------------------------------------------------------------------------


def test_text_line_reader_reads_lines_across_files_with_keys(tmp_path):
    a = _write(tmp_path / "a.txt", "head\none\r\ntwo\n")
    b = _write(tmp_path / "b.txt", "head\nthree")
    queue, fill = _names([a, b])
    reader = tf.TextLineReader(skip_header_lines=1)
    key, value = reader.read(queue)
    assert key.shape == tf.TensorShape([]) and value.dtype is tf.string
    with tf.Session() as sess:
        sess.run(fill)
        records = _drain(sess, [key, value])
        assert records == [[f"{a}:2".encode(), b"one"], [f"{a}:3".encode(), b"two"], [f"{b}:2".encode(), b"three"]]
        assert sess.run([reader.num_records_produced(), reader.num_work_units_completed()]) == [3, 2]
        sess.run(reader.reset())
        assert sess.run(reader.num_records_produced()) == 0


def test_read_up_to_crosses_files_and_returns_what_is_left(tmp_path):
    a = _write(tmp_path / "a.txt", "1\n2\n")
    b = _write(tmp_path / "b.txt", "3\n4\n5\n")
    queue, fill = _names([a, b])
    keys, values = tf.TextLineReader().read_up_to(queue, 4)
    with tf.Session() as sess:
        sess.run(fill)
        assert sess.run(values).tolist() == [b"1", b"2", b"3", b"4"]
        assert sess.run(keys).tolist() == [f"{b}:3".encode()]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(values)


def test_a_missing_file_is_a_not_found_error_naming_it(tmp_path):
    missing = str(tmp_path / "nope.txt")
    queue, fill = _names([missing])
    _, value = tf.TextLineReader().read(queue)
    with tf.Session() as sess:
        sess.run(fill)
        with pytest.raises(tf.errors.NotFoundError, match=f"{missing}; No such file or directory"):
            sess.run(value)


# -- decode_csv -----------------------------------------------------------------------------------------


def test_decode_csv_types_defaults_quotes_and_selected_columns():
    records = tf.constant(['1,"a,b",2.5,7', ',"say ""hi""",,', '3,,1e3,-2'])
    ints, strings, floats, longs = tf.decode_csv(records, [[0], ["dflt"], [0.5], tf.constant([9], tf.int64)])
    assert [t.dtype for t in (ints, strings, floats, longs)] == [tf.int32, tf.string, tf.float32, tf.int64]
    na = tf.decode_csv(["x|NA|3", "y|4|NA"], [[""], [0.0], [-1]], field_delim="|", na_value="NA")
    selected = tf.decode_csv(["a,1,b,2"], [[0], [0]], select_cols=[1, 3])
    with tf.Session() as sess:
        i, s, f, n = sess.run([ints, strings, floats, longs])
        assert i.tolist() == [1, 0, 3] and s.tolist() == [b"a,b", b'say "hi"', b"dflt"]
        assert f.tolist() == [2.5, 0.5, 1000.0] and n.tolist() == [7, 9, -2]
        assert [v.tolist() for v in sess.run(na)] == [[b"x", b"y"], [0.0, 4.0], [3, -1]]
        assert [v.tolist() for v in sess.run(selected)] == [[1], [2]]


def test_decode_csv_errors_name_the_record():
    required = tf.decode_csv(["1,"], [[0], tf.constant([], tf.int32)])
    wrong_count = tf.decode_csv(["1,2,3"], [[0], [0]])
    not_a_number = tf.decode_csv(["1,abc"], [[0], [0.0]])
    too_big = tf.decode_csv(["99999999999"], [[0]])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 is required but missing in record 0!"):
            sess.run(required)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 3 in record 0"):
            sess.run(wrong_count)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 in record 0 is not a valid float: abc"):
            sess.run(not_a_number)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid int32"):
            sess.run(too_big)
    with pytest.raises(ValueError, match="one character"):
        tf.decode_csv(["a"], [[0]], field_delim="||")
    with pytest.raises(TypeError, match="bool"):
        tf.decode_csv(["a"], [[True]])


def test_malformed_csv_read_from_a_file_names_the_file_and_line(tmp_path):
    path = _write(tmp_path / "data.csv", "x,y\n1,2\n3,oops\n")
    queue, fill = _names([path])
    _, line = tf.TextLineReader(skip_header_lines=1).read(queue)
    x, y = tf.decode_csv(line, [[0], [0]])
    with tf.Session() as sess:
        sess.run(fill)
        assert sess.run([x, y]) == [1, 2]
        with pytest.raises(tf.errors.InvalidArgumentError, match=f"not a valid int32: oops \\(line {path}:3\\)"):
            sess.run([x, y])


# -- producers and batching ---------------------------------------------------------------------------------


def test_string_input_producer_gives_each_string_once_per_epoch():
    names = [b"a", b"b", b"c", b"d"]
    queue = tf.train.string_input_producer(names, num_epochs=3, seed=5)
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 1
    assert len(tf.local_variables()) == 1 and tf.local_variables()[0].name.startswith("input_producer/limit_epochs")
    got = _run_pipeline(queue.dequeue())
    assert len(got) == 12 and all(sorted(got[i:i + 4]) == names for i in range(0, 12, 4))
    assert got[:4] != names or got[4:8] != names  # shuffled
    assert got == _run_pipeline(queue.dequeue())  # the seed makes the order reproducible


def test_string_input_producer_without_shuffle_and_its_argument_checks():
    queue = tf.train.string_input_producer(["x", "y"], num_epochs=2, shuffle=False)
    assert _run_pipeline(queue.dequeue()) == [b"x", b"y", b"x", b"y"]
    with pytest.raises(ValueError, match="non-null"):
        tf.train.string_input_producer([])
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.string_input_producer(["x"], num_epochs=0)


def test_num_epochs_needs_the_local_variables_initialized():
    queue = tf.train.string_input_producer(["x"], num_epochs=1)
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
        _run_pipeline(queue.dequeue(), local_init=False)


def test_batch_and_shuffle_batch_keep_structure_and_every_element():
    values = tf.train.limit_epochs(tf.constant(np.arange(10)), num_epochs=1)
    batched = tf.train.batch({"v": values, "w": values * 2}, batch_size=4, enqueue_many=True,
                             allow_smaller_final_batch=True)
    assert set(batched) == {"v", "w"} and batched["v"].shape.as_list() == [None]
    got = _run_pipeline(batched)
    assert [len(b["v"]) for b in got] == [4, 4, 2]
    assert np.concatenate([b["v"] for b in got]).tolist() == list(range(10))
    assert all((b["w"] == 2 * b["v"]).all() for b in got)

    tf.reset_default_graph()
    values = tf.train.limit_epochs(tf.constant(np.arange(100)), num_epochs=1)
    shuffled = tf.train.shuffle_batch([values], batch_size=10, capacity=50, min_after_dequeue=20, seed=3,
                                      enqueue_many=True)
    assert shuffled.shape.as_list() == [10]
    got = np.concatenate(_run_pipeline(shuffled))
    assert sorted(got.tolist()) == list(range(100)) and got.tolist() != list(range(100))


def test_batch_with_dynamic_pad():
    queue = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    length = queue.dequeue()
    padded = tf.train.batch([tf.fill(tf.reshape(length, [1]), length)], batch_size=3, dynamic_pad=True,
                            shapes=[[None]])
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([[1, 3, 2]]))
        sess.run(queue.close())  # so the runner, waiting on this queue once it is empty, ends
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert sess.run(padded).tolist() == [[1, 0, 0], [3, 3, 3], [2, 2, 0]]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    with pytest.raises(ValueError, match="fully defined"):
        tf.train.batch([tf.placeholder(tf.float32, [None])], 2)


# -- NumPy shards ---------------------------------------------------------------------------------------------


def _shards(tmp_path, count=3, rows=7):
    paths = []
    for i in range(count):
        path = tmp_path / f"part-{i}.npy"
        column = np.arange(i * rows, (i + 1) * rows).reshape(rows, 1)
        np.save(path, (column * [1, 10]).astype(np.float32))
        paths.append(str(path))
    return paths


def test_npy_shards_give_every_row_once_per_epoch(tmp_path):
    _shards(tmp_path)
    reader = NpyShardReader(str(tmp_path / "part-*.npy"), batch_size=5, num_epochs=2)
    assert reader.batch.shape.as_list() == [None, 2] and reader.batch.dtype is tf.float32
    batches = _run_pipeline(reader.batch)
    assert [len(b) for b in batches] == [5] * 8 + [2]
    rows = np.concatenate(batches)
    assert Counter(rows[:, 0].tolist()) == Counter(list(range(21)) * 2)
    np.testing.assert_array_equal(rows[:, 1], rows[:, 0] * 10)


def test_npy_shards_shuffled_with_a_seed(tmp_path):
    files = _shards(tmp_path)

    def epoch_rows():
        tf.reset_default_graph()
        reader = NpyShardReader(files, batch_size=4, shuffle=True, seed=11, num_epochs=1, capacity=12)
        return np.concatenate(_run_pipeline(reader.batch))[:, 0].tolist()
    first = epoch_rows()
    assert sorted(first) == list(range(21)) and first != sorted(first)


def test_npz_shards_give_a_dict_of_named_batches(tmp_path):
    for i in range(2):
        np.savez(tmp_path / f"s{i}.npz", image=np.full((3, 2, 2), i, np.uint8), label=np.arange(3) + 3 * i)
    reader = NpyShardReader(str(tmp_path / "*.npz"), batch_size=2, num_epochs=1)
    assert set(reader.batch) == {"image", "label"}
    assert reader.batch["image"].shape.as_list() == [None, 2, 2] and reader.batch["label"].dtype is tf.int64
    batches = _run_pipeline(reader.batch)
    labels = np.concatenate([b["label"] for b in batches])
    images = np.concatenate([b["image"] for b in batches])
    assert labels.tolist() == list(range(6)) and (images[:, 0, 0] == labels // 3).all()


@pytest.mark.parametrize("bad,message", [
    (np.zeros((4, 2), np.float64), "has dtype float64, but this reader reads float32"),
    (np.zeros((4, 3), np.float32), r"has rows of shape \[3\], but this reader reads rows of shape \[2\]"),
    (np.zeros(4, np.float32), r"has rows of shape \[\], but this reader reads rows of shape \[2\]"),
    (np.array([{"a": 1}], dtype=object), "is not a readable .npy or .npz file"),
])
def test_a_shard_that_does_not_match_is_an_error_naming_it(tmp_path, bad, message):
    files = _shards(tmp_path, count=1)
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, bad, allow_pickle=True)
    reader = NpyShardReader(files + [str(wrong)], batch_size=100, num_epochs=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(str(wrong)) + " " + message):
        _run_pipeline(reader.batch)


def test_shards_are_never_unpickled(tmp_path):
    pickled = tmp_path / "objects.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(str(pickled))):
        NpyShardReader([str(pickled)], batch_size=2)
    archive = tmp_path / "objects.npz"
    np.savez(archive, x=np.array([{"a": 1}], dtype=object))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Object arrays cannot be loaded"):
        NpyShardReader([str(archive)], batch_size=2)


def test_missing_shards_are_not_found_errors_naming_them(tmp_path):
    files = _shards(tmp_path, count=1)
    missing = str(tmp_path / "gone.npy")
    with pytest.raises(tf.errors.NotFoundError, match="No files match"):
        NpyShardReader(str(tmp_path / "*.npz"), batch_size=2)
    with pytest.raises(tf.errors.NotFoundError, match=missing):
        NpyShardReader([missing], batch_size=2)
    reader = NpyShardReader(files + [missing], batch_size=100, num_epochs=1)
    with pytest.raises(tf.errors.NotFoundError, match=f"{missing}; No such file or directory"):
        _run_pipeline(reader.batch)
