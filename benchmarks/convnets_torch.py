"""The paper's four models (benchmarks/convnets.py) in PyTorch eager, read from the same layer tables.

Tensors are NCHW, PyTorch's native layout; TF's "same" padding, which puts the odd pixel after the
image, is reproduced exactly, and feature maps are flattened in NHWC order, so that the same weights
(laid out as TF's) compute the same function in every framework. Import it only where torch is installed.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional

from benchmarks.convnets import Conv, Dense, GlobalAvgPool, Inception, MaxPool, Model


def torch_parameters(params: list[np.ndarray], device: str = "cpu") -> list:
    """TF-layout weights ([kh, kw, in, out] filters, [in, out] matrices) as PyTorch leaf tensors on `device`."""
    def layout(p: np.ndarray) -> np.ndarray:
        return p.transpose(3, 2, 0, 1) if p.ndim == 4 else p.T if p.ndim == 2 else p

    return [torch.tensor(np.ascontiguousarray(layout(p)), device=device, requires_grad=True) for p in params]


def torch_logits(model: Model, images, params: list):
    """The model's logits for NCHW `images`, with `params` consumed in the order TF creates them."""
    weights = iter(params)
    net = images
    for layer in model.layers:
        net = _LAYERS[type(layer)](layer, net, weights)
    return _linear(net, weights)


def _same_padding(size: int, window: int, stride: int) -> tuple[int, int]:
    """TF's "same" padding (before, after) along one axis: the odd pixel goes after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def _padded(net, window: int, stride: int, padding: str, value: float):
    if padding == "valid":
        return net
    (top, bottom), (left, right) = (_same_padding(size, window, stride) for size in net.shape[2:])
    return functional.pad(net, (left, right, top, bottom), value=value)


def _conv(layer: Conv, net, weights):
    w, b = next(weights), next(weights)
    padding = (layer.size - 1) // 2 if layer.padding == "same" and layer.stride == 1 else 0
    if padding == 0:
        net = _padded(net, layer.size, layer.stride, layer.padding, 0.0)
    return functional.relu(functional.conv2d(net, w, b, layer.stride, padding))


def _max_pool(layer: MaxPool, net, weights):
    return functional.max_pool2d(_padded(net, layer.size, layer.stride, layer.padding, float("-inf")),
                                 layer.size, layer.stride)


def _global_avg_pool(layer: GlobalAvgPool, net, weights):
    return net.mean((2, 3), keepdim=True)


def _inception(layer: Inception, net, weights):
    # In TF's creation order: each branch's layers, branch after branch.
    ones = _conv(Conv(layer.ones, 1), net, weights)
    threes = _conv(Conv(layer.threes, 3), _conv(Conv(layer.reduce3, 1), net, weights), weights)
    fives = _conv(Conv(layer.fives, 5), _conv(Conv(layer.reduce5, 1), net, weights), weights)
    pooled = _conv(Conv(layer.pool_ones, 1), _max_pool(MaxPool(3, 1, "same"), net, weights), weights)
    return torch.cat([ones, threes, fives, pooled], 1)


def _linear(net, weights):
    if net.ndim == 4:
        net = net.permute(0, 2, 3, 1).reshape(net.shape[0], -1)
    return functional.linear(net, next(weights), next(weights))


def _dense(layer: Dense, net, weights):
    return functional.relu(_linear(net, weights))


_LAYERS = {Conv: _conv, MaxPool: _max_pool, GlobalAvgPool: _global_avg_pool, Inception: _inception, Dense: _dense}
