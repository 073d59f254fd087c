"""TF1's between-graph replication, as its distributed MNIST example trains, on the bundled digits.

Run one process per task of the cluster:

    python distributed_digits.py --job_name=ps --task_index=0 --ps_hosts=... --worker_hosts=...
    python distributed_digits.py --job_name=worker --task_index=0 ...   # the chief: it initializes and checkpoints
    python distributed_digits.py --job_name=worker --task_index=1 ...

Each process starts its task's server (TFNB_DASK_SCHEDULER names the cluster's Dask scheduler); the ps task
serves until it is stopped; each worker builds the whole graph under tf.train.replica_device_setter and trains
with SyncReplicasOptimizer, then prints one JSON line: its task, the global step and the test accuracy. Without
--job_name the same model trains in this process alone, on batches as large as all replicas' together.
"""

import argparse
import json

import numpy as np

import tfnb as tf


def flags() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_name", default="")
    parser.add_argument("--task_index", type=int, default=0)
    parser.add_argument("--ps_hosts", default="127.0.0.1:0")
    parser.add_argument("--worker_hosts", default="127.0.0.1:0,127.0.0.1:0")
    parser.add_argument("--sync_replicas", type=int, default=1)
    parser.add_argument("--replicas_to_aggregate", type=int, default=None)
    parser.add_argument("--train_steps", type=int, default=200)
    parser.add_argument("--batch_size", type=int, default=50)
    parser.add_argument("--hidden_units", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=0.5)
    parser.add_argument("--checkpoint_dir", default=None)
    return parser.parse_args()


def digits():
    images, labels = tf.datasets.load_digits()
    return tf.datasets.train_test_split(images, labels, test_size=0.25, seed=0)


def model(hidden_units: int):
    """The example's network: one hidden ReLU layer, softmax cross-entropy; its placeholders, loss and accuracy."""
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    hidden_w = tf.Variable(tf.truncated_normal([64, hidden_units], stddev=1.0 / 8, seed=1), name="hid_w")
    hidden_b = tf.Variable(tf.zeros([hidden_units]), name="hid_b")
    softmax_w = tf.Variable(tf.truncated_normal([hidden_units, 10], stddev=1.0 / np.sqrt(hidden_units), seed=2),
                            name="sm_w")
    softmax_b = tf.Variable(tf.zeros([10]), name="sm_b")
    hidden = tf.nn.relu(tf.nn.xw_plus_b(x, hidden_w, hidden_b))
    logits = tf.nn.xw_plus_b(hidden, softmax_w, softmax_b)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y), tf.float32))
    return x, y, loss, accuracy


def train_alone(args) -> dict:
    """The same model in one process, each batch as large as the replicas' batches together."""
    x_train, x_test, y_train, y_test = digits()
    replicas = len(args.worker_hosts.split(","))
    x, y, loss, accuracy = model(args.hidden_units)
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(args.learning_rate).minimize(loss, global_step=step)
    batches = tf.datasets.minibatches((x_train, y_train), args.batch_size * replicas, seed=0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(args.train_steps):
            batch_x, batch_y = next(batches)
            sess.run(train, {x: batch_x, y: batch_y})
        return {"task": "alone", "global_step": int(sess.run(step)),
                "accuracy": float(sess.run(accuracy, {x: x_test, y: y_test}))}


def main() -> None:
    args = flags()
    if not args.job_name:
        print(json.dumps(train_alone(args)), flush=True)
        return
    cluster = tf.train.ClusterSpec({"ps": args.ps_hosts.split(","), "worker": args.worker_hosts.split(",")})
    server = tf.train.Server(cluster, job_name=args.job_name, task_index=args.task_index)
    if args.job_name == "ps":
        server.join()
        return
    is_chief = args.task_index == 0
    replicas = cluster.num_tasks("worker")
    x_train, x_test, y_train, y_test = digits()
    worker_device = f"/job:worker/task:{args.task_index}/cpu:0"
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, ps_device="/job:ps/cpu:0",
                                                  cluster=cluster)):
        x, y, loss, accuracy = model(args.hidden_units)
        step = tf.train.get_or_create_global_step()
        optimizer = tf.train.GradientDescentOptimizer(args.learning_rate)
        if args.sync_replicas:
            optimizer = tf.train.SyncReplicasOptimizer(optimizer, args.replicas_to_aggregate or replicas, replicas,
                                                       name="digits_sync_replicas")
        train = optimizer.minimize(loss, global_step=step)
    hooks = [tf.train.StopAtStepHook(last_step=args.train_steps)]
    release = None
    if args.sync_replicas:
        hooks.append(optimizer.make_session_run_hook(is_chief))
        # The chief's sync thread ends with it: a token for each replica lets one still waiting for a token end its
        # last step (which sees the last global step and stops).
        release = optimizer.get_init_tokens_op(num_tokens=replicas) if is_chief else None
    config = tf.ConfigProto(allow_soft_placement=True, device_filters=["/job:ps", f"/job:worker/task:{args.task_index}"])
    batches = tf.datasets.minibatches((x_train, y_train), args.batch_size, seed=args.task_index)
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, checkpoint_dir=args.checkpoint_dir,
                                           hooks=hooks, config=config, save_checkpoint_steps=50) as sess:
        local_steps = 0
        while not sess.should_stop():
            batch_x, batch_y = next(batches)
            sess.run(train, {x: batch_x, y: batch_y})
            local_steps += 1
        result = {"task": args.task_index, "local_steps": local_steps, "global_step": int(sess.run(step)),
                  "accuracy": float(sess.run(accuracy, {x: x_test, y: y_test}))}
        if release is not None:
            sess.run(release)
    print(json.dumps(result), flush=True)
    server.stop()


if __name__ == "__main__":
    main()
