"""The paper's four convolutional models (benchmarks/convnets.py) against their published architectures.

Parameter counts and layer shapes are checked at the published image sizes, on graphs that are built
but not run; training steps run at small image sizes, in tfnb and, where installed, TF1 and PyTorch,
from the same weights and data.
"""

import numpy as np
import pytest

import tfnb as tf
from benchmarks import bench_convnets
from benchmarks.convnets import MODELS, alexnet, googlenet, logits, overfeat, oxfordnet
from tfnb.kernels.conv import choice, clear_algorithm_cache

# Published parameter counts: AlexNet ("one weird trick") 61.1M, Overfeat fast 145.9M, VGG A 132.9M,
# GoogLeNet v1 without its auxiliary classifiers 7.0M, each with a 1000-way classifier.
PARAMETERS = {"AlexNet": 61_100_840, "Overfeat": 145_920_872, "OxfordNet": 132_863_336, "GoogLeNet": 6_998_552}

# The feature maps that reach the first fully connected layer (or GoogLeNet's average pool).
LAST_FEATURE_MAPS = {"AlexNet": [6, 6, 256], "Overfeat": [6, 6, 1024], "OxfordNet": [7, 7, 512],
                     "GoogLeNet": [7, 7, 1024]}

# GoogLeNet's inception modules' output depths (3a to 5b), from its paper's table.
INCEPTION_DEPTHS = [256, 480, 512, 512, 512, 528, 832, 832, 1024]

# The smallest image sizes for which every layer keeps at least one pixel (AlexNet's and Overfeat's
# strided and VALID layers need more than the others).
SMALL_SIZES = {"AlexNet": 67, "Overfeat": 71, "OxfordNet": 32, "GoogLeNet": 32}


@pytest.fixture(autouse=True)
def first_algorithm_only(monkeypatch):
    """Convolutions by their first algorithm (im2col and one product), unmeasured: timing every algorithm
    on first sight of each layer would take most of these tests' time (tests/tfnb/ops/test_conv_ops.py checks
    every algorithm and the choice)."""

    def first(scratch, candidates: dict, args):
        name, algorithm = next(iter(candidates.items()))
        return name, algorithm(scratch, *args)

    monkeypatch.setattr(choice, "_measure", first)
    yield
    clear_algorithm_cache()


def built(model_name: str):
    """The model's logits for a batch of 2 images of its published size, in a fresh tfnb graph: (graph, logits)."""
    model = MODELS[model_name]
    graph = tf.Graph()
    with graph.as_default():
        output = logits(tf, model, tf.placeholder(tf.float32, [2, model.image_size, model.image_size, 3]))
    return graph, output


@pytest.mark.parametrize("name", MODELS)
def test_parameter_counts_are_the_published_ones(name):
    graph, _ = built(name)
    with graph.as_default():
        count = sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())
    assert count == PARAMETERS[name]


@pytest.mark.parametrize("name", MODELS)
def test_published_image_sizes_give_the_published_feature_maps(name):
    graph, output = built(name)
    assert output.shape.as_list() == [2, 1000]
    reshaped = [op for op in graph.get_operations() if op.type in ("Reshape", "AvgPool")]
    assert reshaped[0].inputs[0].shape.as_list()[1:] == LAST_FEATURE_MAPS[name]


def test_googlenet_has_its_nine_inception_modules():
    graph, _ = built("GoogLeNet")
    concats = [op for op in graph.get_operations() if op.type == "ConcatV2"]
    assert [op.outputs[0].shape.as_list()[3] for op in concats] == INCEPTION_DEPTHS


@pytest.mark.parametrize("function,name", [(alexnet, "AlexNet"), (overfeat, "Overfeat"), (oxfordnet, "OxfordNet"),
                                           (googlenet, "GoogLeNet")])
def test_model_functions_build_their_model(function, name):
    size = SMALL_SIZES[name]
    output = function(tf, tf.placeholder(tf.float32, [1, size, size, 3]), classes=10)
    assert output.shape.as_list() == [1, 10]
    assert len(tf.trainable_variables()) == len(bench_convnets.parameter_shapes(MODELS[name], size))


@pytest.mark.parametrize("name", MODELS)
def test_a_training_step_at_a_small_size_lowers_the_loss(name):
    session, fetches, feeds = bench_convnets.graph_session(tf, MODELS[name], 2, SMALL_SIZES[name])
    first, _ = session.run(fetches, feeds)
    second, _ = session.run(fetches, feeds)
    assert np.isfinite(first) and second < first


@pytest.fixture
def tf1(monkeypatch):
    """tensorflow.compat.v1 with its tf.layers (served from tf_keras when TF_USE_LEGACY_KERAS is set)."""
    tensorflow = pytest.importorskip("tensorflow", reason="TensorFlow (the `bench` extra) is not installed")
    pytest.importorskip("tf_keras", reason="TensorFlow's tf.compat.v1.layers needs the tf_keras package")
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "1")
    return tensorflow.compat.v1


@pytest.mark.parametrize("name", MODELS)
def test_tf1_takes_the_same_steps(tf1, name):
    model, size = MODELS[name], SMALL_SIZES[name]
    steps = [bench_convnets.graph_step(lib, model, 2, size) for lib in (tf, tf1)]
    for _ in range(2):
        np.testing.assert_allclose(*[step() for step in steps], rtol=1e-4)


@pytest.mark.parametrize("name", MODELS)
def test_pytorch_takes_the_same_steps(name):
    pytest.importorskip("torch", reason="PyTorch is not installed")
    model, size = MODELS[name], SMALL_SIZES[name]
    steps = [bench_convnets.graph_step(tf, model, 2, size), bench_convnets.torch_step(model, 2, size)]
    for _ in range(2):
        np.testing.assert_allclose(*[step() for step in steps], rtol=1e-4)
