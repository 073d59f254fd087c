"""Optimizer update kernels: each updates a variable and its slots in place (see kernels/state.py).

A rule is written once, as a function updating arrays in place with `out=` ufuncs and reusable
scratch buffers, so a step allocates nothing. A dense op runs it on the stored arrays; a sparse op
sums the rows of repeated indices, gathers the rows it touches, runs the same rule on them and
writes them back. The formulas are those of TF's ApplyXxx kernels (tensorflow/core/kernels/training_ops.cc).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.blas import product_accumulator
from tfnb.kernels.conv.scratch import Scratch
from tfnb.kernels.intra_op import parallel_parts, run_width
from tfnb.kernels.products import SKINNY, product_into
from tfnb.kernels.registry import kernel
from tfnb.kernels.state import _uninitialized, update_variable

# -- the rules: rule(xp, temps, var, *slots, grad, *hyperparameters), all arrays updated in place ----


def _gradient_descent(xp, temps, var, grad, alpha):
    t, = temps
    xp.multiply(grad, alpha, out=t)
    var -= t


def _momentum(xp, temps, var, accum, grad, lr, momentum, use_nesterov):
    t, = temps
    accum *= momentum
    accum += grad
    if use_nesterov:  # var -= grad * lr + accum * momentum * lr
        xp.multiply(accum, momentum, out=t)
        t += grad
        t *= lr
    else:
        xp.multiply(accum, lr, out=t)
    var -= t


def _adagrad(xp, temps, var, accum, grad, lr):
    t, = temps
    xp.multiply(grad, grad, out=t)
    accum += t
    xp.sqrt(accum, out=t)
    xp.divide(grad, t, out=t)
    t *= lr
    var -= t


def _adadelta(xp, temps, var, accum, accum_update, grad, lr, rho, epsilon):
    update, t = temps
    accum *= rho
    xp.multiply(grad, grad, out=t)
    t *= 1 - rho
    accum += t
    # update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad
    xp.add(accum_update, epsilon, out=update)
    xp.sqrt(update, out=update)
    xp.add(accum, epsilon, out=t)
    xp.sqrt(t, out=t)
    update /= t
    update *= grad
    xp.multiply(update, lr, out=t)
    var -= t
    accum_update *= rho
    xp.multiply(update, update, out=t)
    t *= 1 - rho
    accum_update += t


def _decay_mean_square(xp, t, ms, grad, rho) -> None:
    """ms += (grad**2 - ms) * (1 - rho)."""
    xp.multiply(grad, grad, out=t)
    t -= ms
    t *= 1 - rho
    ms += t


def _momentum_step(xp, t, var, mom, grad, lr, momentum) -> None:
    """With t = sqrt(denominator): mom = mom * momentum + grad * lr / t; var -= mom."""
    xp.divide(grad, t, out=t)
    t *= lr
    mom *= momentum
    mom += t
    var -= mom


def _rms_prop(xp, temps, var, ms, mom, grad, lr, rho, momentum, epsilon):
    t, = temps
    _decay_mean_square(xp, t, ms, grad, rho)
    xp.add(ms, epsilon, out=t)
    xp.sqrt(t, out=t)
    _momentum_step(xp, t, var, mom, grad, lr, momentum)


def _centered_rms_prop(xp, temps, var, mg, ms, mom, grad, lr, rho, momentum, epsilon):
    t, = temps
    _decay_mean_square(xp, t, ms, grad, rho)
    xp.subtract(grad, mg, out=t)
    t *= 1 - rho
    mg += t
    xp.multiply(mg, mg, out=t)
    xp.subtract(ms, t, out=t)
    t += epsilon
    xp.sqrt(t, out=t)
    _momentum_step(xp, t, var, mom, grad, lr, momentum)


def _adam_step_size(beta1_power, beta2_power, lr) -> float:
    """lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)."""
    return float(lr) * math.sqrt(1 - float(beta2_power)) / (1 - float(beta1_power))


def _scaled_step(xp, t, var, m, v, alpha, epsilon) -> None:
    """var -= alpha * m / (sqrt(v) + epsilon)."""
    xp.sqrt(v, out=t)
    t += epsilon
    xp.divide(m, t, out=t)
    t *= alpha
    var -= t


def _adam(xp, temps, var, m, v, grad, alpha, beta1, beta2, epsilon):
    t, = temps
    xp.subtract(grad, m, out=t)
    t *= 1 - beta1
    m += t
    _decay_mean_square(xp, t, v, grad, beta2)
    _scaled_step(xp, t, var, m, v, alpha, epsilon)


def _adam_sparse(xp, temps, var, m, v, rows, grad, alpha, beta1, beta2, epsilon):
    """TF1's AdamOptimizer._apply_sparse_shared: every row of m and v decays, the gradient's rows add in."""
    t, = temps
    m *= beta1
    m[rows] += grad * (1 - beta1)
    v *= beta2
    v[rows] += grad * grad * (1 - beta2)
    _scaled_step(xp, t, var, m, v, alpha, epsilon)


# -- running a rule on the variables' stored arrays --------------------------------------------------


def _stored(handle):
    value = handle.values.get(handle.name)
    if value is None:
        raise _uninitialized(handle)
    return value


def _writable(handles, xp, body, arrays=()):
    """Calls body(*arrays) on the variables' stored arrays, made writable (copies where others hold them)."""
    def compute_into(old, out):
        if out is not old:
            out[...] = old
        if len(arrays) + 1 == len(handles):
            body(*arrays, out)
        else:
            _writable(handles, xp, body, arrays + (out,))
    update_variable(handles[len(arrays)], xp, compute_into)


def _scratch(xp, count: int):
    """temps(like): `count` buffers shaped like `like`, reused across calls (one set per thread)."""
    local = threading.local()

    def temps(like) -> list:
        buffers = getattr(local, "buffers", None)
        if buffers is None or buffers[0].shape != like.shape or buffers[0].dtype != like.dtype:
            buffers = local.buffers = [xp.empty_like(like) for _ in range(count)]
        return buffers
    return temps


def _check_slots(handles) -> tuple:
    """The variable's shape, after checking that it and its slots are initialized and alike."""
    shape = _stored(handles[0]).shape
    for handle in handles[1:]:
        if _stored(handle).shape != shape:
            raise InvalidArgumentError(None, None, f"var and {handle.name} do not have the same "
                                       f"shape{list(shape)} {list(_stored(handle).shape)}")
    return shape


def _check_dense(handles, grad) -> None:
    shape = _check_slots(handles)
    if shape != grad.shape:
        raise InvalidArgumentError(None, None, f"var and grad do not have the same shape{list(shape)} "
                                   f"{list(grad.shape)}")


def _dense(node, rule, temps: int = 1):
    """update(handles, grad, *hyperparameters): the rule on the whole variable and slots.

    On NumPy, a variable of _DESCENT_WHOLE elements or more goes block by block (_DESCENT_BLOCK elements of each
    array), blocks split across the run's threads: each of the rule's passes over a block finds it in a core's
    L2 cache, where passes over the whole arrays stream them from memory once per pass. Every rule is elementwise,
    so the result is the same, and the temporaries are a block's size, not the variable's (151 MB for AlexNet's
    first dense layer). AlexNet's training step at batch 4, alternating in one process: with MomentumOptimizer 0.83x
    (205 to 169 ms), with AdamOptimizer 0.63x (351 to 227 ms).
    """
    xp, scratch = node.xp, _scratch(node.xp, temps)

    def update(handles, grad, *hyperparameters):
        _check_dense(handles, grad)

        def apply(*arrays):
            if xp is not np or grad.size < _DESCENT_WHOLE or not all(
                    array.flags.c_contiguous for array in arrays + (grad,)):
                rule(xp, scratch(grad), *arrays, grad, *hyperparameters)
                return
            flat, flat_grad = [array.reshape(-1) for array in arrays], grad.reshape(-1)

            def block_update(block: slice) -> None:
                size = block.stop - block.start
                buffers = scratch(flat_grad[:_DESCENT_BLOCK])
                rule(xp, [buffer[:size] for buffer in buffers], *[array[block] for array in flat], flat_grad[block],
                     *hyperparameters)

            _in_blocks(flat_grad.size, flat_grad.size * len(arrays), block_update)

        _writable(handles, xp, apply)
    return update


def _summed_rows(xp, shape: tuple, indices, grad) -> tuple:
    """The distinct indices and their summed gradient rows (TF sums repeated indices before a sparse update)."""
    if indices.ndim != 1 or not shape or grad.shape != indices.shape + shape[1:]:
        raise InvalidArgumentError(None, None, f"grad must hold one row of the variable's shape {list(shape)} "
                                   f"per index: grad {list(grad.shape)}, indices {list(indices.shape)}")
    bad = (indices < 0) | (indices >= shape[0])
    if bad.any():
        offset = int(xp.argmax(bad))
        raise InvalidArgumentError(None, None, f"Index {int(indices[offset])} at offset {offset} in indices is "
                                   f"out of range [0, {shape[0]})")
    unique, inverse = xp.unique(indices, return_inverse=True)
    if unique.shape[0] == indices.shape[0]:
        return indices, grad
    summed = xp.zeros((unique.shape[0],) + grad.shape[1:], grad.dtype)
    xp.add.at(summed, inverse.reshape(-1), grad)
    return unique, summed


def _sparse(node, rule, temps: int = 1):
    """update(handles, grad, indices, *hyperparameters): the rule on the rows that `indices` name."""
    xp, scratch = node.xp, _scratch(node.xp, temps)

    def update(handles, grad, indices, *hyperparameters):
        rows, grad = _summed_rows(xp, _check_slots(handles), indices, grad)
        gathered = [_stored(handle)[rows] for handle in handles]
        rule(xp, scratch(grad), *gathered, grad, *hyperparameters)

        def scatter(*arrays):
            for array, new_rows in zip(arrays, gathered):
                array[rows] = new_rows
        _writable(handles, xp, scatter)
    return update


# -- the kernels -------------------------------------------------------------------------------------


# Elements per block of an in-place descent: a block's gradient stays in a core's L2 cache between its passes.
# Blocks of 1 MiB of float32 took 0.6-0.8x the time of 256 KiB ones on the paper's dense layers: each pass
# over a block is a NumPy call, and smaller blocks are more calls than the memory traffic they save.
_DESCENT_BLOCK = 1 << 18
# Variables under 4 MiB of float32 stay in the caches whole: two passes over them are faster.
_DESCENT_WHOLE = 1 << 20
# An input gradient dy @ w.T computed band by band of w (_input_gradient_band): per 1 MiB band of AlexNet's first dense
# layer, dy @ band.T took 190 us at batch 4 (BLAS packs the transposed band), band @ dy.T 120, and four
# matrix-vector products 89; at batch 8, 285, 170 and 186. Training steps at batch 4, alternating in one process:
# AlexNet 0.841x, Overfeat 0.898x, OxfordNet 0.887x, GoogLeNet 0.980x; at batch 8 the transposed product, AlexNet
# 0.967x. Where the product sums few terms (the MLP benchmark's last layer, 512x10 at batch 128: 59 us with the
# transposed copy, 25 without), dy @ band.T directly. So too from a batch of _DIRECT_ROWS: BLAS then writes the band's
# columns of out with their row stride, and the transposed copy, a pass against the grain, costs more than the
# packing saves. The MLP benchmark's middle layer (512x512 at batch 128, two BLAS threads): 0.87-0.97x the line's
# time; products alone of 512x512 at batch 32 1.15x, 64 0.97x, 128 0.91x, 256 0.83x, of 1024x1024 in bands of 256
# rows at batch 128 0.89x.
_GEMV_ROWS = 4
_DIRECT_ROWS = 64
# Weights of at least this many elements descend by GEMMs adding into them (kernels/blas.py): a 512x10 layer at
# batch 128 took 1.12x the time of a product and a subtraction, 256x256 0.88x.
_ACCUMULATED = 1 << 15


def _descend_in_blocks(xp, var, grad, alpha: float) -> None:
    """var -= alpha * grad, scaling grad in place, block by block, blocks split across the run's threads."""
    if xp is not np or var.size < _DESCENT_WHOLE or not (var.flags.c_contiguous and grad.flags.c_contiguous):
        grad *= alpha
        var -= grad
        return
    flat_var, flat_grad = var.reshape(-1), grad.reshape(-1)
    alpha = grad.dtype.type(alpha)

    def block_update(block: slice) -> None:
        flat_grad[block] *= alpha
        flat_var[block] -= flat_grad[block]

    _in_blocks(flat_var.size, flat_var.size, block_update)


def _in_steps(length: int, step: int, work: float, update) -> None:
    """update(slice) over consecutive slices of `step` of range(length), split across the run's threads."""
    def steps(part: slice) -> None:
        for first in range(part.start * step, min(part.stop * step, length), step):
            update(slice(first, min(first + step, length)))

    parallel_parts(steps, -(-length // step), work)


def _in_blocks(size: int, work: float, block_update) -> None:
    """block_update(elements) over blocks of _DESCENT_BLOCK elements of flat arrays of `size`, split across the
    run's threads."""
    _in_steps(size, _DESCENT_BLOCK, work, block_update)


def _check_product(shape: tuple, a, b) -> None:
    """That a @ b is a gradient of a variable of `shape`."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] or (a.shape[0], b.shape[1]) != shape:
        raise InvalidArgumentError(None, None, f"var and grad do not have the same shape{list(shape)} "
                                   f"{[a.shape[0], b.shape[1]] if a.ndim == b.ndim == 2 else '?'}")


def _in_bands(xp, shape: tuple, summed: int, band_update) -> None:
    """band_update(rows) over bands of a (rows, columns) variable's rows of about _DESCENT_BLOCK elements, split
    across the run's threads; one band, the whole variable, on a device, or where it stays in the caches and BLAS
    has the cores (a run without parallel kernels). Where the run's threads own the cores, BLAS has one of them:
    GoogLeNet's 1024x1000 layer at batch 4, whole, took 0.95 ms on one thread, in bands on two 0.61 ms."""
    rows, columns = shape
    whole_below = _DESCENT_WHOLE if run_width() == 1 else 2 * _DESCENT_BLOCK
    if xp is not np or rows * columns < whole_below:
        band_update(slice(0, rows))
    else:
        _in_steps(rows, max(1, _DESCENT_BLOCK // columns), rows * columns * summed, band_update)


def _check_input_gradient(shape: tuple, input_gradient) -> None:
    """That an input gradient (dy, out), out = dy @ var.T, fits a variable of `shape` (None: there is none)."""
    if input_gradient is None:
        return
    dy, out = input_gradient
    if dy.ndim != 2 or dy.shape[1] != shape[1] or out.shape != (dy.shape[0], shape[0]):
        raise InvalidArgumentError(None, None, f"Matrix size-incompatible: In[0]: {list(dy.shape)}, "
                                   f"In[1]: {list(shape)} (transposed)")


def _input_gradient_band(xp, weights, chosen: slice, input_gradient) -> None:
    """out[:, chosen] = dy @ weights.T for a band of a variable's rows (`chosen`), read before the band's update."""
    dy, out = input_gradient
    if dy.shape[0] <= _GEMV_ROWS:  # matrix-vector products, as kernels/products.py streams a small batch
        for row in range(dy.shape[0]):
            xp.dot(weights, dy[row], out=out[row, chosen])
    elif dy.shape[1] <= SKINNY or dy.shape[0] >= _DIRECT_ROWS:  # a product of few terms, or of a large batch
        product_into(xp, dy, weights.T, out[:, chosen])
    else:  # the band times dy.T, read along the band's rows; its transpose (batch x band rows) into out
        product = Scratch(xp)("descent_input_gradient", (chosen.stop - chosen.start, dy.shape[0]), weights.dtype)
        out[:, chosen] = xp.matmul(weights, dy.T, out=product).T


def descend_by_product(xp, var, alpha, a, b, input_gradient=None) -> None:
    """var -= alpha * (a @ b), a band of the product's rows at a time.

    A fully connected layer's weight gradient is as large as its weights: fused into its gradient-descent update
    (MatMul's `with_descent` variant, tfnb/runtime/fusion.py), it is never written out whole nor read back. Where
    NumPy's BLAS is reachable (kernels/blas.py), each band is one GEMM adding -alpha times its product into the
    weights; elsewhere, and for variables under _ACCUMULATED elements, a band's product is made in the cache and
    subtracted there. With `input_gradient` (dy, out), also out = dy @ var.T from the weights before the update,
    each band as it is read for it (MatMul's `with_weight_update`): on a small batch both are passes over the
    weights, and the input gradient's pass is then one over the caches.
    """
    shape = _stored(var).shape
    _check_product(shape, a, b)
    _check_input_gradient(shape, input_gradient)

    def descend(array) -> None:
        rate = array.dtype.type(float(alpha))
        add = product_accumulator(a, b, array) if shape[0] * shape[1] >= _ACCUMULATED else None
        if add is not None:
            def band_descent(chosen: slice) -> None:
                add(-rate, chosen)
        else:
            # alpha times the smaller factor (a layer's input or its dy, as small as the batch is): the product is
            # then the step itself, with no pass to scale it. Scaling dy rather than x.T where dy is smaller (the
            # MLP benchmark's first and last layers, 128x512 against 784x128 and 128x10 against 512x128): its step
            # 0.99x.
            scaled, right = (xp.multiply(a, rate), b) if a.size <= b.size else (a, xp.multiply(b, rate))
            scratch = Scratch(xp)

            def band_descent(chosen: slice) -> None:
                product = scratch("descent_product", (chosen.stop - chosen.start, shape[1]), array.dtype)
                product_into(xp, scaled[chosen], right, product)
                array[chosen] -= product

        def band_update(chosen: slice) -> None:
            if input_gradient is not None:
                _input_gradient_band(xp, array[chosen], chosen, input_gradient)
            band_descent(chosen)

        _in_bands(xp, shape, a.shape[1], band_update)

    _writable((var,), xp, descend)


def momentum_by_product(xp, var, accum, lr, momentum, a, b, input_gradient=None) -> None:
    """ResourceApplyMomentum(var, accum, lr, a @ b, momentum) without Nesterov's step (MatMul's `with_momentum`);
    with `input_gradient`, also its out = dy @ var.T from the weights before the update (`with_momentum_update`)."""
    _rule_by_product(xp, (var, accum), _momentum, a, b, input_gradient, float(lr), float(momentum), False)


def adam_by_product(xp, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, a, b,
                    input_gradient=None) -> None:
    """ResourceApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, a @ b) (MatMul's
    `with_adam`); with `input_gradient`, also its out = dy @ var.T from the weights before the update
    (`with_adam_update`)."""
    _rule_by_product(xp, (var, m, v), _adam, a, b, input_gradient, _adam_step_size(beta1_power, beta2_power, lr),
                     float(beta1), float(beta2), float(epsilon))


def _rule_by_product(xp, handles, rule, a, b, input_gradient, *hyperparameters) -> None:
    """A dense rule (one temporary) with grad = a @ b, a band of the gradient's rows at a time, each band made in
    a thread's cache and applied there: as descend_by_product, a fully connected layer's weight gradient is never
    written out whole nor read back, and an input gradient (dy, out) is computed from each band of the weights
    before the rule updates it."""
    shape = _check_slots(handles)
    _check_product(shape, a, b)
    _check_input_gradient(shape, input_gradient)
    scratch = Scratch(xp)

    def apply(*arrays) -> None:
        def band_update(chosen: slice) -> None:
            if input_gradient is not None:
                _input_gradient_band(xp, arrays[0][chosen], chosen, input_gradient)
            gradient = scratch("rule_gradient", (chosen.stop - chosen.start, shape[1]), arrays[0].dtype)
            product_into(xp, a[chosen], b, gradient)
            temporary = scratch("rule_temporary", gradient.shape, gradient.dtype)
            rule(xp, (temporary,), *[array[chosen] for array in arrays], gradient, *hyperparameters)

        _in_bands(xp, shape, a.shape[1], band_update)

    _writable(handles, xp, apply)


@kernel("ResourceApplyGradientDescent")
def apply_gradient_descent(node):
    update = _dense(node, _gradient_descent)

    def run(var, alpha, grad):
        update((var,), grad, float(alpha))

    def inplace(var, alpha, grad):
        # The plan donated the gradient (nothing reads it afterwards): scale it where it lies.
        _check_dense((var,), grad)
        _writable((var,), node.xp, lambda array: _descend_in_blocks(node.xp, array, grad, float(alpha)))

    inplace.donates = 2
    run.inplace = inplace
    return run


@kernel("ResourceApplyMomentum")
def apply_momentum(node):
    update, nesterov = _dense(node, _momentum), node.attrs["use_nesterov"]
    return lambda var, accum, lr, grad, momentum: update((var, accum), grad, float(lr), float(momentum), nesterov)


@kernel("ResourceApplyAdagrad")
def apply_adagrad(node):
    update = _dense(node, _adagrad)
    return lambda var, accum, lr, grad: update((var, accum), grad, float(lr))


@kernel("ResourceApplyAdadelta")
def apply_adadelta(node):
    update = _dense(node, _adadelta, temps=2)
    return lambda var, accum, accum_update, lr, rho, epsilon, grad: update(
        (var, accum, accum_update), grad, float(lr), float(rho), float(epsilon))


@kernel("ResourceApplyRMSProp")
def apply_rms_prop(node):
    update = _dense(node, _rms_prop)
    return lambda var, ms, mom, lr, rho, momentum, epsilon, grad: update(
        (var, ms, mom), grad, float(lr), float(rho), float(momentum), float(epsilon))


@kernel("ResourceApplyCenteredRMSProp")
def apply_centered_rms_prop(node):
    update = _dense(node, _centered_rms_prop)
    return lambda var, mg, ms, mom, lr, rho, momentum, epsilon, grad: update(
        (var, mg, ms, mom), grad, float(lr), float(rho), float(momentum), float(epsilon))


@kernel("ResourceApplyAdam")
def apply_adam(node):
    update = _dense(node, _adam)
    return lambda var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad: update(
        (var, m, v), grad, _adam_step_size(beta1_power, beta2_power, lr), float(beta1), float(beta2), float(epsilon))


@kernel("ResourceSparseApplyGradientDescent")
def sparse_apply_gradient_descent(node):
    update = _sparse(node, _gradient_descent)
    return lambda var, alpha, grad, indices: update((var,), grad, indices, float(alpha))


@kernel("ResourceSparseApplyMomentum")
def sparse_apply_momentum(node):
    update, nesterov = _sparse(node, _momentum), node.attrs["use_nesterov"]
    return lambda var, accum, lr, grad, indices, momentum: update(
        (var, accum), grad, indices, float(lr), float(momentum), nesterov)


@kernel("ResourceSparseApplyAdagrad")
def sparse_apply_adagrad(node):
    update = _sparse(node, _adagrad)
    return lambda var, accum, lr, grad, indices: update((var, accum), grad, indices, float(lr))


@kernel("ResourceSparseApplyAdadelta")
def sparse_apply_adadelta(node):
    update = _sparse(node, _adadelta, temps=2)
    return lambda var, accum, accum_update, lr, rho, epsilon, grad, indices: update(
        (var, accum, accum_update), grad, indices, float(lr), float(rho), float(epsilon))


@kernel("ResourceSparseApplyRMSProp")
def sparse_apply_rms_prop(node):
    update = _sparse(node, _rms_prop)
    return lambda var, ms, mom, lr, rho, momentum, epsilon, grad, indices: update(
        (var, ms, mom), grad, indices, float(lr), float(rho), float(momentum), float(epsilon))


@kernel("ResourceSparseApplyCenteredRMSProp")
def sparse_apply_centered_rms_prop(node):
    update = _sparse(node, _centered_rms_prop)
    return lambda var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices: update(
        (var, mg, ms, mom), grad, indices, float(lr), float(rho), float(momentum), float(epsilon))


@kernel("ResourceSparseApplyAdam")
def sparse_apply_adam(node):
    xp, scratch = node.xp, _scratch(node.xp, 1)

    def update(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, indices):
        handles = (var, m, v)
        rows, grad = _summed_rows(xp, _check_slots(handles), indices, grad)
        temps = scratch(_stored(var))
        alpha = _adam_step_size(beta1_power, beta2_power, lr)
        _writable(handles, xp, lambda *arrays: _adam_sparse(xp, temps, *arrays, rows, grad, alpha, float(beta1),
                                                            float(beta2), float(epsilon)))
    return update
