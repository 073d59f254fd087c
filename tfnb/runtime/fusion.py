"""Kernel fusion: plan lines that one kernel computes together, so intermediate data stays in the caches.

As TF's Grappler remapper fuses Conv2D + BiasAdd + Relu, a plan's lines are fused where a kernel
offers the combined variant (an attribute of its callable, like `inplace` in buffer_reuse.py):

- Conv2D -> BiasAdd [-> Relu]: `with_bias` / `with_bias_relu` add the bias (and clip) on each chunk
  of the convolution's outputs as soon as it is written;
- Conv2DBackpropInput and Conv2DBackpropFilter of one dy: `with_filter_gradient` computes both,
  transforming dy once;
- MaxPoolGrad -> ReluGrad of the pool's own input (a ReLU before the pool): `with_relu_grad` masks
  each part of the pool's gradient as soon as it is written.

Only values that no other line reads and nothing fetches disappear. The graph is unchanged, and
traced runs are not fused: a trace records every op. When a fused line fails, its ops run again
one by one, so that the error names the op that fails.
"""

from __future__ import annotations

import collections
from dataclasses import replace

from tfnb.runtime.codegen import Step

_SAME_CONVOLUTION_ATTRS = ("strides", "padding", "dilations", "data_format", "explicit_paddings")


def fuse(steps: list[Step], fetched: set[str]) -> list[Step]:
    """The plan's lines with fusable runs replaced by one line each (see the module docstring)."""
    steps = _fuse_bias_and_relu(steps, fetched)
    steps = _fuse_pool_and_relu_gradients(steps, fetched)
    return _fuse_gradient_pairs(steps, fetched)


def _uses(steps: list[Step]) -> collections.Counter:
    return collections.Counter(arg for step in steps for arg in step.args)


def _readers(steps: list[Step]) -> dict[str, int]:
    """For each value, the line of (the last) step reading it: for a private value, its only reader."""
    return {arg: index for index, step in enumerate(steps) for arg in step.args}


def _rebuilt(steps: list[Step], fused: dict[int, Step], drop: set[int]) -> list[Step]:
    """steps with the fused lines in place and the lines they absorbed left out."""
    return [fused.get(i, step) for i, step in enumerate(steps) if i in fused or i not in drop]


def _private(value: str, uses: collections.Counter, fetched: set[str]) -> bool:
    """Whether exactly one line reads `value` and nothing fetches it."""
    return uses[value] == 1 and value not in fetched


def _kernel_of(step: Step, op_type: str, variant: str):
    """The step's kernel variant `variant` if the step runs an op of `op_type` unfused, else None."""
    if step.op is None or step.op.type != op_type or step.fused or step.kernel is None:
        return None
    return getattr(step.kernel, variant, None)


def _fuse_bias_and_relu(steps: list[Step], fetched: set[str]) -> list[Step]:
    uses = _uses(steps)
    readers = _readers(steps)
    drop: set[int] = set()
    fused: dict[int, Step] = {}
    for index, step in enumerate(steps):
        if _kernel_of(step, "Conv2D", "with_bias") is None or not _private(step.outputs[0], uses, fetched):
            continue
        bias_index = readers[step.outputs[0]]
        bias = steps[bias_index]
        if (bias.op is None or bias.op.type != "BiasAdd" or bias.fused or bias.device != step.device
                or bias.args[0] != step.outputs[0] or bias.op.attrs.get("data_format", "NHWC") != "NHWC"):
            continue
        last_index, variant = bias_index, "with_bias"
        relu_index = readers.get(bias.outputs[0])
        if relu_index is not None and _private(bias.outputs[0], uses, fetched):
            relu = steps[relu_index]
            if relu.op is not None and relu.op.type == "Relu" and not relu.fused and relu.device == step.device:
                last_index, variant = relu_index, "with_bias_relu"
        chain = [step, bias] + ([steps[relu_index]] if last_index != bias_index else [])
        drop.update({index, bias_index})
        fused[last_index] = replace(step, kernel=_replaying(getattr(step.kernel, variant), _chain_replay(chain)),
                                    args=step.args + bias.args[1:], outputs=chain[-1].outputs,
                                    fused=tuple(s.node for s in chain))
    return _rebuilt(steps, fused, drop)


def _fuse_pool_and_relu_gradients(steps: list[Step], fetched: set[str]) -> list[Step]:
    uses = _uses(steps)
    readers = _readers(steps)
    drop: set[int] = set()
    fused: dict[int, Step] = {}
    for index, step in enumerate(steps):
        variant = _kernel_of(step, "MaxPoolGrad", "with_relu_grad")
        if variant is None or not _private(step.outputs[0], uses, fetched):
            continue
        relu_index = readers[step.outputs[0]]
        relu = steps[relu_index]
        if (relu.op is None or relu.op.type != "ReluGrad" or relu.fused or relu.device != step.device
                or relu.args != [step.outputs[0], step.args[0]]):
            continue
        drop.add(index)
        fused[relu_index] = replace(step, kernel=_replaying(variant, _chain_replay([step, relu])),
                                    outputs=relu.outputs, fused=(step.node, relu.node))
    return _rebuilt(steps, fused, drop)


def _fuse_gradient_pairs(steps: list[Step], fetched: set[str]) -> list[Step]:
    first_reader: dict[str, int] = {}
    for index, step in enumerate(steps):
        for arg in step.args:
            first_reader.setdefault(arg, index)
    filter_steps = {(step.args[2], step.device): index for index, step in enumerate(steps)
                    if step.op is not None and step.op.type == "Conv2DBackpropFilter" and not step.fused}
    drop: set[int] = set()
    fused: dict[int, Step] = {}
    for index, step in enumerate(steps):
        variant = _kernel_of(step, "Conv2DBackpropInput", "with_filter_gradient")
        partner_index = filter_steps.get((step.args[2], step.device)) if variant is not None else None
        if partner_index is None or partner_index in drop or partner_index in fused:
            continue
        partner = steps[partner_index]
        if any(step.op.attrs.get(key) != partner.op.attrs.get(key) for key in _SAME_CONVOLUTION_ATTRS):
            continue
        # Both run at the later line: no line between them may read what the earlier one computes.
        early, late = sorted((index, partner_index))
        if any(first_reader.get(value, len(steps)) < late for value in steps[early].outputs):
            continue
        drop.add(early)
        fused[late] = replace(step, kernel=_replaying(variant, _pair_replay(step, partner)),
                              args=step.args + [partner.args[0], partner.args[1]],
                              outputs=step.outputs + partner.outputs, fused=(step.node, partner.node))
    return _rebuilt(steps, fused, drop)


def _replaying(fused_kernel, replay):
    """fused_kernel; when it fails, `replay` runs the fused ops one by one to raise the error of the op that fails."""

    def run(*args):
        try:
            return fused_kernel(*args)
        except Exception:
            replay(*args)
            raise

    return run


def _tagged(step: Step, *args):
    """step's kernel on args; an error it raises names step's op."""
    try:
        return step.kernel(*args)
    except Exception as error:
        error.tfnb_op = step.op
        raise


def _chain_replay(chain: list[Step]):
    """The chain's ops one after the other, from the fused line's arguments: the first op's, then the
    others' beyond the value passed along (Conv2D, BiasAdd [, Relu]), or the first op's input x again
    (MaxPoolGrad, ReluGrad of x)."""
    first_args = len(chain[0].args)

    def replay(*args):
        value = _tagged(chain[0], *args[:first_args])
        if chain[1].op.type == "ReluGrad":
            _tagged(chain[1], value, args[0])
            return
        value = _tagged(chain[1], value, *args[first_args:])
        if len(chain) == 3:
            _tagged(chain[2], value)

    return replay


def _pair_replay(input_gradient: Step, filter_gradient: Step):
    """Conv2DBackpropInput, then Conv2DBackpropFilter, from the fused line's arguments."""

    def replay(input_sizes, w, dy, x, filter_sizes):
        _tagged(input_gradient, input_sizes, w, dy)
        _tagged(filter_gradient, x, filter_sizes, dy)

    return replay
