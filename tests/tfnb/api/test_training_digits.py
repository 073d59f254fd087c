"""End to end on the bundled digits: an MLP and a small CNN learn them, and a checkpoint resumes training exactly."""

import itertools

import numpy as np
import pytest

import tfnb as tf


@pytest.fixture(scope="module")
def digits():
    """x_train, x_test (n, 8, 8, 1) and y_train, y_test, split the same way every time."""
    images, labels = tf.datasets.load_digits(as_images=True)
    return tf.datasets.train_test_split(images, labels, test_size=0.25, seed=0)


# -- the data ---------------------------------------------------------------------------------------


def test_load_digits_gives_scaled_images_and_labels():
    flat, labels = tf.datasets.load_digits()
    images, same_labels = tf.datasets.load_digits(as_images=True)
    assert flat.shape == (1797, 64) and images.shape == (1797, 8, 8, 1) and labels.shape == (1797,)
    assert flat.dtype == images.dtype == np.float32 and labels.dtype == np.int32
    assert flat.min() == 0.0 and flat.max() == 1.0 and set(labels.tolist()) == set(range(10))
    np.testing.assert_array_equal(images.reshape(-1, 64), flat)
    np.testing.assert_array_equal(labels, same_labels)
    flat[:] = -1  # each call returns its own arrays
    assert tf.datasets.load_digits()[0].min() == 0.0


def test_train_test_split_is_a_deterministic_partition():
    x, y = np.arange(100) * 10, np.arange(100)
    x_train, x_test, y_train, y_test = tf.datasets.train_test_split(x, y, test_size=0.3, seed=4)
    assert len(x_train) == 70 and len(x_test) == 30
    np.testing.assert_array_equal(x_train, y_train * 10)
    np.testing.assert_array_equal(np.sort(np.concatenate([y_train, y_test])), y)
    np.testing.assert_array_equal(tf.datasets.train_test_split(x, y, test_size=0.3, seed=4)[1], x_test)
    assert not np.array_equal(tf.datasets.train_test_split(x, y, test_size=0.3, seed=5)[1], x_test)
    with pytest.raises(ValueError, match="same number of rows"):
        tf.datasets.train_test_split(x, y[:5])
    with pytest.raises(ValueError, match="test_size must be a fraction"):
        tf.datasets.train_test_split(x, test_size=1.5)


def test_minibatches_are_aligned_and_reshuffled_every_epoch():
    x, y = np.arange(10) * 10, np.arange(10)
    batches = list(tf.datasets.minibatches((x, y), 4, seed=0, epochs=3))
    assert [len(b[0]) for b in batches] == [4, 4, 2] * 3
    assert all(np.array_equal(bx, by * 10) for bx, by in batches)
    epochs = [np.concatenate([b[1] for b in batches[i:i + 3]]) for i in (0, 3, 6)]
    assert all(np.array_equal(np.sort(e), y) for e in epochs)
    assert not np.array_equal(epochs[0], epochs[1]) and not np.array_equal(epochs[1], epochs[2])
    again = list(tf.datasets.minibatches((x, y), 4, seed=0, epochs=3))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(batches, again))


def test_minibatches_options():
    x = np.arange(10)
    assert [b.tolist() for b in tf.datasets.minibatches(x, 4, shuffle=False, epochs=1)] == [[0, 1, 2, 3],
                                                                                            [4, 5, 6, 7], [8, 9]]
    assert [len(b) for b in tf.datasets.minibatches(x, 4, epochs=2, drop_remainder=True)] == [4, 4, 4, 4]
    forever = tf.datasets.minibatches(x, 3)
    assert len(list(itertools.islice(forever, 100))) == 100
    with pytest.raises(ValueError, match="10 examples give no batch"):
        next(tf.datasets.minibatches(x, 11, drop_remainder=True))
    with pytest.raises(ValueError, match="batch_size must be positive"):
        next(tf.datasets.minibatches(x, 0))


# -- the models -------------------------------------------------------------------------------------


def _dense(x, units: int, name: str):
    w = tf.get_variable(f"{name}/kernel", [x.shape[-1], units])
    b = tf.get_variable(f"{name}/bias", [units], initializer=tf.zeros_initializer())
    return tf.matmul(x, w) + b


def _mlp(images):
    """64-128-10 with ReLU."""
    return _dense(tf.nn.relu(_dense(tf.reshape(images, [-1, 64]), 128, "hidden")), 10, "logits")


def _cnn(images):
    """3x3 convolution (16 filters) with ReLU, 2x2 max pooling, then a dense layer."""
    kernel = tf.get_variable("conv/kernel", [3, 3, 1, 16])
    bias = tf.get_variable("conv/bias", [16], initializer=tf.zeros_initializer())
    conv = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(images, kernel, [1, 1, 1, 1], "SAME"), bias))
    pooled = tf.nn.max_pool(conv, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    return _dense(tf.reshape(pooled, [-1, 4 * 4 * 16]), 10, "logits")


class _Model:
    """A classifier of 8x8x1 images trained with Adam on softmax cross-entropy."""

    def __init__(self, network, learning_rate: float = 0.01, one_hot: bool = False) -> None:
        tf.set_random_seed(0)
        self.images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
        self.labels = tf.placeholder(tf.int32, [None], name="labels")
        self.logits = network(self.images)
        if one_hot:
            losses = tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.one_hot(self.labels, 10), logits=self.logits)
        else:
            losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.labels, logits=self.logits)
        self.loss = tf.reduce_mean(losses)
        self.global_step = tf.train.get_or_create_global_step()
        self.train_op = tf.train.AdamOptimizer(learning_rate).minimize(self.loss, global_step=self.global_step)

    def step(self, sess, batch) -> float:
        loss, _ = sess.run([self.loss, self.train_op], {self.images: batch[0], self.labels: batch[1]})
        return loss

    def accuracy(self, sess, images, labels) -> float:
        return float(np.mean(np.argmax(sess.run(self.logits, {self.images: images}), axis=1) == labels))


def _train_and_score(network, digits, steps: int, **model_args) -> float:
    x_train, x_test, y_train, y_test = digits
    model = _Model(network, **model_args)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for batch in itertools.islice(tf.datasets.minibatches((x_train, y_train), 64, seed=0), steps):
            model.step(sess, batch)
        return model.accuracy(sess, x_test, y_test)


def test_an_mlp_learns_digits(digits):
    assert _train_and_score(_mlp, digits, steps=400) >= 0.95


def test_a_cnn_learns_digits(digits):
    assert _train_and_score(_cnn, digits, steps=300, one_hot=True) >= 0.95


def test_training_resumed_from_a_checkpoint_matches_an_uninterrupted_run(digits, tmp_path):
    batches = list(itertools.islice(tf.datasets.minibatches((digits[0], digits[2]), 32, seed=1), 30))

    def train(restore_from=None, steps=batches):
        """Builds the model in a fresh graph and session, optionally restores, runs `steps`; returns losses, values."""
        with tf.Graph().as_default():
            model = _Model(_mlp)
            saver = tf.train.Saver()
            with tf.Session() as sess:
                if restore_from is None:
                    sess.run(tf.global_variables_initializer())
                else:
                    saver.restore(sess, restore_from)
                losses = [model.step(sess, batch) for batch in steps]
                path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=model.global_step)
                values = sess.run({v.op.name: v.value() for v in tf.global_variables()})
        return losses, values, path

    whole_losses, whole_values, _ = train()
    first_losses, _, path = train(steps=batches[:12])
    assert path == str(tmp_path / "model.ckpt-12")
    rest_losses, resumed_values, _ = train(restore_from=path, steps=batches[12:])
    assert first_losses + rest_losses == whole_losses
    assert sorted(resumed_values) == sorted(whole_values)
    assert any("Adam" in name for name in whole_values)  # the optimizer's slots travel in the checkpoint too
    for name, value in whole_values.items():
        np.testing.assert_array_equal(resumed_values[name], value, err_msg=name)
