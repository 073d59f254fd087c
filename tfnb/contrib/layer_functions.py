"""tf.contrib.layers' layer functions: fully_connected, conv2d, flatten, batch_norm, max_pool2d, avg_pool2d.

Each opens a variable scope ('fully_connected', 'Conv', 'BatchNorm', made unique unless `scope` names one) and
makes its variables there with contrib's names ('weights', 'biases'), in GLOBAL_VARIABLES and MODEL_VARIABLES,
so checkpoints and `reuse=True` work as under TF1. Unlike tf.layers, fully_connected and conv2d apply ReLU
unless `activation_fn=None`, and take a `normalizer_fn` (batch_norm) in place of the bias.
"""

from __future__ import annotations

from tfnb.contrib.initializers import xavier_initializer
from tfnb.framework.graph import GraphKeys, add_to_collections, get_collection_ref, get_default_graph, name_scope
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.layers.normalization import BatchNormalization
from tfnb.ops import array_ops, conv_ops, math_ops, nn_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.init_ops import Zeros
from tfnb.ops.variable_scope import get_variable, variable_scope

__all__ = ["fully_connected", "conv2d", "convolution2d", "flatten", "batch_norm", "max_pool2d", "avg_pool2d"]


def _model_variable(name: str, shape, initializer, regularizer, trainable: bool, collections) -> object:
    """get_variable in the current scope, also in MODEL_VARIABLES and `collections`, as contrib's model_variable."""
    every = [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES] + list(collections or [])
    return get_variable(name, shape, initializer=initializer, regularizer=regularizer, trainable=trainable,
                        collections=every)


def _collected(outputs: Tensor, outputs_collections) -> Tensor:
    if outputs_collections:
        add_to_collections(outputs_collections, outputs)
    return outputs


def _finished(outputs: Tensor, num_outputs: int, biases_initializer, biases_regularizer, normalizer_fn,
              normalizer_params, activation_fn, trainable: bool, variables_collections) -> Tensor:
    """Normalizer or bias, then the activation: what fully_connected and conv2d do after their product."""
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    elif biases_initializer is not None:
        biases = _model_variable("biases", [num_outputs], biases_initializer, biases_regularizer, trainable,
                                 variables_collections)
        outputs = nn_ops.bias_add(outputs, biases)
    return activation_fn(outputs) if activation_fn is not None else outputs


def fully_connected(inputs, num_outputs: int, activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                    weights_initializer=xavier_initializer(), weights_regularizer=None, biases_initializer=Zeros(),
                    biases_regularizer=None, reuse=None, variables_collections=None, outputs_collections=None,
                    trainable: bool = True, scope=None) -> Tensor:
    """activation_fn(inputs @ weights + biases) over the last axis of inputs (variables 'fully_connected/weights'
    and 'fully_connected/biases'); ReLU by default."""
    if not isinstance(num_outputs, int):
        raise ValueError(f"num_outputs type should be one of (int,), got {type(num_outputs)}.")
    with variable_scope(scope, "fully_connected", [inputs], reuse=reuse):
        inputs = convert_to_tensor(inputs)
        depth = inputs.shape[-1].value if inputs.shape.ndims else None
        if depth is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        weights = _model_variable("weights", [depth, num_outputs], weights_initializer, weights_regularizer,
                                  trainable, variables_collections)
        if inputs.shape.ndims > 2:
            flat = array_ops.reshape(inputs, [-1, depth])
            outputs = array_ops.reshape(math_ops.matmul(flat, weights),
                                        array_ops.concat([array_ops.shape(inputs)[:-1], [num_outputs]], 0))
            outputs.set_shape(inputs.shape[:-1].concatenate([num_outputs]))
        else:
            outputs = math_ops.matmul(inputs, weights)
        outputs = _finished(outputs, num_outputs, biases_initializer, biases_regularizer, normalizer_fn,
                            normalizer_params, activation_fn, trainable, variables_collections)
        return _collected(outputs, outputs_collections)


def _pair(value, what: str) -> list[int]:
    pair = [value, value] if isinstance(value, int) else list(value)
    if len(pair) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints, got {value}")
    return [int(v) for v in pair]


def conv2d(inputs, num_outputs: int, kernel_size, stride=1, padding: str = "SAME", data_format=None, rate=1,
           activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
           weights_initializer=xavier_initializer(), weights_regularizer=None, biases_initializer=Zeros(),
           biases_regularizer=None, reuse=None, variables_collections=None, outputs_collections=None,
           trainable: bool = True, scope=None) -> Tensor:
    """A 2-D convolution of NHWC inputs (variables 'Conv/weights' [kh, kw, in, out] and 'Conv/biases'), SAME
    padding and ReLU by default.

    tfnb differs: data_format 'NCHW' raises ValueError.
    """
    if data_format not in (None, "NHWC"):
        raise ValueError("tfnb's contrib conv2d takes NHWC inputs only")
    with variable_scope(scope, "Conv", [inputs], reuse=reuse):
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims != 4:
            raise ValueError(f"Convolution expects input with rank 4, got {inputs.shape.ndims}")
        channels = inputs.shape[-1].value
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        kh, kw = _pair(kernel_size, "kernel_size")
        sh, sw = _pair(stride, "stride")
        dh, dw = _pair(rate, "rate")
        weights = _model_variable("weights", [kh, kw, channels, num_outputs], weights_initializer,
                                  weights_regularizer, trainable, variables_collections)
        outputs = conv_ops.conv2d(inputs, weights, [1, sh, sw, 1], padding.upper(), dilations=[1, dh, dw, 1])
        outputs = _finished(outputs, num_outputs, biases_initializer, biases_regularizer, normalizer_fn,
                            normalizer_params, activation_fn, trainable, variables_collections)
        return _collected(outputs, outputs_collections)


convolution2d = conv2d


def flatten(inputs, outputs_collections=None, scope=None) -> Tensor:
    """inputs reshaped to [batch, everything else] (in name scope 'Flatten')."""
    with name_scope(scope, "Flatten", [inputs]):
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims is None or inputs.shape.ndims < 2:
            raise ValueError(f"Inputs must have a least 2 dimensions, got shape {inputs.shape}")
        rest = inputs.shape[1:]
        size = rest.num_elements() if rest.is_fully_defined() else None
        if size is not None:
            outputs = array_ops.reshape(inputs, [-1, size])
        else:
            shape = array_ops.shape(inputs)
            outputs = array_ops.reshape(inputs, array_ops.stack([shape[0], math_ops.reduce_prod(shape[1:])]))
        outputs.set_shape(TensorShape([inputs.shape[0].value, size]))
        return _collected(outputs, outputs_collections)


def batch_norm(inputs, decay: float = 0.999, center: bool = True, scale: bool = False, epsilon: float = 0.001,
               activation_fn=None, param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None, variables_collections=None,
               outputs_collections=None, trainable: bool = True, batch_weights=None, fused=None,
               data_format: str = "NHWC", zero_debias_moving_mean: bool = False, scope=None, renorm: bool = False,
               renorm_clipping=None, renorm_decay: float = 0.99, adjustment=None) -> Tensor:
    """Batch normalization over the last axis (variables 'BatchNorm/beta', 'BatchNorm/gamma' if scale,
    'BatchNorm/moving_mean', 'BatchNorm/moving_variance'): batch statistics while `is_training`, the moving
    ones otherwise. The moving-average updates go to `updates_collections`, or run with the layer if it is None.

    tfnb differs: batch_weights, renorm, zero_debias_moving_mean and NCHW are not supported (ValueError).
    """
    if batch_weights is not None or renorm or zero_debias_moving_mean or data_format != "NHWC":
        raise ValueError("tfnb's batch_norm supports neither batch_weights, renorm, zero_debias_moving_mean nor "
                         "NCHW")
    initializers, regularizers = dict(param_initializers or {}), dict(param_regularizers or {})
    with variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        layer = BatchNormalization(
            axis=-1, momentum=decay, epsilon=epsilon, center=center, scale=scale, fused=fused,
            trainable=trainable, name=sc.name, _scope=sc, _reuse=reuse,
            **{f"{name}_initializer": initializers[name] for name in initializers},
            **{f"{name}_regularizer": regularizers[name] for name in regularizers})
        collected = get_collection_ref(GraphKeys.UPDATE_OPS)
        before = list(collected)
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims == 2 and fused is not False:
            # As TF's contrib: a batch of vectors is normalized as [batch, 1, 1, depth] images, by the fused
            # kernel, whose moving variance is the unbiased one.
            images = array_ops.reshape(inputs, [-1, 1, 1, inputs.shape[1].value])
            outputs = array_ops.reshape(layer.apply(images, training=is_training), array_ops.shape(inputs))
            outputs.set_shape(inputs.shape)
        else:
            outputs = layer.apply(inputs, training=is_training)
        updates = [op for op in collected if op not in before]
        if updates_collections is None:
            collected[:] = before
            with get_default_graph().control_dependencies(updates):
                outputs = array_ops.identity(outputs)
        elif updates_collections != GraphKeys.UPDATE_OPS:
            collected[:] = before
            add_to_collections(updates_collections, updates)
        for variable in layer.variables:
            add_to_collections([GraphKeys.MODEL_VARIABLES] + list(variables_collections or []), variable)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return _collected(outputs, outputs_collections)


def _pool(pool, inputs, kernel_size, stride, padding: str, data_format: str, outputs_collections, scope,
          default_name: str) -> Tensor:
    if data_format != "NHWC":
        raise ValueError("tfnb's contrib pooling takes NHWC inputs only")
    with name_scope(scope, default_name, [inputs]) as scope_name:
        kh, kw = _pair(kernel_size, "kernel_size")
        sh, sw = _pair(stride, "stride")
        outputs = pool(convert_to_tensor(inputs), [1, kh, kw, 1], [1, sh, sw, 1], padding.upper(), name=scope_name)
        return _collected(outputs, outputs_collections)


def max_pool2d(inputs, kernel_size, stride=2, padding: str = "VALID", data_format: str = "NHWC",
               outputs_collections=None, scope=None) -> Tensor:
    """The maximum over kernel_size windows moved by `stride` (VALID padding by default)."""
    return _pool(conv_ops.max_pool, inputs, kernel_size, stride, padding, data_format, outputs_collections, scope,
                 "MaxPool2D")


def avg_pool2d(inputs, kernel_size, stride=2, padding: str = "VALID", data_format: str = "NHWC",
               outputs_collections=None, scope=None) -> Tensor:
    """The mean over kernel_size windows moved by `stride` (VALID padding by default)."""
    return _pool(conv_ops.avg_pool, inputs, kernel_size, stride, padding, data_format, outputs_collections, scope,
                 "AvgPool2D")
