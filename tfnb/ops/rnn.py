"""Recurrent networks from a cell (tfnb/layers/rnn_cell_impl.py): unrolled in the graph, or as a loop.

- static_rnn calls the cell once per input in a Python list: one copy of the cell's ops per time step.
- dynamic_rnn builds one tf.while_loop (Enter, Merge, Switch, NextIteration, Exit) whose body calls the
  cell once: inputs are read from a TensorArray by time step and outputs written to another, so the
  graph has the same size for any sequence length, and gradients flow back through the loop.

With `sequence_length`, each batch row stops at its own length: past it, its output is zeros and its
state is copied through unchanged (the loop itself stops at the longest sequence), as in TF1.
"""

from __future__ import annotations

from tfnb.framework import dtypes, nest
from tfnb.framework.graph import name_scope
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops import array_ops, math_ops
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.control_flow.while_loop import while_loop
from tfnb.ops.tensor_array_ops import TensorArray
from tfnb.ops.variable_scope import variable_scope

__all__ = ["static_rnn", "static_bidirectional_rnn", "dynamic_rnn", "bidirectional_dynamic_rnn"]


# -- what the loops share ---------------------------------------------------------------------------


def _batch_size(flat_inputs: list, batch_axis: int):
    """The batch size: static if any input knows it, else a Shape op on the first input."""
    for tensor in flat_inputs:
        if tensor.shape.ndims is None:
            continue
        if tensor.shape.ndims < 2:
            raise ValueError(f"Expected input tensor {tensor.name} to have rank at least 2")
        if tensor.shape[batch_axis].value is not None:
            return tensor.shape[batch_axis].value
    return array_ops.shape(flat_inputs[0])[batch_axis]


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def _state_dtype(dtype, state):
    """The dtype of the loop's outputs: `dtype` if given, else the state's (all its parts must agree)."""
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    kinds = {t.dtype for t in nest.flatten(state)}
    if len(kinds) != 1:
        raise ValueError(f"State has tensors of different dtypes ({sorted(d.name for d in kinds)}); give dtype")
    return kinds.pop()


def _sizes_as_shapes(size) -> list[TensorShape]:
    return [TensorShape([s]) if isinstance(s, int) else TensorShape(s) for s in nest.flatten(size)]


def _zero_output(cell, batch_size, dtype):
    """Zeros shaped like one step's output: what a row gets once past its sequence length."""
    def zeros(shape: TensorShape) -> Tensor:
        if isinstance(batch_size, Tensor):
            result = array_ops.zeros(array_ops.concat([array_ops.reshape(batch_size, [1]), shape.as_list()], 0),
                                     dtype=dtype)
            result.set_shape(TensorShape([None]).concatenate(shape))
            return result
        return array_ops.zeros([batch_size] + shape.as_list(), dtype=dtype)
    return nest.pack_sequence_as(cell.output_size, [zeros(s) for s in _sizes_as_shapes(cell.output_size)])


def _sequence_lengths(sequence_length) -> Tensor | None:
    if sequence_length is None:
        return None
    lengths = math_ops.to_int32(sequence_length)
    if lengths.shape.ndims not in (None, 1):
        raise ValueError(f"sequence_length must be a vector of length batch_size, but saw shape: {lengths.shape}")
    return array_ops.identity(lengths, name="sequence_length")


def _masked_step(time, lengths: Tensor, zero_output, state, new_output, new_state):
    """(output, state) of one step with rows whose sequence has ended masked: zero output, state unchanged."""
    finished = time >= lengths

    def choose(finished_value, new_value):
        chosen = math_ops.where(finished, finished_value, new_value)
        chosen.set_shape(new_value.shape)
        return chosen

    output = nest.map_structure(choose, zero_output, new_output)
    state = nest.map_structure(choose, state, new_state)
    return output, state


# -- static_rnn ---------------------------------------------------------------------------------------


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """(outputs, final state) of the cell over a list of inputs [batch, depth], one cell call per step,
    all in variable scope `scope` (default 'rnn')."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with variable_scope(scope or "rnn") as varscope:
        flat_first = [convert_to_tensor(t) for t in nest.flatten(inputs[0])]
        batch_size = _batch_size(flat_first, 0)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        lengths = _sequence_lengths(sequence_length)
        zero_output = _zero_output(cell, batch_size, _state_dtype(dtype, state)) if lengths is not None else None
        outputs = []
        for time, step_input in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(step_input, state)
            if lengths is not None:
                output, new_state = _masked_step(time, lengths, zero_output, state, output, new_state)
            state = new_state
            outputs.append(output)
        return outputs, state


def _reversed_sequence(inputs: list, lengths: Tensor | None) -> list:
    """The steps of a list in reverse order, each row reversed within its own length if lengths are given."""
    if lengths is None:
        return list(reversed(inputs))
    flat_steps = [nest.flatten(step) for step in inputs]
    reversed_flat = []
    for parts in zip(*flat_steps):
        stacked = array_ops.stack(list(parts))
        steps = array_ops.unstack(array_ops.reverse_sequence(stacked, math_ops.to_int64(lengths), seq_axis=0,
                                                             batch_axis=1))
        for step, part in zip(steps, parts):
            step.set_shape(part.shape)
        reversed_flat.append(steps)
    return [nest.pack_sequence_as(inputs[0], list(step)) for step in zip(*reversed_flat)]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None, dtype=None,
                             sequence_length=None, scope=None):
    """(outputs, forward final state, backward final state): a forward static_rnn (scope 'fw') and one over
    the reversed inputs (scope 'bw'), their outputs concatenated per step on the last axis."""
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length, fw_scope)
        with variable_scope("bw") as bw_scope:
            lengths = None if sequence_length is None else math_ops.to_int32(sequence_length)
            reversed_inputs = _reversed_sequence(inputs, lengths)
            reversed_bw, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length,
                                               bw_scope)
    output_bw = _reversed_sequence(reversed_bw, lengths)
    outputs = [nest.pack_sequence_as(fw, [array_ops.concat([f, b], 1) for f, b in zip(nest.flatten(fw),
                                                                                      nest.flatten(bw))])
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw


# -- dynamic_rnn ----------------------------------------------------------------------------------------


def _swap_batch_and_time(tensor: Tensor) -> Tensor:
    """[batch, time, ...] <-> [time, batch, ...]."""
    rank = tensor.shape.ndims
    if rank is None:
        raise ValueError(f"Expected input tensor {tensor.name} to have a known rank")
    if rank < 2:
        raise ValueError(f"Expected input tensor {tensor.name} to have rank at least 2")
    swapped = array_ops.transpose(tensor, [1, 0] + list(range(2, rank)))
    swapped.set_shape(TensorShape([tensor.shape[1].value, tensor.shape[0].value]).concatenate(tensor.shape[2:]))
    return swapped


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory: bool = False, time_major: bool = False, scope=None):
    """(outputs, final state) of the cell over inputs [batch, time, depth] ([time, batch, depth] if time_major),
    computed by one tf.while_loop over time in variable scope `scope` (default 'rnn').

    tfnb differs: swap_memory is accepted and ignored.
    """
    with variable_scope(scope or "rnn"):
        flat_inputs = [convert_to_tensor(t, name="inputs") for t in nest.flatten(inputs)]
        if not time_major:
            flat_inputs = [_swap_batch_and_time(t) for t in flat_inputs]
        lengths = _sequence_lengths(sequence_length)
        batch_size = _batch_size(flat_inputs, 1)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        outputs, final_state = _dynamic_rnn_loop(cell, flat_inputs, nest.pack_sequence_as(inputs, flat_inputs),
                                                 state, parallel_iterations or 32, lengths, dtype, batch_size)
        if not time_major:
            outputs = nest.map_structure(_swap_batch_and_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(cell, flat_inputs: list, inputs, state, parallel_iterations: int, lengths, dtype, batch_size):
    """The while loop over time: (outputs [time, batch, ...], final state)."""
    time_steps = flat_inputs[0].shape[0].value
    steps = time_steps if time_steps is not None else array_ops.shape(flat_inputs[0])[0]
    static_batch = batch_size if isinstance(batch_size, int) else None
    output_dtype = _state_dtype(dtype, state)
    output_shapes = _sizes_as_shapes(cell.output_size)
    with name_scope("dynamic_rnn") as scope:
        input_arrays = [TensorArray(t.dtype, size=steps, element_shape=t.shape[1:],
                                    tensor_array_name=f"{scope}input_{i}").unstack(t)
                        for i, t in enumerate(flat_inputs)]
        output_arrays = [TensorArray(output_dtype, size=steps,
                                     element_shape=TensorShape([static_batch]).concatenate(shape),
                                     tensor_array_name=f"{scope}output_{i}")
                         for i, shape in enumerate(output_shapes)]
        time = constant(0, dtype=dtypes.int32, name="time")
    if lengths is not None:
        zero_output = _zero_output(cell, batch_size, output_dtype)
        last_step = math_ops.reduce_max(lengths)
        # The loop stops at the longest sequence (at least one step, as TF1): later outputs stay zeros.
        bound = math_ops.minimum(steps, math_ops.maximum(1, last_step))
    else:
        bound = steps

    def time_step(time, outputs, state):
        step_inputs = [array.read(time) for array in input_arrays]
        for read, tensor in zip(step_inputs, flat_inputs):
            read.set_shape(tensor.shape[1:])
        output, new_state = cell(nest.pack_sequence_as(inputs, step_inputs), state)
        if lengths is not None:
            output, new_state = _masked_step(time, lengths, zero_output, state, output, new_state)
        for new, old in zip(nest.flatten(new_state), nest.flatten(state)):
            new.set_shape(old.shape)
        written = [array.write(time, out) for array, out in zip(outputs, nest.flatten(output))]
        return time + 1, written, new_state

    _, final_arrays, final_state = while_loop(lambda time, *_: time < bound, time_step,
                                              (time, output_arrays, state),
                                              parallel_iterations=parallel_iterations)
    outputs = []
    for array, shape in zip(final_arrays, output_shapes):
        stacked = array.stack()
        stacked.set_shape(TensorShape([time_steps, static_batch]).concatenate(shape))
        outputs.append(stacked)
    return nest.pack_sequence_as(cell.output_size, outputs), final_state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory: bool = False,
                              time_major: bool = False, scope=None):
    """((forward outputs, backward outputs), (forward final state, backward final state)): a dynamic_rnn in
    scope 'fw' and one over the inputs reversed in time (within each row's length) in scope 'bw'."""
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(tensor: Tensor) -> Tensor:
        if sequence_length is None:
            return array_ops.reverse(tensor, axis=[time_axis])
        return array_ops.reverse_sequence(tensor, math_ops.to_int64(sequence_length), seq_axis=time_axis,
                                          batch_axis=batch_axis)

    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length, initial_state_fw, dtype,
                                              parallel_iterations, swap_memory, time_major, fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_inputs = nest.map_structure(lambda t: reverse(convert_to_tensor(t)), inputs)
            reversed_bw, state_bw = dynamic_rnn(cell_bw, reversed_inputs, sequence_length, initial_state_bw, dtype,
                                                parallel_iterations, swap_memory, time_major, bw_scope)
    output_bw = nest.map_structure(reverse, reversed_bw)
    return (output_fw, output_bw), (state_fw, state_bw)
