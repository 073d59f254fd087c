"""Neural-network kernels (activations, softmax, bias_add, l2_loss, cross-entropies), written against `xp`."""

from __future__ import annotations

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.conv.scratch import slices_in_turns
from tfnb.kernels.intra_op import PARALLEL_WORK
from tfnb.kernels.long_rows import add_channels_into, relu_into
from tfnb.kernels.registry import kernel


def _typed(node, value):
    """`value` as a NumPy scalar of the op's output dtype, so arithmetic with it keeps that dtype (a scalar, not a
    0-d device array, as a kernel fused with others into one device kernel may capture only scalars)."""
    return node.output_dtypes[0].type(value)


def _math_dtype(np_dtype):
    # float16 exps and sums lose most digits and overflow past 65504: reductions run in float32.
    return np.dtype(np.float32) if np_dtype == np.float16 else np_dtype


def _shifted(x, axis: int):
    """x minus its max along `axis`: exp of it cannot overflow, and the max term is exp(0) = 1."""
    return x - x.max(axis, keepdims=True)


# -- activations ----------------------------------------------------------------------------------


@kernel("Relu", fresh_output=True, elementwise=True)
def relu(node):
    xp, zero = node.xp, _typed(node, 0)

    def into(x, out):
        return _split(xp, lambda rows: relu_into(xp, x[rows], out[rows]), out)

    def run(x):
        if xp is not np:  # ufuncs and scalars only: a device may compile it with its neighbours (xp.fuse)
            return xp.maximum(x, zero)
        return into(x, xp.empty_like(x)) if x.size >= PARALLEL_WORK else relu_into(xp, x, xp.empty_like(x))

    def inplace(x):
        return into(x, x)

    run.inplace = inplace
    return run


@kernel("ReluGrad", fresh_output=True, elementwise=True)
def relu_grad(node):
    xp, zero = node.xp, _typed(node, 0)

    # TF's formula: a product with the mask (np.where is several times slower on unpredictable masks).
    def into(gradients, features, out):
        return _split(xp, lambda rows: xp.multiply(gradients[rows], features[rows] > zero, out=out[rows]), out)

    def run(gradients, features):
        if xp is np and gradients.size >= PARALLEL_WORK:
            return into(gradients, features, xp.empty_like(gradients))
        return gradients * (features > zero)

    def inplace(gradients, features):
        return into(gradients, features, gradients)

    run.inplace = inplace
    return run


def _split(xp, fill_rows, out):
    """fill_rows(rows) over slices of out's first axis, taken in turns by the run's threads; out."""
    slices_in_turns(fill_rows, out.shape[0], out.size if xp is np else 0)
    return out


@kernel("Relu6", fresh_output=True, elementwise=True)
def relu6(node):
    xp, zero, six = node.xp, _typed(node, 0), _typed(node, 6)
    return lambda x: xp.minimum(xp.maximum(x, zero), six)


@kernel("Elu", fresh_output=True, elementwise=True)
def elu(node):
    xp, zero = node.xp, _typed(node, 0)
    # expm1 of min(x, 0): the branch that `where` drops must not overflow either.
    return lambda x: xp.where(x > zero, x, xp.expm1(xp.minimum(x, zero)))


@kernel("Softplus", fresh_output=True, elementwise=True)
def softplus(node):
    xp, zero = node.xp, _typed(node, 0)
    # max(x, 0) + log1p(exp(-|x|)) equals log(1 + exp(x)) without overflowing for large x.
    return lambda x: xp.maximum(x, zero) + xp.log1p(xp.exp(-xp.abs(x)))


@kernel("Softsign", fresh_output=True, elementwise=True)
def softsign(node):
    xp, one = node.xp, _typed(node, 1)
    return lambda x: x / (one + xp.abs(x))


@kernel("LeakyRelu", fresh_output=True, elementwise=True)
def leaky_relu(node):
    xp, zero, alpha = node.xp, _typed(node, 0), _typed(node, node.attrs["alpha"])
    return lambda x: xp.where(x > zero, x, x * alpha)


# -- softmax --------------------------------------------------------------------------------------


@kernel("Softmax", fresh_output=True)
def softmax(node):
    xp, axis = node.xp, node.attrs["axis"]
    out = node.output_dtypes[0]
    compute = _math_dtype(out)

    def run(logits):
        e = xp.exp(_shifted(logits.astype(compute, copy=False), axis))
        return (e / e.sum(axis, keepdims=True)).astype(out, copy=False)

    return run


def _log_softmax(xp, logits, axis: int):
    shifted = _shifted(logits, axis)
    return shifted - xp.log(xp.exp(shifted).sum(axis, keepdims=True))


@kernel("LogSoftmax", fresh_output=True)
def log_softmax(node):
    xp, axis = node.xp, node.attrs["axis"]
    out = node.output_dtypes[0]
    compute = _math_dtype(out)
    return lambda logits: _log_softmax(xp, logits.astype(compute, copy=False), axis).astype(out, copy=False)


# -- bias_add and l2_loss -------------------------------------------------------------------------


@kernel("BiasAdd", fresh_output=True)
def bias_add(node):
    xp = node.xp
    channels_first = node.attrs["data_format"] == "NCHW"

    def broadcastable(value, bias):
        # Checked here because NumPy would silently broadcast a mismatch that static shapes missed.
        if value.shape[1 if channels_first else -1] != bias.shape[0]:
            raise InvalidArgumentError(None, None, f"Must provide as many biases as the channel dimension of the "
                                       f"input tensor: {list(bias.shape)} vs. {list(value.shape)}")
        return bias.reshape(bias.shape + (1,) * (value.ndim - 2)) if channels_first else bias

    def into(value, bias, out):
        bias = broadcastable(value, bias)
        return _split(xp, lambda rows: add_channels_into(xp, value[rows], bias, out[rows]), out)

    def run(value, bias):
        if xp is np and value.size >= PARALLEL_WORK:
            return into(value, bias, xp.empty_like(value))
        return value + broadcastable(value, bias)

    def inplace(value, bias):
        return into(value, bias, value)

    run.inplace = inplace
    return run


@kernel("BiasAddGrad", fresh_output=True)
def bias_add_grad(node):
    xp, out = node.xp, node.output_dtypes[0]
    compute = _math_dtype(out)
    channels_first = node.attrs["data_format"] == "NCHW"

    ones = xp.ones(0)  # the last row of ones, kept: making it took 3-19 % of the sum

    def run(grad):
        nonlocal ones
        if channels_first:
            return grad.sum((0,) + tuple(range(2, grad.ndim)), dtype=compute).astype(out, copy=False)
        rows = grad.reshape(-1, grad.shape[-1])  # a reshape of a contiguous array copies nothing
        if rows.dtype.kind == "f" and rows.dtype.itemsize >= 4:
            # Summed down as a product with a row of ones: BLAS does it several times faster than sum(0).
            if ones.shape[0] != rows.shape[0] or ones.dtype != rows.dtype:
                ones = xp.ones(rows.shape[0], rows.dtype)
            return ones @ rows
        return rows.sum(0, dtype=compute).astype(out, copy=False)

    return run


@kernel("L2Loss", fresh_output=True)
def l2_loss(node):
    xp, out = node.xp, node.output_dtypes[0]
    compute = _math_dtype(out)

    def run(t):
        t = t.astype(compute, copy=False)
        return xp.asarray(xp.vdot(t, t) / 2).astype(out, copy=False)

    return run


# -- cross-entropy losses -------------------------------------------------------------------------


@kernel("SigmoidCrossEntropyWithLogits", fresh_output=True)
def sigmoid_xent(node):
    xp, zero = node.xp, _typed(node, 0)
    # The stable form of -z*log(sigmoid(x)) - (1-z)*log(1-sigmoid(x)): no exp of a positive number.
    return lambda logits, labels: (xp.maximum(logits, zero) - logits * labels
                                   + xp.log1p(xp.exp(-xp.abs(logits))))


@kernel("SoftmaxCrossEntropyWithLogits", fresh_output=True)
def softmax_xent(node):
    xp, axis = node.xp, node.attrs["axis"]
    out = node.output_dtypes[0]
    compute = _math_dtype(out)

    def run(logits, labels):
        log_probs = _log_softmax(xp, logits.astype(compute, copy=False), axis)
        return (-(labels.astype(compute, copy=False) * log_probs).sum(axis)).astype(out, copy=False)

    return run


@kernel("SparseSoftmaxCrossEntropyWithLogits", fresh_output=True)
def sparse_softmax_xent(node):
    xp = node.xp
    out = node.output_dtypes[0]
    compute = _math_dtype(out)
    label_elements = _label_elements(xp)

    def run(logits, labels):
        """(loss, backprop): -log_softmax at the label, and softmax - one_hot(label), as TF's kernel."""
        _check_labels(logits, labels)
        shifted = _shifted(logits if logits.dtype == compute else logits.astype(compute), -1)
        at_label = label_elements(labels)
        picked = shifted[at_label]
        exps = xp.exp(shifted, out=shifted)
        sums = exps.sum(-1, keepdims=True)
        loss = xp.log(sums[..., 0]) - picked
        exps /= sums
        exps[at_label] -= 1
        return (loss, exps) if compute == out else (loss.astype(out), exps.astype(out))

    return run


def _label_elements(xp):
    """label_elements(labels): the index of each label's element of the logits, per axis of labels its positions
    (broadcasting), then labels; the positions are kept for the next call of the same shape (a training step's)."""
    kept = ((), ())

    def label_elements(labels) -> tuple:
        nonlocal kept
        shape, positions = kept
        if labels.shape != shape:
            last = labels.ndim - 1
            positions = tuple(xp.arange(n).reshape((-1,) + (1,) * (last - k)) for k, n in enumerate(labels.shape))
            kept = (labels.shape, positions)  # one assignment: a run in another thread reads a consistent pair
        return (*positions, labels)

    return label_elements


# Labels as unsigned integers of their width: a negative label reads as one past every class count, so one
# reduction checks both bounds.
_UNSIGNED = {np.dtype(np.int32): np.uint32, np.dtype(np.int64): np.uint64}


def _check_labels(logits, labels) -> None:
    """TF's CPU checks: labels shaped like logits without the class dimension, each in [0, classes)."""
    if labels.shape != logits.shape[:-1]:
        raise InvalidArgumentError(None, None, f"labels of shape {list(labels.shape)} must have the shape of "
                                   f"logits {list(logits.shape)} without its last dimension")
    if not labels.size:
        return
    classes, unsigned = logits.shape[-1], _UNSIGNED.get(labels.dtype)
    if unsigned is not None:
        if int(labels.view(unsigned).max()) < classes:
            return
    elif int(labels.min()) >= 0 and int(labels.max()) < classes:
        return
    values = [int(v) for v in labels.ravel().tolist()]
    bad = next(v for v in values if not 0 <= v < classes)
    raise InvalidArgumentError(None, None, f"Received a label value of {bad} which is outside the valid "
                               f"range of [0, {classes}).  Label values: {' '.join(map(str, values))}")


@kernel("Selu", fresh_output=True)
def selu(node):
    xp, zero = node.xp, _typed(node, 0)
    alpha, scale = _typed(node, 1.6732632423543772848170429916717), _typed(node, 1.0507009873554804934193349852946)
    return lambda x: scale * xp.where(x > zero, x, alpha * xp.expm1(xp.minimum(x, zero)))


# -- top-k membership -------------------------------------------------------------------------------


@kernel("InTopKV2", fresh_output=True)
def in_top_k(node):
    xp = node.xp

    def run(predictions, targets, k):
        # TF's rule: a target is in the top k when fewer than k classes score strictly higher; a row with a
        # non-finite score, or a target out of range, says False.
        valid = (targets >= 0) & (targets < predictions.shape[1])
        rows = xp.arange(targets.shape[0])
        target_scores = predictions[rows, xp.where(valid, targets, 0)]
        above = (predictions > target_scores[:, None]).sum(axis=1)
        return valid & xp.isfinite(predictions).all(axis=1) & (above < k)

    return run
