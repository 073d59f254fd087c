"""Queues, QueueRunner and Coordinator: blocking, closing, timeouts, nothing lost, many threads at once."""

import threading
import time
from collections import Counter

import numpy as np
import pytest

import tfnb as tf

SHORT = tf.RunOptions(timeout_in_ms=50)


def _in_thread(fn):
    """Starts fn in a thread; returns (thread, box) where box gets ('ok', value) or ('error', exception)."""
    box = []

    def run():
        try:
            box.append(("ok", fn()))
        except Exception as error:  # noqa: BLE001 (the test inspects it)
            box.append(("error", error))
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def _wait_until_blocked(thread, seconds=0.1):
    thread.join(seconds)
    assert thread.is_alive(), "the op should be waiting"


# -- FIFOQueue basics ----------------------------------------------------------------------------------


def test_fifo_order_batches_and_static_shapes():
    q = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], [2]])
    x, y = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.float32, [None, 2])
    enqueue_many = q.enqueue_many([x, y])
    one = q.dequeue()
    many = q.dequeue_many(3)
    up_to = q.dequeue_up_to(4)
    assert [t.shape.as_list() for t in one] == [[], [2]]
    assert [t.shape.as_list() for t in many] == [[3], [3, 2]]
    assert [t.shape.as_list() for t in up_to] == [[None], [None, 2]]
    assert q.name == "fifo_queue" and one[0].op.name == "fifo_queue_Dequeue"
    assert q.dtypes == [tf.int32, tf.float32] and q.shapes == [tf.TensorShape([]), tf.TensorShape([2])]
    with tf.Session() as sess:
        sess.run(enqueue_many, {x: np.arange(5), y: np.arange(10).reshape(5, 2)})
        sess.run(q.enqueue([5, [10.0, 11.0]]))
        assert sess.run(q.size()) == 6
        first = sess.run(one)
        assert first[0] == 0 and first[1].tolist() == [0, 1]
        ints, floats = sess.run(many)
        assert ints.tolist() == [1, 2, 3] and floats.tolist() == [[2, 3], [4, 5], [6, 7]]
        sess.run(q.close())
        ints, floats = sess.run(up_to)
        assert ints.tolist() == [4, 5] and floats.tolist() == [[8, 9], [10, 11]]
        assert sess.run(q.is_closed())


def test_named_components_are_dicts():
    q = tf.FIFOQueue(4, [tf.int32, tf.string], names=["n", "s"])
    enqueue = q.enqueue({"n": 3, "s": "three"})
    out = q.dequeue()
    assert set(out) == {"n", "s"} and q.names == ["n", "s"]
    with pytest.raises(ValueError, match="must match the names"):
        q.enqueue({"n": 1})
    with pytest.raises(ValueError, match="dictionary"):
        q.enqueue([1, "one"])
    with tf.Session() as sess:
        sess.run(enqueue)
        assert sess.run(out) == {"n": 3, "s": b"three"}


def test_shapes_are_checked_when_building_and_when_running():
    q = tf.FIFOQueue(4, tf.float32, shapes=[2])
    with pytest.raises(ValueError, match="does not fit"):
        q.enqueue([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="holds 1 components, but 3 were given"):
        q.enqueue([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(4, tf.float32, shapes=[[None]])
    p = tf.placeholder(tf.float32, None)
    enqueue = q.enqueue(p)
    unshaped = tf.FIFOQueue(4, tf.float32)
    mixed = unshaped.dequeue_many(2)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Shape mismatch in tuple component 0. Expected \[2\]"):
            sess.run(enqueue, {p: [1.0, 2.0, 3.0]})
        assert sess.run(q.size()) == 0
        sess.run(unshaped.enqueue(p), {p: [1.0]})
        sess.run(unshaped.enqueue(p), {p: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
            sess.run(mixed)


def test_an_enqueued_feed_is_copied():
    q = tf.FIFOQueue(2, tf.float32, shapes=[[3]])
    p = tf.placeholder(tf.float32, [3])
    value = np.zeros(3, np.float32)
    with tf.Session() as sess:
        sess.run(q.enqueue(p), {p: value})
        value[:] = 7
        assert sess.run(q.dequeue()).tolist() == [0, 0, 0]


# -- blocking, timeouts, closing --------------------------------------------------------------------------


def test_dequeue_waits_for_an_element_and_enqueue_for_room():
    q = tf.FIFOQueue(1, tf.int32)
    p = tf.placeholder(tf.int32, [])
    enqueue, dequeue = q.enqueue(p), q.dequeue()
    with tf.Session() as sess:
        waiting, box = _in_thread(lambda: sess.run(dequeue))
        _wait_until_blocked(waiting)
        sess.run(enqueue, {p: 1})
        waiting.join(5)
        assert box == [("ok", 1)]
        sess.run(enqueue, {p: 2})
        blocked, box = _in_thread(lambda: sess.run(enqueue, {p: 3}))
        _wait_until_blocked(blocked)
        assert sess.run(dequeue) == 2
        blocked.join(5)
        assert box == [("ok", None)] and sess.run(dequeue) == 3


def test_timeouts_raise_deadline_exceeded_and_lose_nothing():
    """A dequeue takes all its elements or none; an enqueue keeps the elements it added before failing."""
    q = tf.FIFOQueue(3, tf.int32)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2]]))
        with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out waiting for notification"):
            sess.run(q.dequeue_many(3), options=SHORT)
        assert sess.run(q.size()) == 2
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.enqueue_many([[3, 4]]), options=SHORT)  # adds 3 as room allows, as TF does, then times out
        assert sess.run(q.dequeue_many(3)).tolist() == [1, 2, 3]


def test_closed_queue_errors_use_tf_wording():
    q = tf.FIFOQueue(5, tf.int32)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2]]))
        sess.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError,
                           match=r"FIFOQueue 'fifo_queue' is closed and has insufficient elements \(requested 3, "
                                 r"current size 2\)"):
            sess.run(q.dequeue_many(3))
        with pytest.raises(tf.errors.CancelledError, match="FIFOQueue 'fifo_queue' is closed."):
            sess.run(q.enqueue(3))
        with pytest.raises(tf.errors.CancelledError, match="is already closed"):
            sess.run(q.close())
        assert sess.run(q.dequeue_up_to(5)).tolist() == [1, 2]
        with pytest.raises(tf.errors.OutOfRangeError, match=r"\(requested 5, current size 0\)"):
            sess.run(q.dequeue_up_to(5))


def test_closing_wakes_a_waiting_dequeue():
    q = tf.FIFOQueue(5, tf.int32)
    with tf.Session() as sess:
        waiting, box = _in_thread(lambda: sess.run(q.dequeue()))
        _wait_until_blocked(waiting)
        sess.run(q.close())
        waiting.join(5)
        assert box[0][0] == "error" and isinstance(box[0][1], tf.errors.OutOfRangeError)


def test_close_lets_waiting_enqueues_finish_and_cancel_cancels_them():
    q = tf.FIFOQueue(1, tf.int32)
    p = tf.placeholder(tf.int32, [])
    enqueue, dequeue = q.enqueue(p), q.dequeue()
    with tf.Session() as sess:
        sess.run(enqueue, {p: 1})
        blocked, box = _in_thread(lambda: sess.run(enqueue, {p: 2}))
        _wait_until_blocked(blocked)
        closing, closed = _in_thread(lambda: sess.run(q.close()))
        _wait_until_blocked(closing)  # close waits for the enqueue that was already waiting
        assert sess.run(dequeue) == 1
        blocked.join(5), closing.join(5)
        assert box == [("ok", None)] and closed == [("ok", None)]
        assert sess.run(dequeue) == 2

    q = tf.FIFOQueue(1, tf.int32)
    enqueue = q.enqueue(p)
    with tf.Session() as sess:
        sess.run(enqueue, {p: 1})
        blocked, box = _in_thread(lambda: sess.run(enqueue, {p: 2}))
        _wait_until_blocked(blocked)
        sess.run(q.close(cancel_pending_enqueues=True))
        blocked.join(5)
        assert isinstance(box[0][1], tf.errors.CancelledError) and "Enqueue operation was cancelled" in str(box[0][1])
        assert sess.run(q.dequeue_up_to(3)).tolist() == [1]


def test_closing_the_session_cancels_waiting_ops():
    q = tf.FIFOQueue(1, tf.int32)
    sess = tf.Session()
    waiting, box = _in_thread(lambda: sess.run(q.dequeue()))
    _wait_until_blocked(waiting)
    sess.close()
    waiting.join(5)
    assert isinstance(box[0][1], tf.errors.CancelledError)


def test_an_enqueue_larger_than_the_capacity_goes_in_as_room_appears():
    q = tf.FIFOQueue(2, tf.int32)
    with tf.Session() as sess:
        filling, box = _in_thread(lambda: sess.run(q.enqueue_many([np.arange(5)])))
        got = [sess.run(q.dequeue()) for _ in range(5)]
        filling.join(5)
        assert got == [0, 1, 2, 3, 4] and box == [("ok", None)]


def test_shared_name_shares_one_queue_and_definitions_must_agree():
    a = tf.FIFOQueue(3, tf.int32, shared_name="shared")
    b = tf.FIFOQueue(3, tf.int32, shared_name="shared")
    c = tf.FIFOQueue(4, tf.int32, shared_name="shared")
    with tf.Session() as sess:
        sess.run(a.enqueue(7))
        assert sess.run(b.dequeue()) == 7
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shared resource 'shared'.*capacity=3"):
            sess.run(c.size())


def test_queue_ops_are_placed_with_the_queue():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/device:CPU:1"):
        q = tf.FIFOQueue(3, tf.int32)
    size = q.size()
    with tf.Session(config=config) as sess:
        sess.run(q.enqueue(1))
        assert sess.run(size) == 1
    assert size.op.assigned_device.endswith("CPU:1")


def test_a_graph_with_queues_round_trips_through_a_graph_def():
    q = tf.PaddingFIFOQueue(3, [tf.int32], shapes=[[None]], name="padded")
    q.enqueue([[1, 2]])
    graph_def = tf.get_default_graph().as_graph_def()
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
    attrs = graph.get_operation_by_name("padded").attrs
    assert attrs["shapes"] == (tf.TensorShape([None]),) and attrs["capacity"] == 3


# -- PaddingFIFOQueue and RandomShuffleQueue -----------------------------------------------------------


def test_padding_queue_pads_each_batch_to_its_largest_element():
    q = tf.PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None], [None, 2]])
    x, s = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.string, [None, 2])
    enqueue = q.enqueue([x, s])
    many = q.dequeue_many(2)
    assert [t.shape.as_list() for t in many] == [[2, None], [2, None, 2]]
    with pytest.raises(ValueError, match="Shapes must be provided"):
        tf.PaddingFIFOQueue(5, [tf.int32], shapes=None)
    with tf.Session() as sess:
        sess.run(enqueue, {x: [1, 2, 3], s: [["a", "b"]]})
        sess.run(enqueue, {x: [4], s: [["c", "d"], ["e", "f"]]})
        sess.run(enqueue, {x: [5, 6], s: [["g", "h"]]})
        ints, strings = sess.run(many)
        assert ints.tolist() == [[1, 2, 3], [4, 0, 0]]
        assert strings.tolist() == [[[b"a", b"b"], [b"", b""]], [[b"c", b"d"], [b"e", b"f"]]]
        assert [v.tolist() for v in sess.run(q.dequeue())] == [[5, 6], [[b"g", b"h"]]]


def test_random_shuffle_queue_is_a_seeded_permutation_keeping_min_after_dequeue():
    def run_once():
        graph = tf.Graph()
        with graph.as_default():
            q = tf.RandomShuffleQueue(100, 10, tf.int32, shapes=[[]], seed=42)
            with tf.Session() as sess:
                sess.run(q.enqueue_many([np.arange(50)]))
                got = sess.run(q.dequeue_many(40)).tolist()
                with pytest.raises(tf.errors.DeadlineExceededError):
                    sess.run(q.dequeue(), options=SHORT)  # would leave fewer than min_after_dequeue
                assert sess.run(q.size()) == 10
                sess.run(q.close())
                return got + sess.run(q.dequeue_up_to(20)).tolist()
    first, second = run_once(), run_once()
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert first == second


# -- many threads -------------------------------------------------------------------------------------------


def _move_through(queue, total, batches, producers, consumers):
    """Producers enqueue range(total) in batches while consumers dequeue theirs; returns everything dequeued."""
    values = tf.placeholder(tf.int64, [None])
    enqueue = queue.enqueue_many([values])
    dequeue = queue.dequeue_up_to(batches[1])
    with tf.Session() as sess:
        chunks = np.array_split(np.arange(total, dtype=np.int64), total // batches[0])
        shares = [chunks[i::producers] for i in range(producers)]
        received = [[] for _ in range(consumers)]

        def produce(mine):
            for chunk in mine:
                sess.run(enqueue, {values: chunk})

        def consume(out):
            try:
                while True:
                    out.append(sess.run(dequeue))
            except tf.errors.OutOfRangeError:
                pass
        producer_threads = [threading.Thread(target=produce, args=(s,)) for s in shares]
        consumer_threads = [threading.Thread(target=consume, args=(r,)) for r in received]
        for thread in producer_threads + consumer_threads:
            thread.start()
        for thread in producer_threads:
            thread.join(60)
        sess.run(queue.close())
        for thread in consumer_threads:
            thread.join(60)
        assert not any(t.is_alive() for t in producer_threads + consumer_threads)
    return np.concatenate([c for r in received for c in r]), [len(r) for r in received]


def test_a_million_elements_pass_through_a_fifo_queue_exactly_once():
    total = 1_000_000
    out, counts = _move_through(tf.FIFOQueue(10_000, tf.int64, shapes=[[]]), total, (250, 333), producers=4,
                                consumers=4)
    assert len(out) == total
    np.testing.assert_array_equal(np.sort(out), np.arange(total))
    assert sum(c > 0 for c in counts) >= 2  # the consumers shared the work


def test_elements_pass_through_a_random_shuffle_queue_exactly_once():
    total = 100_000
    queue = tf.RandomShuffleQueue(5_000, 1_000, tf.int64, shapes=[[]], seed=7)
    out, _ = _move_through(queue, total, (500, 200), producers=3, consumers=3)
    assert Counter(out.tolist()) == Counter(range(total))
    assert not np.array_equal(out, np.arange(total))


# -- QueueRunner and Coordinator ---------------------------------------------------------------------------


def test_queue_runner_fills_a_queue_until_the_coordinator_stops():
    counter = tf.Variable(0, name="counter")
    q = tf.FIFOQueue(4, tf.int32)
    runner = tf.train.QueueRunner(q, [q.enqueue(counter.assign_add(1))] * 2)
    tf.train.add_queue_runner(runner)
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == [runner]
    dequeue = q.dequeue()
    with tf.Session() as sess:
        sess.run(counter.initializer)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert len(threads) == 3  # two enqueue threads and one that closes the queue on stop
        got = [sess.run(dequeue) for _ in range(20)]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert len(set(got)) == 20 and min(got) >= 1
    assert all(not t.is_alive() for t in threads) and coord.joined


def test_out_of_range_ends_runners_quietly_and_closes_the_queue():
    source = tf.FIFOQueue(10, tf.int32)
    sink = tf.FIFOQueue(10, tf.int32)
    runner = tf.train.QueueRunner(sink, [sink.enqueue(source.dequeue())] * 2)
    with tf.Session() as sess:
        sess.run(source.enqueue_many([[1, 2, 3]]))
        sess.run(source.close())
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord, start=True)
        assert sorted(sess.run(sink.dequeue_up_to(10)).tolist()) == [1, 2, 3]
        assert sess.run(sink.is_closed())
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert runner.exceptions_raised == []


def test_a_runner_error_stops_the_coordinator_and_join_raises_it():
    q = tf.FIFOQueue(10, tf.float32)
    p = tf.placeholder(tf.float32, [])  # never fed: every run fails
    runner = tf.train.QueueRunner(q, [q.enqueue(p)])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord, start=True)
        assert coord.wait_for_stop(5)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(q.dequeue())  # the close-on-stop thread closed the queue
        with pytest.raises(tf.errors.InvalidArgumentError, match="You must feed a value for placeholder"):
            coord.join(threads, stop_grace_period_secs=5)


def test_coordinator_stop_on_exception_join_and_stragglers():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        raise ValueError("boom")
    assert coord.should_stop()
    with pytest.raises(ValueError, match="boom"):
        coord.raise_requested_exception()
    with pytest.raises(ValueError, match="boom"):
        coord.join([])
    coord.clear_stop()
    with coord.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "input done")  # a clean stop: nothing to re-raise
    coord.join([])

    coord = tf.train.Coordinator()
    release = threading.Event()
    straggler = threading.Thread(target=release.wait, daemon=True)
    straggler.start()
    coord.request_stop()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="threads still running"):
        coord.join([straggler], stop_grace_period_secs=0.1)
    assert time.monotonic() - started < 2
    release.set()


def test_start_queue_runners_uses_the_default_session():
    q = tf.FIFOQueue(2, tf.int32)
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(1)]))
    with pytest.raises(ValueError, match="No default session"):
        tf.train.start_queue_runners()
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        assert sess.run(q.dequeue()) == 1
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
