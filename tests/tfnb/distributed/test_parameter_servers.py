"""Parameter servers (OSDI paper, section 4.3): variables on ps tasks, replicas on worker tasks, asynchronous and
synchronous training (with backup workers), and large embeddings split over several ps tasks."""

import threading

import numpy as np

import tfnb as tf

PS = {0: "/job:ps/replica:0/task:0/device:CPU:0", 1: "/job:ps/replica:0/task:1/device:CPU:0"}
TRUE_W = np.array([[2.0], [-1.0]], np.float32)
WAIT_S = 60   # how long a replica waits for another at most: a failure ends the test instead of hanging it


def linear_model(server, task: int, optimizer):
    """A replica's graph, as TF1 programs build it under the device setter: a linear regression whose parameters
    go to the ps tasks and whose computation stays on the worker; its train op from `optimizer`."""
    setter = tf.train.replica_device_setter(cluster=server.cluster_spec, worker_device=f"/job:worker/task:{task}")
    with tf.device(setter):
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        step = tf.train.get_or_create_global_step()
        train = optimizer.minimize(loss, global_step=step)
    return x, y, w, train, step


def data(task: int):
    features = np.random.RandomState(task).randn(32, 2).astype(np.float32)
    return features, features @ TRUE_W + 0.5


def target_of(server, task: int) -> str:
    return f"{server.scheduler_address}/job:worker/task:{task}"


def run_replicas(count: int, replica) -> dict:
    """Runs `replica(task)` for tasks 0..count-1, each on a thread of its own (as processes would); their results."""
    results, failures = {}, []

    def run(task):
        try:
            results[task] = replica(task)
        except BaseException as error:  # noqa: BLE001 (raised again in the test's thread)
            failures.append(error)
    threads = [threading.Thread(target=run, args=(task,)) for task in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return results


def test_replica_device_setter_puts_variables_round_robin_on_ps_tasks_and_the_rest_on_the_worker():
    cluster = tf.train.ClusterSpec({"ps": ["a:1", "b:2"], "worker": ["c:3", "d:4"]})
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:1")):
        v, w, u = tf.Variable(1.0, name="v"), tf.Variable(2.0, name="w"), tf.Variable(3.0, name="u")
        total = v + w
        with tf.device("/job:ps/task:0"):
            z = tf.Variable(4.0, name="z")
        with tf.device("/cpu:0"):
            on_cpu = tf.identity(total, name="on_cpu")
    assert [var.op.device for var in (v, w, u, z)] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0",
                                                       "/job:ps/task:0"]
    assert total.op.device == "/job:worker/task:1"
    assert on_cpu.op.device == "/job:worker/task:1/device:CPU:0"
    assert tf.train.replica_device_setter(cluster={"worker": ["c:3"]}) is None


def test_a_load_function_balances_the_ps_tasks_by_bytes():
    strategy = tf.contrib.training.GreedyLoadBalancingStrategy(2, tf.contrib.training.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        big = tf.get_variable("big", [100, 10])
        small = [tf.get_variable(f"small{i}", [10]) for i in range(3)]
    assert big.op.device == "/job:ps/task:0"
    assert [s.op.device for s in small] == ["/job:ps/task:1"] * 3   # 3 x 40 bytes stay below 4000


def test_asynchronous_replicas_each_update_the_parameters_on_the_ps_tasks(server, target):
    steps = 15

    def replica(task):
        with tf.Graph().as_default():
            x, y, w, train, step = linear_model(server, task, tf.train.GradientDescentOptimizer(0.1))
            features, labels = data(task)
            with tf.Session(target_of(server, task)) as sess:
                if task == 0:
                    sess.run(tf.global_variables_initializer())
                    barrier.wait()
                else:
                    barrier.wait()   # the chief initializes first, as MonitoredTrainingSession's workers wait
                for _ in range(steps):
                    sess.run(train, {x: features, y: labels})
                barrier.wait()
                return sess.run([step, w]), sess.plan(train, {x: None, y: None})

    barrier = threading.Barrier(2)
    results = run_replicas(2, replica)
    (global_step, w), plan = results[1]
    assert global_step == 2 * steps                              # both replicas' updates reached the ps
    assert np.abs(w - TRUE_W).max() < 0.6
    updates = [op for op in plan.ops if op.type == "ResourceApplyGradientDescent"]
    assert {plan.placement[op] for op in updates} == set(PS.values())


def test_synchronous_training_with_a_backup_worker_never_waits_for_the_straggler(server, target):
    steps = 4
    created, fast_done = threading.Barrier(3, timeout=WAIT_S), threading.Barrier(3, timeout=WAIT_S)
    straggler_done = threading.Event()

    def replica(task):
        with tf.Graph().as_default():
            optimizer = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                                       replicas_to_aggregate=2, total_num_replicas=3)
            x, y, w, train, step = linear_model(server, task, optimizer)
            hooks = [optimizer.make_session_run_hook(is_chief=task == 0), tf.train.StopAtStepHook(last_step=steps)]
            features, labels = data(task)
            with tf.train.MonitoredTrainingSession(target_of(server, task), is_chief=task == 0,
                                                   hooks=hooks) as sess:
                created.wait()
                if task == 2:
                    fast_done.wait()   # the straggler's first gradient comes after every step was taken
                    before = sess.run(w)
                    sess.run(train, {x: features, y: labels})
                    straggler_done.set()
                    return before, sess.run([w, step])
                runs = 0
                while not sess.should_stop():
                    sess.run(train, {x: features, y: labels})
                    runs += 1
                fast_done.wait()
                if task == 0:   # the chief's sync thread runs on while the straggler takes its step
                    straggler_done.wait(WAIT_S)
                return runs

    results = run_replicas(3, replica)
    before, (after, global_step) = results[2]
    # The two fast replicas took the steps without the third, whose gradient came late and changed nothing.
    assert global_step >= steps and results[0] + results[1] >= steps
    np.testing.assert_array_equal(after, before)


def test_an_embedding_split_over_ps_tasks_updates_only_the_rows_looked_up_where_they_live(server, target):
    with tf.device(tf.train.replica_device_setter(cluster=server.cluster_spec, worker_device="/job:worker/task:0")):
        table = tf.get_variable("table", [10, 4], partitioner=tf.fixed_size_partitioner(2),
                                initializer=tf.ones_initializer())
        ids = tf.placeholder(tf.int64, [None], name="ids")
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, ids, partition_strategy="div"))
        train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    assert [part.op.device for part in table] == ["/job:ps/task:0", "/job:ps/task:1"]
    with tf.Session(target) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {ids: [1, 7, 7]})
        rows = sess.run(table.as_tensor())
        plan = sess.plan(train, {ids: None})
    changed = {i: rows[i, 0] for i in range(10) if rows[i, 0] != 1.0}
    assert changed == {1: 0.0, 7: -1.0}
    sparse = [op for op in plan.ops if op.type == "ResourceSparseApplyGradientDescent"]
    assert sorted(plan.placement[op] for op in sparse) == [PS[0], PS[1]]


def test_an_embedding_in_mod_shards_on_two_ps_tasks_looks_up_what_one_table_holds(target):
    values = np.arange(20, dtype=np.float32).reshape(10, 2)
    shards = []
    for task in range(2):
        with tf.device(f"/job:ps/task:{task}"):
            shards.append(tf.Variable(values[task::2], name=f"shard{task}"))
    ids = tf.constant([3, 0, 9, 4])
    with tf.device("/job:worker/task:0"):
        rows = tf.nn.embedding_lookup(shards, ids, partition_strategy="mod")
    with tf.Session(target) as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(rows), values[[3, 0, 9, 4]])
