"""The intra-op threads: which plans own the cores, BLAS limits of overlapping runs, split kernels."""

import sys
import threading
import time
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import tfnb as tf
from tfnb.framework.op_registry import _OPS, register_op
from tfnb.kernels import intra_op
from tfnb.kernels.registry import _KERNELS, kernel
from tfnb.ops.inference import same_as_input


def blas_threads() -> list[int]:
    return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]


@pytest.fixture
def probes():
    """Two identity ops recording (BLAS threads, run width) when they run: one parallel kernel, one not."""
    seen = {}
    for op_type, parallel in (("SplitProbe", True), ("PlainProbe", False)):
        register_op(op_type, same_as_input(0))

        def factory(node, op_type=op_type):
            def run(x):
                seen[op_type] = (blas_threads(), intra_op.run_width())
                return x
            return run

        kernel(op_type, parallel=parallel)(factory)
    yield seen
    for op_type in ("SplitProbe", "PlainProbe"):
        del _OPS[op_type]
        del _KERNELS[(op_type, "*")]


def probe(op_type: str, x):
    return tf.get_default_graph().create_op(op_type, [x]).outputs[0]


def test_a_plan_with_a_parallel_kernel_owns_the_cores_and_others_leave_them_to_blas(probes):
    before = blas_threads()
    x = tf.placeholder(tf.float32, [])
    split, plain = probe("SplitProbe", x), probe("PlainProbe", x)
    with tf.Session() as sess:
        sess.run(plain, {x: 1.0})
        assert probes["PlainProbe"] == (before, 1)
        sess.run([split, plain], {x: 1.0})  # one plan: both kernels run while its kernels own the cores
    width = intra_op.default_width()
    if width > 1:
        assert probes["SplitProbe"] == ([1] * len(before), width) == probes["PlainProbe"]
    assert blas_threads() == before


def test_intra_op_threads_set_the_width_and_one_thread_means_one(probes):
    x = tf.placeholder(tf.float32, [])
    split = probe("SplitProbe", x)
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=3)) as sess:
        sess.run(split, {x: 1.0})
        assert probes["SplitProbe"][1] == 3 and set(probes["SplitProbe"][0]) <= {1}
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
        sess.make_callable(split, [x])(1.0)
        assert probes["SplitProbe"][1] == 1 and set(probes["SplitProbe"][0]) <= {1}


def test_overlapping_runs_hold_the_smallest_blas_limit_until_the_last_ends():
    before = blas_threads()
    if not before or max(before) < 2:
        pytest.skip("BLAS runs one thread here: nothing to limit")
    first, second = intra_op.RunThreads(1, 1), intra_op.RunThreads(1, 2)
    second.__enter__()
    assert blas_threads() == [min(2, n) for n in before]
    first.__enter__()
    assert blas_threads() == [1] * len(before)
    second.__exit__(None, None, None)
    assert blas_threads() == [1] * len(before)
    first.__exit__(None, None, None)
    assert blas_threads() == before


def test_run_width_is_per_thread_and_nests():
    widths = []
    with intra_op.RunThreads(4, 1):
        with intra_op.RunThreads(2, 1):
            widths.append(intra_op.run_width())
        widths.append(intra_op.run_width())
        other = threading.Thread(target=lambda: widths.append(intra_op.run_width()))
        other.start()
        other.join()
    widths.append(intra_op.run_width())
    assert widths == [2, 4, 1, 1]


def test_parallel_parts_cover_the_range_in_order_across_threads(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    names = set()

    def part(rows):
        names.add(threading.current_thread().name)
        return list(range(10))[rows]

    with intra_op.RunThreads(3, 1):
        parts = intra_op.parallel_parts(part, 10, 10)
    assert sum(parts, []) == list(range(10)) and len(parts) == 3 and len(names) > 1
    assert intra_op.parallel_parts(part, 10, 10) == [list(range(10))]  # outside a run: the calling thread alone


def test_a_split_inside_a_part_runs_in_the_part_s_thread(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)

    def part(rows):
        inner = intra_op.parallel_parts(lambda inner_rows: threading.get_ident(), 4, 4)
        return intra_op.run_width(), inner, threading.get_ident()

    with intra_op.RunThreads(2, 1):
        parts = intra_op.parallel_parts(part, 2, 2)
        assert intra_op.run_width() == 2  # the calling thread's width is back once its part has run
    assert [(width, inner) for width, inner, _ in parts] == [(1, [thread]) for _, _, thread in parts]


def test_a_failing_part_raises_once_every_part_has_ended(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    ended = []

    def part(rows):
        if rows.start == 0:
            raise ValueError("the first part failed")
        time.sleep(0.05)  # a helper's part still running when the calling thread's part fails
        ended.append(rows)

    with intra_op.RunThreads(2, 1), pytest.raises(ValueError, match="first part"):
        intra_op.parallel_parts(part, 4, 4)
    assert ended == [slice(2, 4)]
    with intra_op.RunThreads(2, 1), pytest.raises(ZeroDivisionError):  # a helper's error reaches the caller
        intra_op.parallel_parts(lambda rows: rows.start // 0 if rows.start else None, 4, 4)
    with intra_op.RunThreads(2, 1):  # and the helpers serve the next call
        assert intra_op.parallel_parts(lambda rows: rows, 4, 4) == [slice(0, 2), slice(2, 4)]


def test_calls_from_several_threads_at_once_take_helpers_of_their_own(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    all_in_parts = threading.Barrier(4, timeout=10)  # broken unless four parts run at once: two per call
    results = {}

    def call(name):
        def part(rows):
            all_in_parts.wait()
            return (name, rows.start)
        with intra_op.RunThreads(2, 1):
            results[name] = intra_op.parallel_parts(part, 2, 2)

    callers = [threading.Thread(target=call, args=(name,)) for name in ("a", "b")]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert results == {"a": [("a", 0), ("a", 1)], "b": [("b", 0), ("b", 1)]}


def test_helpers_run_their_parts_with_the_calling_thread_s_numpy_settings(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)

    def part(rows):
        return threading.current_thread().name, np.geterr()["invalid"], np.getbufsize()

    with intra_op.RunThreads(2, 1), intra_op.KernelNumpyState():
        parts = intra_op.parallel_parts(part, 2, 2)
    assert {name for name, _, _ in parts} == {threading.current_thread().name, "tfnb-intra-op"}
    assert {(invalid, size) for _, invalid, size in parts} == {("ignore", intra_op.KERNEL_BUFSIZE)}
    assert (np.geterr()["invalid"], np.getbufsize()) == ("warn", 8192)  # restored after


def test_a_kernel_part_on_a_helper_thread_warns_no_more_than_one_on_the_calling_thread():
    """inf * 0 in ReluGrad is NaN, as in TF, without a RuntimeWarning from whichever thread computes it."""
    gradients = np.full((64, 32, 32, 32), np.inf, np.float32)  # large enough to split
    with tf.Graph().as_default():
        dy, features = (tf.placeholder(tf.float32, gradients.shape) for _ in range(2))
        relu_grad = tf.gradients(tf.nn.relu(features), features, grad_ys=dy)[0]
        pool = tf.nn.max_pool(features, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")  # a parallel kernel: the run splits
        config = tf.ConfigProto(intra_op_parallelism_threads=2)
        with tf.Session(config=config) as sess, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value, _ = sess.run([relu_grad, pool], {dy: gradients, features: np.zeros_like(gradients)})
    assert np.isnan(value).all()
    assert [str(w.message) for w in caught] == []


def test_helpers_keep_no_reference_to_a_part_result(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    with intra_op.RunThreads(2, 1):
        _, second = intra_op.parallel_parts(lambda rows: np.zeros(4), 2, 2)
    assert sys.getrefcount(second) == 2  # `second` and getrefcount's argument: its memory goes when dropped


@pytest.mark.parametrize("donate", [False, True])
def test_split_activation_kernels_match_numpy(donate, monkeypatch):
    """Relu, ReluGrad and BiasAdd on arrays large enough to split, in a run with two threads."""
    rng = np.random.default_rng(0)
    shape = (8, 16, 16, 32)
    value, grad = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 1000)
    x, g = tf.placeholder(tf.float32, shape), tf.placeholder(tf.float32, shape)

    def operand(t, zero: float):  # with donate, a fresh value (distinct, so no CSE) that the plan may overwrite
        return t + zero if donate else t

    create = tf.get_default_graph().create_op
    fetches = [tf.nn.bias_add(operand(x, 0.0), bias), tf.nn.relu(operand(x, -0.0)),
               create("ReluGrad", [operand(g, 0.0), x]).outputs[0]]
    with intra_op.RunThreads(2, 1), tf.Session() as sess:
        added, relu, relu_grad = sess.run(fetches, {x: value, g: grad})
        source = next(iter(sess._cache.values())).plan.source
    assert source.count(".inplace(") == (3 if donate else 0)
    np.testing.assert_array_equal(added, value + bias)
    np.testing.assert_array_equal(relu, np.maximum(value, 0))
    np.testing.assert_array_equal(relu_grad, grad * (value > 0))


@pytest.mark.parametrize("dtype,tolerance", [(np.float32, 1e-4), (np.float64, 1e-12), (np.float16, 1e-2)])
def test_bias_add_grad_sums_rows(dtype, tolerance):
    value = tf.placeholder(tf.as_dtype(dtype), [None, 5, 6, 7])
    summed = tf.get_default_graph().create_op("BiasAddGrad", [value], attrs={"data_format": "NHWC"}).outputs[0]
    with tf.Session() as sess:
        for batch in (4, 4, 2):  # the row of ones kept from one call is remade for another count of rows
            grad = np.random.default_rng(batch).standard_normal((batch, 5, 6, 7)).astype(dtype)
            out = sess.run(summed, {value: grad})
            np.testing.assert_allclose(out, grad.astype(np.float64).sum((0, 1, 2)), rtol=tolerance, atol=tolerance)
            assert out.dtype == dtype


def test_side_by_side_runs_each_task_in_a_thread_of_its_own_and_keeps_their_order(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    both_running = threading.Barrier(2, timeout=10)  # broken unless the two tasks run at once

    def task(value):
        def run():
            both_running.wait()
            inner = intra_op.parallel_parts(lambda rows: threading.get_ident(), 4, 4)
            return value, threading.get_ident(), intra_op.run_width(), inner
        return run

    with intra_op.RunThreads(2, 1):
        results = intra_op.side_by_side([task("input"), task("filter")], 1)
    assert [value for value, *_ in results] == ["input", "filter"]
    assert results[0][1] != results[1][1]
    assert all(width == 1 and inner == [thread] for _, thread, width, inner in results)  # their splits run in place


def test_side_by_side_runs_in_the_calling_thread_without_helpers_or_work_enough():
    calls = []

    def task(value):
        return lambda: calls.append(threading.get_ident()) or value

    assert intra_op.side_by_side([task(1), task(2)], 10) == [1, 2]  # outside a run
    with intra_op.RunThreads(2, 1):
        assert intra_op.side_by_side([task(3), task(4)], 10) == [3, 4]  # below PARALLEL_WORK
    assert set(calls) == {threading.get_ident()}


def test_side_by_side_raises_a_task_s_error_once_both_have_ended(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    ended = []

    def slow():
        time.sleep(0.05)
        ended.append(True)

    with intra_op.RunThreads(2, 1), pytest.raises(ZeroDivisionError):
        intra_op.side_by_side([lambda: 1 // 0, slow], 1)
    assert ended == [True]


def test_run_beside_hands_the_task_to_the_first_helper_of_the_next_split_before_its_part(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    events = []

    def task():
        events.append(("task", threading.get_ident(), intra_op.run_width()))
        return "pooled"

    def then():
        parts = intra_op.parallel_parts(lambda rows: events.append(("part", threading.get_ident(), rows)) or rows, 4, 4)
        intra_op.parallel_parts(lambda rows: rows, 4, 4)  # a second split: the task is not run again
        return parts

    with intra_op.RunThreads(2, 1):
        assert intra_op.run_beside(task, then) == ("pooled", [slice(0, 2), slice(2, 4)])
    (_, task_thread, width), = [event for event in events if event[0] == "task"]
    helper_events = [event[0] for event in events if event[1] == task_thread]
    assert task_thread != threading.get_ident() and width == 1 and helper_events == ["task", "part"]


def test_run_beside_gives_side_by_side_the_task_as_one_more_taken_by_the_thread_that_ends_first(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    runs = []

    def task(name, seconds):
        def run():
            time.sleep(seconds)
            runs.append((name, threading.get_ident()))
            return name
        return run

    def then():
        gradients = intra_op.side_by_side([task("input", 0), task("filter", 0.3)], 1)
        intra_op.parallel_parts(lambda rows: rows, 2, 2)  # a later split: the task is not run again
        return gradients

    with intra_op.RunThreads(2, 1):
        assert intra_op.run_beside(task("pool", 0), then) == ("pool", ["input", "filter"])
    threads = dict(runs)
    assert len(runs) == 3 and threads["pool"] == threads["input"] != threads["filter"]


def test_run_beside_runs_the_task_after_then_where_then_does_not_split():
    order = []
    assert intra_op.run_beside(lambda: order.append(("task", threading.get_ident())) or 1,
                               lambda: order.append(("then", threading.get_ident())) or 2) == (1, 2)
    with intra_op.RunThreads(2, 1):  # a split below PARALLEL_WORK runs in the calling thread alone
        assert intra_op.run_beside(lambda: order.append(("task", threading.get_ident())),
                                   lambda: intra_op.parallel_parts(lambda rows: order.append(("then", 0)), 4, 4))
    assert [name for name, _ in order] == ["then", "task", "then", "task"]
    assert {thread for name, thread in order if name == "task"} == {threading.get_ident()}


def test_run_beside_raises_the_task_s_error_once_then_has_ended_and_leaves_no_task_behind(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    ended = []

    def then():
        intra_op.parallel_parts(lambda rows: time.sleep(0.05) if rows.start == 0 else None, 2, 2)
        ended.append(True)

    with intra_op.RunThreads(2, 1), pytest.raises(ZeroDivisionError):
        intra_op.run_beside(lambda: 1 // 0, then)
    assert ended == [True]
    with intra_op.RunThreads(2, 1), pytest.raises(KeyError):  # then's own error, with no split to hand the task to
        intra_op.run_beside(lambda: ended.append("task"), lambda: {}["missing"])
    with intra_op.RunThreads(2, 1):
        assert intra_op.parallel_parts(lambda rows: rows, 2, 2) == [slice(0, 1), slice(1, 2)]
    assert ended == [True]


def test_side_by_side_runs_a_task_once_the_tasks_it_waits_for_have_ended(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    events = []

    def task(name, seconds=0.0):
        def run():
            events.append(("start", name))
            time.sleep(seconds)
            events.append(("end", name))
            return name

        return run

    # The second thread would take "after" at once; it waits for "slow" instead, then takes it before "last".
    with intra_op.RunThreads(2, 1):
        values = intra_op.side_by_side([task("slow", 0.05), task("after"), task("last")], 1, [[], [0], []])
    assert values == ["slow", "after", "last"]
    assert events.index(("end", "slow")) < events.index(("start", "after"))


def test_side_by_side_never_runs_a_task_waiting_for_one_that_failed(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    ran = []
    with intra_op.RunThreads(2, 1), pytest.raises(ZeroDivisionError):
        intra_op.side_by_side([lambda: 1 // 0, lambda: ran.append("waiting"), lambda: ran.append("free")], 1,
                              [[], [0], []])
    assert ran == ["free"]
