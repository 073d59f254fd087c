"""Neural-network ops of `tf.nn`: activations, softmax, bias_add, l2_loss and the cross-entropy losses.

Each public function builds one op of its own type (TF composes some of them from several ops).
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, scalar, unknown_shape
from tfnb.ops import math_ops
from tfnb.ops.array_ops import expand_dims, stop_gradient, zeros_like
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in, check_same_dtype, same_shape_pair, unary
from tfnb.ops.math.operands import convert_pair
from tfnb.ops.math_ops import sigmoid, tanh  # noqa: F401 (TF1 has them in tf.nn too)

__all__ = ["relu", "relu6", "elu", "selu", "softplus", "softsign", "leaky_relu", "sigmoid", "tanh", "softmax",
           "log_softmax", "in_top_k", "bias_add", "l2_loss", "sigmoid_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "softmax_cross_entropy_with_logits",
           "sparse_softmax_cross_entropy_with_logits"]


def _op(op_type: str, inputs, attrs: dict | None, name: str | None) -> Tensor:
    return get_default_graph().create_op(op_type, inputs, attrs, name).outputs[0]


def _claimed_dtype(op, index: int, what: str) -> dtypes.DType:
    """The dtype of input `index`, which must be one the op type claims."""
    dtype = op.inputs[index].dtype
    check_dtype_in(op, dtype, op.op_def.dtypes, what)
    return dtype


def _normalized_axis(axis: int, rank: int | None) -> int | None:
    """`axis` as a non-negative index into a shape of `rank` (None if the rank is unknown)."""
    if rank is None:
        return None
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} must be in the range [{-rank}, {rank}) for a tensor of rank {rank}")
    return axis % rank


def _softmax_axis(axis, dim) -> int:
    """TF1's softmax axis: `axis`, or the deprecated `dim`, else the last one."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    chosen = axis if axis is not None else dim
    return -1 if chosen is None else int(chosen)


# -- activations ----------------------------------------------------------------------------------


def _infer_activation(op):
    _claimed_dtype(op, 0, "features")
    return unary(op)


def _activation(op_type: str, features, attrs: dict | None, name: str | None) -> Tensor:
    return _op(op_type, (convert_to_tensor(features),), attrs, name or op_type)


def _np_softplus(x):
    return np.logaddexp(0, x.astype(np.float64))


def _np_elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


register_op("Relu", _infer_activation, dtypes=dtypes.REAL, examples=[
    Example(lambda x: relu(x), lambda x: np.maximum(x, 0), inputs=((2, 3),)),
    Example(lambda x: relu(x), lambda x: np.maximum(x, 0), inputs=((),)),
])


@register_gradient("Relu")
def _relu_grad(op, grad):
    return [relu_grad(grad, op.outputs[0])]


def relu(features, name: str | None = None) -> Tensor:
    """max(features, 0), elementwise."""
    return _activation("Relu", features, None, name)


register_op("ReluGrad", same_shape_pair, dtypes=dtypes.REAL, examples=[
    Example(lambda g, x: relu_grad(g, x), lambda g, x: np.where(x > 0, g, 0).astype(g.dtype), inputs=((3, 4), (3, 4))),
])


@register_gradient("ReluGrad")
def _relu_grad_grad(op, grad):
    """ReluGrad is linear in its gradients, masked by the features; the mask is flat almost everywhere."""
    return [relu_grad(grad, op.inputs[1]), zeros_like(op.inputs[1])]


def relu_grad(gradients, features, name: str | None = None) -> Tensor:
    """The gradient of relu: `gradients` where `features` > 0, else 0 (features may be relu's input or output)."""
    gradients, features = convert_pair(gradients, features)
    return _op("ReluGrad", (gradients, features), None, name or "ReluGrad")


register_op("Relu6", _infer_activation, dtypes=dtypes.REAL, examples=[
    Example(lambda x: relu6(x), lambda x: np.clip(x, 0, 6), inputs=((4, 5),), low=-8, high=8),
])


@register_gradient("Relu6")
def _relu6_grad(op, grad):
    x = op.inputs[0]
    return [math_ops.where(math_ops.logical_and(x > 0, x < 6), grad, zeros_like(grad))]


def relu6(features, name: str | None = None) -> Tensor:
    """min(max(features, 0), 6), elementwise."""
    return _activation("Relu6", features, None, name)


register_op("Elu", _infer_activation, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x: elu(x), _np_elu, inputs=((3, 4),)),
])


@register_gradient("Elu")
def _elu_grad(op, grad):
    """d elu = 1 where x > 0, else exp(x) = elu(x) + 1."""
    y = op.outputs[0]
    return [math_ops.where(y > 0, grad, grad * (y + 1))]


def elu(features, name: str | None = None) -> Tensor:
    """Exponential linear unit: features if > 0, else exp(features) - 1."""
    return _activation("Elu", features, None, name)


register_op("Softplus", _infer_activation, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x: softplus(x), _np_softplus, inputs=((3, 4),)),
    Example(lambda x: softplus(x), _np_softplus, inputs=(np.array([-1e4, -30.0, 0.0, 30.0, 1e4]),),
            dtypes=(dtypes.float64,)),
])


@register_gradient("Softplus")
def _softplus_grad(op, grad):
    return [grad * math_ops.sigmoid(op.inputs[0])]


def softplus(features, name: str | None = None) -> Tensor:
    """log(exp(features) + 1), elementwise, computed without overflow."""
    return _activation("Softplus", features, None, name)


register_op("Softsign", _infer_activation, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x: softsign(x), lambda x: x / (1 + np.abs(x)), inputs=((3, 4),)),
])


@register_gradient("Softsign")
def _softsign_grad(op, grad):
    return [grad / math_ops.square(1 + math_ops.abs(op.inputs[0]))]


def softsign(features, name: str | None = None) -> Tensor:
    """features / (abs(features) + 1), elementwise."""
    return _activation("Softsign", features, None, name)


register_op("LeakyRelu", _infer_activation, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x: leaky_relu(x), lambda x: np.where(x > 0, x, x * x.dtype.type(0.2)), inputs=((3, 4),)),
    Example(lambda x: leaky_relu(x, alpha=0.01), lambda x: np.where(x > 0, x, x * x.dtype.type(0.01)),
            inputs=((5,),)),
], attrs={"alpha": "float"})


@register_gradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return [math_ops.where(op.inputs[0] > 0, grad, grad * op.attrs["alpha"])]


def leaky_relu(features, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """features if > 0, else alpha * features.

    tfnb differs: integer features are refused (TypeError) rather than cast to float32 first.
    """
    return _activation("LeakyRelu", features, {"alpha": float(alpha)}, name)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _np_selu(x):
    return _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0)))


register_op("Selu", _infer_activation, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x: selu(x), _np_selu, inputs=((3, 4),)),
])


@register_gradient("Selu")
def _selu_grad(op, grad):
    """scale where x > 0, else selu(x) + scale * alpha (the derivative of scale * alpha * (exp(x) - 1))."""
    x, y = op.inputs[0], op.outputs[0]
    scale = math_ops.cast(_SELU_SCALE, y.dtype)
    below = y + math_ops.cast(_SELU_SCALE * _SELU_ALPHA, y.dtype)
    return [math_ops.where(x > 0, grad * scale, grad * below)]


def selu(features, name: str | None = None) -> Tensor:
    """scale * (features if > 0 else alpha * (exp(features) - 1)), the self-normalizing activation."""
    return _activation("Selu", features, None, name)


# -- softmax --------------------------------------------------------------------------------------


def _infer_softmax(op):
    dtype = _claimed_dtype(op, 0, "logits")
    shape = op.inputs[0].shape
    if shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    _normalized_axis(op.attrs["axis"], shape.ndims)
    return [(dtype, shape)]


def _np_softmax(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _np_log_softmax(x, axis=-1):
    x = x.astype(np.float64)
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


register_op("Softmax", _infer_softmax, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x: softmax(x), _np_softmax, inputs=((2, 5),)),
    Example(lambda x: softmax(x, axis=0), lambda x: _np_softmax(x, 0), inputs=((4, 3),)),
    Example(lambda x: softmax(x, axis=1), lambda x: _np_softmax(x, 1), inputs=((2, 3, 4),)),
    Example(lambda x: softmax(x, dim=-2), lambda x: _np_softmax(x, -2), inputs=((2, 3, 4),)),
    Example(lambda x: softmax(x), _np_softmax, inputs=(np.array([[1e4, 0.0, -1e4], [3.0, 3.0, 3.0]]),),
            dtypes=(dtypes.float64,)),
], attrs={"axis": "int"})


@register_gradient("Softmax")
def _softmax_grad(op, grad):
    """(grad - sum(grad * y)) * y along the axis, for y = softmax(x)."""
    y, axis = op.outputs[0], op.attrs["axis"]
    return [(grad - math_ops.reduce_sum(grad * y, axis, keepdims=True)) * y]


def softmax(logits, axis: int | None = None, name: str | None = None, dim: int | None = None) -> Tensor:
    """exp(logits) / sum(exp(logits), axis), computed stably; `axis` defaults to the last one.

    tfnb differs: the Softmax op takes the axis as an attr instead of transposing around it.
    """
    return _op("Softmax", (convert_to_tensor(logits),), {"axis": _softmax_axis(axis, dim)}, name or "Softmax")


register_op("LogSoftmax", _infer_softmax, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x: log_softmax(x), _np_log_softmax, inputs=((2, 5),)),
    Example(lambda x: log_softmax(x, axis=0), lambda x: _np_log_softmax(x, 0), inputs=((4, 3),)),
    Example(lambda x: log_softmax(x), _np_log_softmax, inputs=(np.array([[1e4, 0.0, -1e4]]),),
            dtypes=(dtypes.float64,)),
], attrs={"axis": "int"})


@register_gradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    """grad - softmax(x) * sum(grad) along the axis; softmax(x) is exp of the output, which cannot overflow."""
    y, axis = op.outputs[0], op.attrs["axis"]
    return [grad - math_ops.exp(y) * math_ops.reduce_sum(grad, axis, keepdims=True)]


def log_softmax(logits, axis: int | None = None, name: str | None = None, dim: int | None = None) -> Tensor:
    """logits - log(sum(exp(logits), axis)), computed stably; `axis` defaults to the last one.

    tfnb differs: the LogSoftmax op takes the axis as an attr instead of transposing around it.
    """
    return _op("LogSoftmax", (convert_to_tensor(logits),), {"axis": _softmax_axis(axis, dim)},
               name or "LogSoftmax")


# -- bias_add and l2_loss -------------------------------------------------------------------------


def _infer_bias_add(op):
    value, bias = op.inputs
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes, "value")
    channels_first = op.attrs["data_format"] == "NCHW"
    min_rank = 3 if channels_first else 2
    if value.shape.ndims is not None and value.shape.ndims < min_rank:
        raise ValueError(f"Shape must be at least rank {min_rank} but is rank {value.shape.ndims}")
    if bias.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {bias.shape.ndims}")
    if value.shape.ndims is None:
        return [(dtype, value.shape)]
    dims = list(value.shape.as_tuple())
    channel = 1 if channels_first else -1
    bias_dim = bias.shape.as_tuple()[0] if bias.shape.ndims == 1 else None
    if dims[channel] is not None and bias_dim is not None and dims[channel] != bias_dim:
        raise ValueError(f"Dimensions must be equal, but are {dims[channel]} and {bias_dim}")
    dims[channel] = dims[channel] if dims[channel] is not None else bias_dim
    return [(dtype, TensorShape(dims))]


def _np_bias_add_nchw(value, bias):
    return value + bias.reshape((-1,) + (1,) * (value.ndim - 2))


register_op("BiasAdd", _infer_bias_add, dtypes=dtypes.NUMERIC, examples=[
    Example(lambda v, b: bias_add(v, b), np.add, inputs=((2, 3), (3,))),
    Example(lambda v, b: bias_add(v, b, data_format="NHWC"), np.add, inputs=((2, 4, 4, 3), (3,))),
    Example(lambda v, b: bias_add(v, b, data_format="NCHW"), _np_bias_add_nchw, inputs=((2, 3, 4, 5), (3,))),
    Example(lambda v, b: bias_add(v, b, data_format="NCHW"), _np_bias_add_nchw, inputs=((2, 3, 4), (3,))),
], attrs={"data_format": "string"})


@register_gradient("BiasAdd")
def _bias_add_grad(op, grad):
    return [grad, bias_add_grad(grad, op.attrs["data_format"])]


def bias_add(value, bias, data_format: str | None = None, name: str | None = None) -> Tensor:
    """value + bias, with the 1-D bias added along the channel dimension (last for NHWC, 1 for NCHW)."""
    value = convert_to_tensor(value)
    bias = convert_to_tensor(bias, dtype=value.dtype)
    return _op("BiasAdd", (value, bias), {"data_format": _bias_data_format(data_format)}, name or "BiasAdd")


def _bias_data_format(data_format: str | None) -> str:
    """'NHWC' or 'NCHW' for TF's data_format spellings (None, 'NHWC', 'N...C', 'NCHW', 'NC...')."""
    if data_format is None:
        return "NHWC"
    if data_format.startswith("NC"):
        return "NCHW"
    if data_format.startswith("N") and data_format.endswith("C"):
        return "NHWC"
    raise ValueError(f"data_format must be of the form `N...C` or `NC...`, got {data_format!r}")


def _infer_bias_add_grad(op):
    out_backprop = op.inputs[0]
    dtype = _claimed_dtype(op, 0, "out_backprop")
    channels_first = op.attrs["data_format"] == "NCHW"
    min_rank = 3 if channels_first else 2
    if out_backprop.shape.ndims is None:
        return [(dtype, TensorShape([None]))]
    if out_backprop.shape.ndims < min_rank:
        raise ValueError(f"Shape must be at least rank {min_rank} but is rank {out_backprop.shape.ndims}")
    return [(dtype, TensorShape([out_backprop.shape[1 if channels_first else -1]]))]


def _np_bias_add_grad(grad, channel: int):
    return np.moveaxis(grad, channel, -1).reshape(-1, grad.shape[channel]).sum(0, dtype=grad.dtype)


register_op("BiasAddGrad", _infer_bias_add_grad, dtypes=dtypes.NUMERIC, examples=[
    Example(lambda g: bias_add_grad(g), lambda g: _np_bias_add_grad(g, -1), inputs=((2, 4, 3),)),
    Example(lambda g: bias_add_grad(g, "NCHW"), lambda g: _np_bias_add_grad(g, 1), inputs=((2, 3, 4, 5),)),
    Example(lambda g: bias_add_grad(g, "NCHW"), lambda g: _np_bias_add_grad(g, 1), inputs=((2, 3, 4),)),
], attrs={"data_format": "string"})


@register_gradient("BiasAddGrad")
def _bias_add_grad_grad(op, grad):
    """BiasAddGrad sums over all but the channel axis; its adjoint spreads grad along them again."""
    return [bias_add(zeros_like(op.inputs[0]), grad, op.attrs["data_format"])]


def bias_add_grad(out_backprop, data_format: str | None = None, name: str | None = None) -> Tensor:
    """The gradient of bias_add for its bias: out_backprop summed over every axis but the channel axis."""
    attrs = {"data_format": _bias_data_format(data_format)}
    return _op("BiasAddGrad", (convert_to_tensor(out_backprop),), attrs, name or "BiasAddGrad")


def _infer_l2_loss(op):
    return [(_claimed_dtype(op, 0, "t"), scalar())]


register_op("L2Loss", _infer_l2_loss, dtypes=dtypes.FLOATS, examples=[
    Example(lambda t: l2_loss(t), lambda t: np.sum(t.astype(np.float64) ** 2) / 2, inputs=((3, 4),)),
    Example(lambda t: l2_loss(t), lambda t: np.float64(t) ** 2 / 2, inputs=((),)),
    Example(lambda t: l2_loss(t), lambda t: np.float64(0), inputs=((0, 3),)),
])


@register_gradient("L2Loss")
def _l2_loss_grad(op, grad):
    return [op.inputs[0] * grad]


def l2_loss(t, name: str | None = None) -> Tensor:
    """sum(t ** 2) / 2, a scalar: half the squared L2 norm, as used for weight decay."""
    return _op("L2Loss", (convert_to_tensor(t),), None, name or "L2Loss")


# -- cross-entropy losses -------------------------------------------------------------------------


def _require_named(function: str, sentinel, labels, logits) -> None:
    """TF's guard: the losses take labels and logits by keyword only, both given."""
    if sentinel is not None:
        raise ValueError(f"Only call `{function}` with named arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")


def _infer_sigmoid_xent(op):
    logits, labels = op.inputs
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes, "logits")
    if not logits.shape.is_compatible_with(labels.shape):
        raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
    return [(dtype, logits.shape.merge_with(labels.shape))]


def _np_sigmoid_xent(logits, labels):
    x, z = logits.astype(np.float64), labels.astype(np.float64)
    return np.logaddexp(0, x) - x * z


register_op("SigmoidCrossEntropyWithLogits", _infer_sigmoid_xent, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x, z: sigmoid_cross_entropy_with_logits(labels=z, logits=x), _np_sigmoid_xent,
            inputs=((3, 4), (3, 4))),
    Example(lambda x, z: sigmoid_cross_entropy_with_logits(labels=z, logits=x), _np_sigmoid_xent,
            inputs=((5,), (5,)), low=0, high=1),
    Example(lambda x, z: sigmoid_cross_entropy_with_logits(labels=z, logits=x), _np_sigmoid_xent,
            inputs=(np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0]), (5,)), dtypes=(dtypes.float64,), low=0, high=1),
])


@register_gradient("SigmoidCrossEntropyWithLogits")
def _sigmoid_xent_grad(op, grad):
    """Logits get (sigmoid(x) - z) * grad; labels get -x * grad."""
    logits, labels = op.inputs
    return [grad * (math_ops.sigmoid(logits) - labels), -grad * logits]


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name: str | None = None) -> Tensor:
    """Elementwise logistic loss max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z."""
    _require_named("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    logits, labels = convert_pair(logits, labels)
    return _op("SigmoidCrossEntropyWithLogits", (logits, labels), None, name or "logistic_loss")


def _infer_softmax_xent(op):
    logits, labels = op.inputs
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes, "logits")
    if not logits.shape.is_compatible_with(labels.shape):
        raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
    shape = logits.shape.merge_with(labels.shape)
    if shape.ndims == 0:
        raise ValueError("logits cannot be a scalar")
    axis = _normalized_axis(op.attrs["axis"], shape.ndims)
    if axis is None:
        return [(dtype, unknown_shape())]
    dims = shape.as_tuple()
    return [(dtype, TensorShape(dims[:axis] + dims[axis + 1:]))]


def _np_softmax_xent(logits, labels, axis=-1):
    return -np.sum(labels.astype(np.float64) * _np_log_softmax(logits, axis), axis)


# Labels are softmax(z) in the differentiable examples: TF's gradient for the logits, softmax - labels,
# is the derivative only where each row of labels sums to 1.
register_op("SoftmaxCrossEntropyWithLogits", _infer_softmax_xent, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x, z: softmax_cross_entropy_with_logits_v2(labels=softmax(z), logits=x),
            lambda x, z: _np_softmax_xent(x, _np_softmax(z)), inputs=((3, 5), (3, 5))),
    Example(lambda x, z: softmax_cross_entropy_with_logits_v2(labels=softmax(z, 1), logits=x, axis=1),
            lambda x, z: _np_softmax_xent(x, _np_softmax(z, 1), 1), inputs=((2, 3, 4), (2, 3, 4))),
    Example(lambda x, z: softmax_cross_entropy_with_logits_v2(labels=softmax(z, 0), logits=x, dim=0),
            lambda x, z: _np_softmax_xent(x, _np_softmax(z, 0), 0), inputs=((4, 2), (4, 2))),
    Example(lambda x, z: softmax_cross_entropy_with_logits_v2(labels=softmax(z), logits=x),
            lambda x, z: _np_softmax_xent(x, _np_softmax(z)),
            inputs=(np.array([[1000.0, 0.0, -1000.0], [1000.0, 1000.0, -1000.0]]), (2, 3)), dtypes=(dtypes.float64,)),
    Example(lambda x, z: softmax_cross_entropy_with_logits_v2(labels=z, logits=x), _np_softmax_xent,
            inputs=((6,), (6,)), differentiable=False),
    # Finite differences would see the labels, which the deprecated form passes through stop_gradient.
    Example(lambda x, z: softmax_cross_entropy_with_logits(labels=z, logits=x, dim=0),
            lambda x, z: _np_softmax_xent(x, z, 0), inputs=((4, 2), (4, 2)), differentiable=False),
], attrs={"axis": "int"})


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, grad):
    """Logits get (softmax(x) - labels) * grad, as in TF; labels get -log_softmax(x) * grad (TF1's v2 rule)."""
    logits, labels = op.inputs
    axis = op.attrs["axis"]
    grad = expand_dims(grad, axis)
    return [grad * (softmax(logits, axis) - labels), -grad * log_softmax(logits, axis)]


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, dim: int | None = None,
                                         name: str | None = None, axis: int | None = None) -> Tensor:
    """Per-example -sum(labels * log_softmax(logits), axis); gradients flow into labels too.

    tfnb differs: the op outputs the loss only, not TF's (loss, backprop) pair.
    """
    _require_named("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    logits, labels = convert_pair(logits, labels)
    return _op("SoftmaxCrossEntropyWithLogits", (logits, labels), {"axis": _softmax_axis(axis, dim)},
               name or "softmax_cross_entropy_with_logits")


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim: int | None = None,
                                      name: str | None = None, axis: int | None = None) -> Tensor:
    """TF1's deprecated form of softmax_cross_entropy_with_logits_v2: no gradient flows into labels."""
    _require_named("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    logits, labels = convert_pair(logits, labels)
    return softmax_cross_entropy_with_logits_v2(labels=stop_gradient(labels), logits=logits, dim=dim, name=name,
                                                axis=axis)


def _infer_sparse_xent(op):
    logits, labels = op.inputs
    dtype = _claimed_dtype(op, 0, "logits")
    check_dtype_in(op, labels.dtype, dtypes.INDEX, "labels")
    if logits.shape.ndims == 0:
        raise ValueError("logits cannot be a scalar")
    if labels.shape.ndims is not None and logits.shape.ndims is not None:
        if labels.shape.ndims != logits.shape.ndims - 1:
            raise ValueError(f"Rank mismatch: Rank of labels (received {labels.shape.ndims}) should equal rank "
                             f"of logits minus 1 (received {logits.shape.ndims}).")
        if not labels.shape.is_compatible_with(logits.shape[:-1]):
            raise ValueError(f"Shape mismatch: The shape of labels (received {labels.shape}) should equal the "
                             f"shape of logits except for the last dimension (received {logits.shape}).")
    return [(dtype, labels.shape.merge_with(logits.shape[:-1])), (dtype, logits.shape)]


def _np_sparse_xent(labels, logits):
    log_probs = _np_log_softmax(logits)
    return -np.take_along_axis(log_probs, labels[..., None].astype(np.intp), -1)[..., 0]


register_op("SparseSoftmaxCrossEntropyWithLogits", _infer_sparse_xent, dtypes=dtypes.FLOATS, examples=[
    Example(lambda z, x: sparse_softmax_cross_entropy_with_logits(labels=z, logits=x), _np_sparse_xent,
            inputs=(np.array([0, 3, 1], np.int32), (3, 4))),
    Example(lambda z, x: sparse_softmax_cross_entropy_with_logits(labels=z, logits=x), _np_sparse_xent,
            inputs=(np.array([[2, 0, 1], [1, 1, 0]], np.int64), (2, 3, 3))),
    Example(lambda z, x: sparse_softmax_cross_entropy_with_logits(labels=z, logits=x), _np_sparse_xent,
            inputs=(np.array(2, np.int32), (5,))),
    Example(lambda z, x: sparse_softmax_cross_entropy_with_logits(labels=z, logits=x), _np_sparse_xent,
            inputs=(np.array([0, 2], np.int64), np.array([[1000.0, 0.0, -1000.0], [-1000.0, 1000.0, 1000.0]])),
            dtypes=(dtypes.float64,)),
])


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_grad(op, grad, _backprop_grad):
    """Logits get grad times the op's backprop output, softmax(x) - one_hot(labels); labels get none.

    As in TF, the backprop output itself is not differentiated (no second derivative).
    """
    return [expand_dims(grad, -1) * op.outputs[1], None]


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name: str | None = None) -> Tensor:
    """Per-example -log_softmax(logits)[label]: labels hold class indices, logits one more dimension.

    The op has TF's two outputs, (loss, backprop); this returns the loss.
    """
    _require_named("sparse_softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    # As TF: the op sits in a scope of its own name ('loss/loss' for name='loss').
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits"):
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        return _op("SparseSoftmaxCrossEntropyWithLogits", (logits, labels), None,
                   name or "SparseSoftmaxCrossEntropyWithLogits")


# -- top-k membership -------------------------------------------------------------------------------


def _infer_in_top_k(op):
    predictions, targets, k = op.inputs
    check_dtype_in(op, predictions.dtype, (dtypes.float32,), "predictions")
    check_dtype_in(op, targets.dtype, dtypes.INDEX, "targets")
    if targets.dtype is not k.dtype:
        raise TypeError(f"targets ({targets.dtype.name}) and k ({k.dtype.name}) must have the same dtype")
    if predictions.shape.ndims not in (None, 2):
        raise ValueError(f"predictions must be 2-dimensional, got shape {predictions.shape}")
    if targets.shape.ndims not in (None, 1):
        raise ValueError(f"targets must be 1-dimensional, got shape {targets.shape}")
    if k.shape.ndims not in (None, 0):
        raise ValueError(f"k must be a scalar, got shape {k.shape}")
    batch = TensorShape([predictions.shape[0].value if predictions.shape.ndims else None])
    return [(dtypes.bool_, batch.merge_with(targets.shape) if targets.shape.ndims else batch)]


def _np_in_top_k(predictions, targets, k):
    rows = np.arange(len(targets))
    valid = (targets >= 0) & (targets < predictions.shape[1])
    target_values = predictions[rows, np.where(valid, targets, 0)]
    above = (predictions > target_values[:, None]).sum(axis=1)
    finite = np.isfinite(predictions).all(axis=1)
    return valid & finite & (above < k)


register_op("InTopKV2", _infer_in_top_k, dtypes=(dtypes.float32,), examples=[
    Example(lambda p: [in_top_k(p, [2, 0, 4], 1), in_top_k(p, [2, 0, 4], 3)],
            lambda p: [_np_in_top_k(p, np.array([2, 0, 4]), 1), _np_in_top_k(p, np.array([2, 0, 4]), 3)],
            inputs=((3, 5),), differentiable=False),
    Example(lambda p, t: in_top_k(p, t, 2), lambda p, t: _np_in_top_k(p, t, 2),
            inputs=(np.array([[1.0, 2.0, 2.0, 0.0], [np.nan, 1.0, 0.0, 0.0], [0.0, 1.0, 2.0, 3.0]], np.float32),
                    np.array([1, 1, 7], np.int64)), differentiable=False),
])
not_differentiable("InTopKV2")


def in_top_k(predictions, targets, k, name: str | None = None) -> Tensor:
    """Per row, whether predictions[row, targets[row]] is among the k largest (ties count in; never for NaN rows)."""
    targets = convert_to_tensor(targets)
    k = convert_to_tensor(k, dtype=targets.dtype if targets.dtype.is_integer else None)
    return _op("InTopKV2", (convert_to_tensor(predictions), targets, k), None, name)
