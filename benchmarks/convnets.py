"""The four convolutional models of the TensorFlow paper's single-machine experiment (OSDI 2016, section 6.1).

The paper timed training steps of the public convnet benchmarks' models: AlexNet (the "one weird trick"
variant), Overfeat (its fast model), OxfordNet (VGG model A) and GoogLeNet (v1, with its inception modules).
Each model here is a table of layers, and a function `model(tf, images, classes)` that builds it as a TF1
program with tf.layers from the `tf` module it is given: `import tfnb as tf` or `tensorflow.compat.v1`.
As in those benchmarks, no model has local response normalization, dropout or auxiliary classifiers.
The PyTorch versions (benchmarks/convnets_torch.py) read the same tables.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Conv:
    """A convolution with `filters` outputs, a size x size window, bias and ReLU."""

    filters: int
    size: int
    stride: int = 1
    padding: str = "same"


@dataclass(frozen=True)
class MaxPool:
    size: int
    stride: int
    padding: str = "valid"


@dataclass(frozen=True)
class GlobalAvgPool:
    """The mean over each feature map's whole extent (GoogLeNet's 7x7 average pool at 224x224)."""


@dataclass(frozen=True)
class Inception:
    """GoogLeNet's module: 1x1 | 1x1 then 3x3 | 1x1 then 5x5 | 3x3 max pool then 1x1, concatenated."""

    ones: int
    reduce3: int
    threes: int
    reduce5: int
    fives: int
    pool_ones: int


@dataclass(frozen=True)
class Dense:
    """A fully connected layer with bias and ReLU (the input is flattened first, in NHWC order)."""

    units: int


@dataclass(frozen=True)
class Model:
    """A model's layers (the classifier, `classes` logits without ReLU, comes after them) and its image size."""

    name: str
    layers: tuple
    image_size: int


# The benchmarks feed AlexNet 227x227 images (224 + 3, so that VALID padding gives cuda-convnet's 55x55).
ALEXNET = Model("AlexNet", (
    Conv(64, 11, 4, "valid"), MaxPool(3, 2),
    Conv(192, 5), MaxPool(3, 2),
    Conv(384, 3), Conv(256, 3), Conv(256, 3), MaxPool(3, 2),
    Dense(4096), Dense(4096)), 227)

OVERFEAT = Model("Overfeat", (
    Conv(96, 11, 4, "valid"), MaxPool(2, 2),
    Conv(256, 5, 1, "valid"), MaxPool(2, 2),
    Conv(512, 3), Conv(1024, 3), Conv(1024, 3), MaxPool(2, 2),
    Dense(3072), Dense(4096)), 231)

OXFORDNET = Model("OxfordNet", (
    Conv(64, 3), MaxPool(2, 2),
    Conv(128, 3), MaxPool(2, 2),
    Conv(256, 3), Conv(256, 3), MaxPool(2, 2),
    Conv(512, 3), Conv(512, 3), MaxPool(2, 2),
    Conv(512, 3), Conv(512, 3), MaxPool(2, 2),
    Dense(4096), Dense(4096)), 224)

GOOGLENET = Model("GoogLeNet", (
    Conv(64, 7, 2), MaxPool(3, 2, "same"),
    Conv(64, 1), Conv(192, 3), MaxPool(3, 2, "same"),
    Inception(64, 96, 128, 16, 32, 32), Inception(128, 128, 192, 32, 96, 64), MaxPool(3, 2, "same"),
    Inception(192, 96, 208, 16, 48, 64), Inception(160, 112, 224, 24, 64, 64),
    Inception(128, 128, 256, 24, 64, 64), Inception(112, 144, 288, 32, 64, 64),
    Inception(256, 160, 320, 32, 128, 128), MaxPool(3, 2, "same"),
    Inception(256, 160, 320, 32, 128, 128), Inception(384, 192, 384, 48, 128, 128),
    GlobalAvgPool()), 224)

MODELS = {model.name: model for model in (ALEXNET, OVERFEAT, OXFORDNET, GOOGLENET)}


def logits(tf, model: Model, images, classes: int = 1000):
    """The model's logits for NHWC `images`, built with tf.layers of the given `tf` module."""
    net = images
    for layer in model.layers:
        net = _LAYERS[type(layer)](tf, layer, net)
    return tf.layers.dense(_flat(tf, net), classes)


def alexnet(tf, images, classes: int = 1000):
    """AlexNet, the "one weird trick" variant (5 convolutions, 3 fully connected layers): its logits."""
    return logits(tf, ALEXNET, images, classes)


def overfeat(tf, images, classes: int = 1000):
    """Overfeat's fast model (5 convolutions, 3 fully connected layers): its logits."""
    return logits(tf, OVERFEAT, images, classes)


def oxfordnet(tf, images, classes: int = 1000):
    """OxfordNet, VGG's model A (8 convolutions, 3 fully connected layers): its logits."""
    return logits(tf, OXFORDNET, images, classes)


def googlenet(tf, images, classes: int = 1000):
    """GoogLeNet v1 (3 convolutions, 9 inception modules, global average pool, a classifier): its logits."""
    return logits(tf, GOOGLENET, images, classes)


def training_step(tf, model: Model, images, labels, learning_rate: float = 0.01):
    """(loss, train_op): mean softmax cross-entropy of the model's logits, and one SGD step on it."""
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits(tf, model, images)))
    return loss, tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)


def _conv(tf, layer: Conv, net):
    return tf.layers.conv2d(net, layer.filters, layer.size, layer.stride, layer.padding, activation=tf.nn.relu)


def _max_pool(tf, layer: MaxPool, net):
    return tf.layers.max_pooling2d(net, layer.size, layer.stride, layer.padding)


def _global_avg_pool(tf, layer: GlobalAvgPool, net):
    size = net.shape.as_list()[1:3]
    return tf.layers.average_pooling2d(net, size, 1)


def _inception(tf, layer: Inception, net):
    branches = [_conv(tf, Conv(layer.ones, 1), net),
                _conv(tf, Conv(layer.threes, 3), _conv(tf, Conv(layer.reduce3, 1), net)),
                _conv(tf, Conv(layer.fives, 5), _conv(tf, Conv(layer.reduce5, 1), net)),
                _conv(tf, Conv(layer.pool_ones, 1), _max_pool(tf, MaxPool(3, 1, "same"), net))]
    return tf.concat(branches, 3)


def _dense(tf, layer: Dense, net):
    return tf.layers.dense(_flat(tf, net), layer.units, activation=tf.nn.relu)


def _flat(tf, net):
    """Feature maps flattened to one row per image (NHWC order); rows as they are."""
    return tf.layers.flatten(net) if net.shape.ndims > 2 else net


_LAYERS = {Conv: _conv, MaxPool: _max_pool, GlobalAvgPool: _global_avg_pool, Inception: _inception, Dense: _dense}
