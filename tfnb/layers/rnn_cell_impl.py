"""RNN cells (tf.nn.rnn_cell, tf.contrib.rnn): one time step of a recurrent network, as a TF1 layer.

A cell maps (inputs, state) to (output, new state). Its variables are made on its first call, in the
variable scope of the layer ('rnn/basic_lstm_cell/kernel' inside tf.nn.dynamic_rnn), so checkpoints and
`get_variable` reuse match TF1's names; later calls (the next time step) reuse them. tf.nn.static_rnn and
tf.nn.dynamic_rnn (tfnb/ops/rnn.py) call a cell once per time step.
"""

from __future__ import annotations

import collections
import numbers

from tfnb.framework import nest
from tfnb.framework.graph import device as device_scope
from tfnb.framework.graph import name_scope
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.layers.base import Layer
from tfnb.ops import array_ops, math_ops, nn_impl, nn_ops
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.init_ops import Constant, Zeros
from tfnb.ops.variable_scope import variable_scope

__all__ = ["RNNCell", "LayerRNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
           "DropoutWrapper", "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple"]


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: the cell state `c` and the hidden state (the output) `h`."""

    __slots__ = ()

    @property
    def dtype(self):
        if self.c.dtype is not self.h.dtype:
            raise TypeError(f"Inconsistent internal state: {self.c.dtype.name} vs {self.h.dtype.name}")
        return self.c.dtype


def _zeros(size, batch_size, dtype) -> Tensor:
    """Zeros of shape [batch_size] + size, with the static shape known as far as batch_size is."""
    size = [size] if isinstance(size, numbers.Integral) else TensorShape(size).as_list()
    if isinstance(batch_size, Tensor):
        zeros = array_ops.zeros(array_ops.concat([array_ops.reshape(batch_size, [1]), size], 0), dtype=dtype)
        zeros.set_shape(TensorShape([None] + size))
        return zeros
    return array_ops.zeros([batch_size] + size, dtype=dtype)


class RNNCell(Layer):
    """The base of RNN cells: `cell(inputs, state)` -> (output, new_state); subclasses define `call`,
    `state_size` and `output_size` (an int, a TensorShape, or a nest of them for tuple states)."""

    def __init__(self, trainable: bool = True, name: str | None = None, dtype=None, **kwargs) -> None:
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    def __call__(self, inputs, state, scope=None):
        """One step: (output, new state) for `inputs` [batch, depth] and `state`."""
        return super().__call__(inputs, state, scope=scope)

    def zero_state(self, batch_size, dtype):
        """The all-zeros state for `batch_size` rows (a nest shaped like state_size)."""
        with name_scope(None, f"{type(self).__name__}ZeroState", [batch_size]):
            return nest.map_structure(lambda size: _zeros(size, batch_size, dtype), self.state_size)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """zero_state for the batch size and dtype of `inputs` (or those given)."""
        if inputs is not None:
            inputs = convert_to_tensor(inputs)
            batch_size = inputs.shape[0].value if inputs.shape[0].value is not None else array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        return self.zero_state(batch_size, dtype)


LayerRNNCell = RNNCell


def _input_depth(inputs_shape) -> int:
    shape = TensorShape(inputs_shape)
    if shape.ndims is None or shape[-1].value is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {shape}")
    return shape[-1].value


def _linear_inputs(inputs: Tensor, state: Tensor) -> Tensor:
    return array_ops.concat([inputs, state], 1)


class BasicRNNCell(RNNCell):
    """output = new_state = activation(W [inputs, state] + b), with variables 'kernel' and 'bias'."""

    def __init__(self, num_units: int, activation=None, reuse=None, name: str | None = None, dtype=None,
                 **kwargs) -> None:
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, inputs_shape) -> None:
        depth = _input_depth(inputs_shape)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", [self._num_units], initializer=Zeros())
        self.built = True

    def call(self, inputs, state):
        output = self._activation(nn_ops.bias_add(math_ops.matmul(_linear_inputs(inputs, state), self._kernel),
                                                  self._bias))
        return output, output


class BasicLSTMCell(RNNCell):
    """The LSTM of Zaremba et al. (2014): one kernel for the four gates i, j, f, o (in that order), forget
    gate biased by `forget_bias`; state LSTMStateTuple(c, h) (or c and h concatenated if not state_is_tuple)."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True, activation=None,
                 reuse=None, name: str | None = None, dtype=None, **kwargs) -> None:
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, inputs_shape) -> None:
        depth = _input_depth(inputs_shape)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, 4 * self._num_units])
        self._bias = self.add_variable("bias", [4 * self._num_units], initializer=Zeros())
        self.built = True

    def call(self, inputs, state):
        c, h = state if self._state_is_tuple else array_ops.split(state, 2, axis=1)
        gates = nn_ops.bias_add(math_ops.matmul(_linear_inputs(inputs, h), self._kernel), self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        forget_bias = constant(self._forget_bias, dtype=f.dtype)
        new_c = c * math_ops.sigmoid(f + forget_bias) + math_ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(RNNCell):
    """The LSTM with optional peephole connections (w_f_diag, w_i_diag, w_o_diag), cell clipping and an output
    projection ('projection/kernel' to num_proj units), as in Sak et al. (2014).

    tfnb differs: num_unit_shards and num_proj_shards (deprecated in TF1) are not supported.
    """

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip=None, initializer=None,
                 num_proj: int | None = None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias: float = 1.0, state_is_tuple: bool = True, activation=None, reuse=None,
                 name: str | None = None, dtype=None, **kwargs) -> None:
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("tfnb's LSTMCell does not shard its variables")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        h = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, h) if self._state_is_tuple else self._num_units + h

    @property
    def output_size(self) -> int:
        return self._num_proj or self._num_units

    def build(self, inputs_shape) -> None:
        depth = _input_depth(inputs_shape)
        h_depth = self._num_proj or self._num_units
        units = self._num_units
        self._kernel = self.add_variable("kernel", [depth + h_depth, 4 * units], initializer=self._initializer)
        self._bias = self.add_variable("bias", [4 * units], initializer=Zeros())
        if self._use_peepholes:
            self._w_f_diag, self._w_i_diag, self._w_o_diag = (
                self.add_variable(name, [units], initializer=self._initializer)
                for name in ("w_f_diag", "w_i_diag", "w_o_diag"))
        if self._num_proj is not None:
            with variable_scope("projection"):
                self._proj_kernel = self.add_variable("kernel", [units, self._num_proj],
                                                      initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        units = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, units])
            m_prev = array_ops.slice(state, [0, units], [-1, self._num_proj or units])
        gates = nn_ops.bias_add(math_ops.matmul(_linear_inputs(inputs, m_prev), self._kernel), self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        if self._use_peepholes:
            c = (math_ops.sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev
                 + math_ops.sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = math_ops.sigmoid(f + self._forget_bias) * c_prev + math_ops.sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        o_input = o + self._w_o_diag * c if self._use_peepholes else o
        m = math_ops.sigmoid(o_input) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class GRUCell(RNNCell):
    """The gated recurrent unit of Cho et al. (2014): reset and update gates ('gates/kernel', 'gates/bias',
    biased to 1.0 by default), then the candidate ('candidate/kernel', 'candidate/bias')."""

    def __init__(self, num_units: int, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name: str | None = None, dtype=None, **kwargs) -> None:
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, inputs_shape) -> None:
        depth = _input_depth(inputs_shape)
        units = self._num_units
        with variable_scope("gates"):
            self._gate_kernel = self.add_variable("kernel", [depth + units, 2 * units],
                                                  initializer=self._kernel_initializer)
            self._gate_bias = self.add_variable("bias", [2 * units],
                                                initializer=self._bias_initializer or Constant(1.0))
        with variable_scope("candidate"):
            self._candidate_kernel = self.add_variable("kernel", [depth + units, units],
                                                       initializer=self._kernel_initializer)
            self._candidate_bias = self.add_variable("bias", [units], initializer=self._bias_initializer or Zeros())
        self.built = True

    def call(self, inputs, state):
        gates = nn_ops.bias_add(math_ops.matmul(_linear_inputs(inputs, state), self._gate_kernel), self._gate_bias)
        r, u = array_ops.split(math_ops.sigmoid(gates), 2, axis=1)
        candidate = nn_ops.bias_add(math_ops.matmul(_linear_inputs(inputs, r * state), self._candidate_kernel),
                                    self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: layer i runs in variable scope 'cell_i' and feeds its output to layer i + 1."""

    def __init__(self, cells, state_is_tuple: bool = True) -> None:
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_sequence(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        sizes = tuple(cell.state_size for cell in self._cells)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(None, f"{type(self).__name__}ZeroState", [batch_size]):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    @property
    def trainable_weights(self) -> list:
        return [w for cell in self._cells for w in cell.trainable_weights] if self.trainable else []

    trainable_variables = trainable_weights

    def call(self, inputs, state):
        current = inputs
        new_states = []
        offset = 0
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    cell_state = state[i]
                else:
                    cell_state = array_ops.slice(state, [0, offset], [-1, cell.state_size])
                    offset += cell.state_size
                current, new_state = cell(current, cell_state)
                new_states.append(new_state)
        return current, tuple(new_states) if self._state_is_tuple else array_ops.concat(new_states, 1)


class _Wrapper(RNNCell):
    """A cell around another: its call goes to the wrapped cell in the caller's scope (no scope of its own)."""

    def __init__(self, cell) -> None:
        super().__init__()
        self.cell = cell

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(None, f"{type(self).__name__}ZeroState", [batch_size]):
            return self.cell.zero_state(batch_size, dtype)

    @property
    def trainable_weights(self) -> list:
        return self.cell.trainable_weights

    trainable_variables = trainable_weights

    def __call__(self, inputs, state, scope=None):
        return self._wrapped_call(inputs, state, scope)

    def _wrapped_call(self, inputs, state, scope):
        raise NotImplementedError("Abstract method")


def _keeps_everything(keep_prob) -> bool:
    return isinstance(keep_prob, numbers.Real) and keep_prob == 1.0


def _drops_all_but_cell_state(substate) -> bool:
    """TF1's default filter for state dropout: every part of the state but an LSTM's cell state c."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


class DropoutWrapper(_Wrapper):
    """Dropout on a cell's inputs, outputs and state, each kept with its probability (1.0: untouched).

    tfnb differs: variational_recurrent=True (one mask per sequence) is not implemented.
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent: bool = False, input_size=None, dtype=None, seed: int | None = None,
                 dropout_state_filter_visitor=None) -> None:
        super().__init__(cell)
        if variational_recurrent:
            raise NotImplementedError("tfnb's DropoutWrapper does not implement variational_recurrent")
        for value in (input_keep_prob, output_keep_prob, state_keep_prob):
            if isinstance(value, numbers.Real) and not 0 < value <= 1:
                raise ValueError(f"Parameter keep_prob must be between 0 and 1: {value}")
        self._input_keep_prob, self._output_keep_prob = input_keep_prob, output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor or _drops_all_but_cell_state

    def _dropout(self, values, keep_prob, salt: str):
        seed = None if self._seed is None else hash((self._seed, salt)) % (2 ** 31)
        return nn_impl.dropout(values, keep_prob=keep_prob, seed=seed)

    def _dropped_state(self, state):
        """The state with dropout where the filter says so; the filter sees each level of a nested state."""
        keep = self._state_filter(state)
        if keep is False:
            return state
        if keep is True:
            if isinstance(state, Tensor):
                return self._dropout(state, self._state_keep_prob, "state")
            return _same_sequence(state, [self._dropped_state(part) for part in state])
        dropped = [self._dropout(part, self._state_keep_prob, "state") if k else part for part, k in zip(state, keep)]
        return _same_sequence(state, dropped)

    def _wrapped_call(self, inputs, state, scope):
        if not _keeps_everything(self._input_keep_prob):
            inputs = self._dropout(inputs, self._input_keep_prob, "input")
        output, new_state = self.cell(inputs, state, scope=scope)
        if not _keeps_everything(self._state_keep_prob):
            new_state = self._dropped_state(new_state)
        if not _keeps_everything(self._output_keep_prob):
            output = self._dropout(output, self._output_keep_prob, "output")
        return output, new_state


def _same_sequence(template, items: list):
    """`items` as a sequence of template's type (a namedtuple, tuple or list)."""
    return type(template)(*items) if hasattr(template, "_fields") else type(template)(items)


class ResidualWrapper(_Wrapper):
    """A cell whose output is the wrapped cell's output plus its input (or residual_fn(inputs, outputs))."""

    def __init__(self, cell, residual_fn=None) -> None:
        super().__init__(cell)
        self._residual_fn = residual_fn or (lambda inputs, outputs: nest.map_structure(math_ops.add, inputs, outputs))

    def _wrapped_call(self, inputs, state, scope):
        outputs, new_state = self.cell(inputs, state, scope=scope)
        return self._residual_fn(inputs, outputs), new_state


class DeviceWrapper(_Wrapper):
    """A cell whose ops run on `device`."""

    def __init__(self, cell, device: str) -> None:
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with device_scope(self._device):
            return super().zero_state(batch_size, dtype)

    def _wrapped_call(self, inputs, state, scope):
        with device_scope(self._device):
            return self.cell(inputs, state, scope=scope)
