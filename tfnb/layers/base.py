"""The TF1 layer base class: a layer owns a variable scope ('dense', 'dense_1', ...) created on its first call.

Its variables come from `get_variable` in that scope, so `reuse=True`, AUTO_REUSE, scope initializers and
regularizers work as for hand-written TF1 code; after the first call the scope is always re-entered with reuse.
"""

from __future__ import annotations

import numbers
import re
import weakref

from tfnb.framework import dtypes
from tfnb.framework.graph import GraphKeys, get_collection, get_default_graph
from tfnb.framework.tensor import Tensor
from tfnb.ops import array_ops, math_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import constant_value
from tfnb.ops.variable_scope import get_variable, variable_scope

__all__ = ["Layer"]

# Per graph, how many layers of each default name were made (keras' names: the first Dense is 'dense_1').
_LAYER_COUNTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _snake_case(class_name: str) -> str:
    """'MaxPooling2D' -> 'max_pooling2d', 'Conv2DTranspose' -> 'conv2d_transpose' (keras' rule)."""
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", class_name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _unique_layer_name(base: str) -> str:
    counts = _LAYER_COUNTS.setdefault(get_default_graph(), {})
    counts[base] = counts.get(base, 0) + 1
    return f"{base}_{counts[base]}"


class Layer:
    """A TF1 layer: `layer(inputs)` (or `layer.apply(inputs)`) builds its variables once, then its ops.

    Subclasses define `build(input_shape)`, which makes variables with `add_variable`, and `call(inputs, ...)`.
    """

    def __init__(self, trainable: bool = True, name: str | None = None, dtype=None, activity_regularizer=None,
                 _reuse=None, _scope=None) -> None:
        self.trainable = trainable
        self.built = False
        self.dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self.activity_regularizer = activity_regularizer
        self._reuse = _reuse
        self._scope = None
        if _scope:  # the functional forms name their scope as they are made, as TF1 does
            with variable_scope(_scope) as captured:
                self._scope = captured
        self._base_name = name or _snake_case(type(self).__name__)
        self.name = name or _unique_layer_name(self._base_name)
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._losses: list = []
        self._updates: list = []

    # -- what a user reads back -------------------------------------------------------------------

    @property
    def scope_name(self) -> str:
        """The name of the layer's variable scope ('dense_1'), set by its first call."""
        if self._scope is None:
            raise ValueError("No name available for layer scope because the layer has not been used yet.")
        return self._scope.name

    @property
    def trainable_variables(self) -> list:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_variables(self) -> list:
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def variables(self) -> list:
        """The trainable variables, then the others."""
        return self.trainable_variables + self.non_trainable_variables

    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables
    weights = variables

    @property
    def losses(self) -> list:
        """The layer's regularization losses (also in GraphKeys.REGULARIZATION_LOSSES)."""
        return list(self._losses)

    @property
    def updates(self) -> list:
        """The layer's update ops (also in GraphKeys.UPDATE_OPS)."""
        return list(self._updates)

    # -- what a subclass uses ---------------------------------------------------------------------

    def build(self, input_shape) -> None:
        """Creates the layer's variables for inputs of `input_shape`."""
        self.built = True

    def call(self, inputs: Tensor, **kwargs) -> Tensor:
        """The layer's computation on `inputs` (identity here)."""
        return inputs

    def add_variable(self, name: str, shape, dtype=None, initializer=None, regularizer=None, trainable: bool = True,
                     constraint=None):
        """get_variable(name, ...) in the layer's scope; a regularizer's loss goes to the layer's losses."""
        losses = get_collection(GraphKeys.REGULARIZATION_LOSSES)
        variable = get_variable(name, shape, dtype or self.dtype, initializer, regularizer,
                                trainable and self.trainable, constraint=constraint)
        self._losses += [loss for loss in get_collection(GraphKeys.REGULARIZATION_LOSSES) if loss not in losses]
        trained = variable in get_collection(GraphKeys.TRAINABLE_VARIABLES)
        (self._trainable_weights if trained else self._non_trainable_weights).append(variable)
        return variable

    add_weight = add_variable

    def add_loss(self, loss: Tensor) -> None:
        """Adds `loss` to the layer's losses and to GraphKeys.REGULARIZATION_LOSSES."""
        self._losses.append(loss)
        get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_update(self, update) -> None:
        """Adds an update op (a moving average's assign) to the layer's updates and to GraphKeys.UPDATE_OPS."""
        self._updates.append(update)
        get_default_graph().add_to_collection(GraphKeys.UPDATE_OPS, update)

    # -- calling ----------------------------------------------------------------------------------

    def __call__(self, inputs, *args, **kwargs) -> Tensor:
        """The layer applied to `inputs`: its variables are made on the first call, shared by later ones."""
        self._set_scope(kwargs.pop("scope", None))
        reuse = True if self.built else self._reuse
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope, \
                get_default_graph().name_scope(scope.original_name_scope):
            inputs = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs, dtype=self.dtype)
            if not self.built:
                self.dtype = self.dtype or inputs.dtype
                self.build(inputs.shape)
                self.built = True
            outputs = self.call(inputs, *args, **kwargs)
            if self.activity_regularizer is not None:
                self._regularize_activity(outputs)
        return outputs

    def apply(self, inputs, *args, **kwargs) -> Tensor:
        """The same as calling the layer."""
        return self(inputs, *args, **kwargs)

    def _set_scope(self, scope) -> None:
        if self._scope is not None:
            return
        if self._reuse:
            with variable_scope(scope if scope is not None else self._base_name) as captured:
                self._scope = captured
        else:
            with variable_scope(scope, default_name=self._base_name) as captured:
                self._scope = captured

    def _regularize_activity(self, outputs: Tensor) -> None:
        with get_default_graph().name_scope("ActivityRegularizer"):
            loss = self.activity_regularizer(outputs)
            if loss is not None:
                batch = math_ops.cast(array_ops.shape(outputs)[0], loss.dtype)
                self.add_loss(math_ops.truediv(loss, batch))


# -- argument checks shared by the layers -------------------------------------------------------


def normalized_tuple(value, n: int, what: str) -> tuple[int, ...]:
    """An int or n ints as a tuple of n ints (keras' normalize_tuple)."""
    values = (value,) * n if isinstance(value, numbers.Integral) else tuple(value)
    if len(values) != n or not all(isinstance(v, numbers.Integral) for v in values):
        raise ValueError(f"The `{what}` argument must be a tuple of {n} integers. Received: {value}")
    return tuple(int(v) for v in values)


def normalized_padding(padding: str) -> str:
    """'valid' or 'same' in any case, as TF's 'VALID' / 'SAME'."""
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: {padding}")
    return padding.upper()


def normalized_data_format(data_format: str) -> str:
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of 'channels_first', 'channels_last'. "
                         f"Received: {data_format}")
    return data_format


def static_bool(flag) -> bool | None:
    """A training flag's value if known while building (a Python bool or a constant), else None."""
    if isinstance(flag, Tensor):
        value = constant_value(flag)
        return None if value is None else bool(value)
    return bool(flag)


def to_channels_last(inputs: Tensor, data_format: str) -> Tensor:
    return array_ops.transpose(inputs, [0, 2, 3, 1]) if data_format == "channels_first" else inputs


def from_channels_last(outputs: Tensor, data_format: str) -> Tensor:
    return array_ops.transpose(outputs, [0, 3, 1, 2]) if data_format == "channels_first" else outputs
