"""Variable scopes and get_variable: TF1's way to create variables by name and share them.

Each graph keeps one store: the variables made by `get_variable` (keyed by their full names),
the current variable scope, and how often each scope name has been opened (for default names).
A variable's name is `scope/name` whatever the name scopes around it.
"""

from __future__ import annotations

import enum
import functools
import inspect

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import GraphKeys, get_collection, get_default_graph
from tfnb.framework.tensor_shape import as_shape
from tfnb.ops.init_ops import GlorotUniform, Zeros
from tfnb.ops.partitioned_variables import PartitionedVariable, checked_partitions, part_shapes
from tfnb.ops.variables import Variable

__all__ = ["AUTO_REUSE", "VariableScope", "get_local_variable", "get_variable", "get_variable_scope",
           "no_regularizer", "variable_scope"]


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_) -> None:
    """A regularizer that adds no loss (to switch off a scope's regularizer)."""
    return None


class VariableScope:
    """Defaults for `get_variable` inside a scope (initializer, regularizer, dtype, reuse) and its name."""

    def __init__(self, reuse, name: str = "", initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, name_scope: str = "", dtype=dtypes.float32,
                 use_resource=None, constraint=None) -> None:
        self._reuse = reuse
        self._name = name
        self._name_scope = name_scope
        self.initializer = initializer
        self.regularizer = regularizer
        self.caching_device = caching_device
        self.partitioner = partitioner
        self.custom_getter = custom_getter
        self.dtype = dtypes.as_dtype(dtype)
        self.use_resource = use_resource
        self.constraint = constraint

    @property
    def name(self) -> str:
        return self._name

    @property
    def original_name_scope(self) -> str:
        """The name scope opened when this scope was first entered ('outer/inner_1/')."""
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    def reuse_variables(self) -> None:
        """From now on, get_variable in this scope returns existing variables instead of creating them."""
        self._reuse = True

    def set_initializer(self, initializer) -> None:
        self.initializer = initializer

    def set_regularizer(self, regularizer) -> None:
        self.regularizer = regularizer

    def set_dtype(self, dtype) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def set_caching_device(self, caching_device) -> None:
        self.caching_device = caching_device

    def set_partitioner(self, partitioner) -> None:
        self.partitioner = partitioner

    def set_custom_getter(self, custom_getter) -> None:
        self.custom_getter = custom_getter

    def set_use_resource(self, use_resource) -> None:
        self.use_resource = use_resource

    def get_collection(self, name: str) -> list:
        """The items of collection `name` that belong to this scope."""
        return get_collection(name, f"{self._name}/" if self._name else "")

    def global_variables(self) -> list:
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def trainable_variables(self) -> list:
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def local_variables(self) -> list:
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name: str, shape=None, dtype=None, initializer=None, regularizer=None,
                     reuse=None, trainable=None, collections=None, caching_device=None, partitioner=None,
                     validate_shape: bool = True, use_resource=None, custom_getter=None, constraint=None) -> Variable:
        """The variable `scope_name/name` from `var_store`, created or reused by this scope's rules and defaults."""
        if dtype is not None and initializer is not None and not callable(initializer):
            init_dtype = _value_dtype(initializer)
            if init_dtype is not dtypes.as_dtype(dtype):
                raise ValueError(f"Initializer type '{init_dtype.name}' and explicit dtype "
                                 f"'{dtypes.as_dtype(dtype).name}' don't match.")
        kwargs = dict(
            name=f"{self._name}/{name}" if self._name else name, shape=shape,
            dtype=dtypes.as_dtype(dtype or self.dtype),
            initializer=self.initializer if initializer is None else initializer,
            regularizer=self.regularizer if regularizer is None else regularizer,
            reuse=self._reuse if reuse is None else reuse, trainable=True if trainable is None else trainable,
            collections=collections, caching_device=caching_device or self.caching_device,
            partitioner=partitioner or self.partitioner, validate_shape=validate_shape,
            use_resource=use_resource, constraint=self.constraint if constraint is None else constraint)
        custom_getter = custom_getter or self.custom_getter
        # Variable names depend on the variable scope only, so no name scope is open while creating.
        with get_default_graph().name_scope(None):
            if custom_getter is not None:
                return custom_getter(var_store.get_variable, **kwargs)
            return var_store.get_variable(**kwargs)


def _value_dtype(value) -> dtypes.DType:
    """The dtype a value would have as a tensor, without adding an op for it."""
    dtype = getattr(value, "dtype", None)
    return dtypes.as_dtype(dtype) if dtype is not None else dtypes.dtype_of_value(value)


class _VariableStore:
    """One graph's variables made by get_variable, its current variable scope, and scope-name counts."""

    def __init__(self) -> None:
        self.variables: dict[str, Variable] = {}
        self.current_scope = VariableScope(False)
        self.scope_counts: dict[str, int] = {}

    def open_scope(self, name: str) -> None:
        self.scope_counts[name] = self.scope_counts.get(name, 0) + 1

    def close_subscopes(self, name: str) -> None:
        """Forgets how often the scopes inside `name` were opened, so re-entering `name` reuses their names."""
        for key in self.scope_counts:
            if key.startswith(name + "/"):
                self.scope_counts[key] = 0

    def get_variable(self, name: str, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None,
                     reuse=None, trainable=True, collections=None, caching_device=None, partitioner=None,
                     validate_shape: bool = True, use_resource=None, constraint=None) -> Variable:
        """The variable called `name`: the existing one if reuse allows, else a new one if reuse allows."""
        if partitioner is not None:
            return self._partitioned(name, shape, dtype, initializer, partitioner, reuse,
                                     {"regularizer": regularizer, "trainable": trainable, "collections": collections,
                                      "validate_shape": validate_shape, "constraint": constraint})
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype, shape = dtypes.as_dtype(dtype), as_shape(shape)
        if name in self.variables:
            return self._existing(name, shape, dtype, reuse)
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). "
                             f"Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
        initial_value, variable_dtype = _initial_value(name, shape, dtype, initializer)
        variable = Variable(initial_value, trainable=trainable, collections=collections,
                            validate_shape=validate_shape, name=name, dtype=variable_dtype, constraint=constraint)
        self.variables[name] = variable
        if regularizer is not None:
            _add_regularization_loss(variable, name, regularizer)
        return variable

    def _partitioned(self, name: str, shape, dtype, initializer, partitioner, reuse, options: dict) \
            -> PartitionedVariable:
        """The partitioned variable `name`: its parts `name/part_<i>` made (or reused) along the partitioner's axis."""
        dtype, shape = dtypes.as_dtype(dtype), as_shape(shape)
        if name in self.variables:
            return self._existing(name, shape, dtype, reuse)
        from_value = initializer is not None and not callable(initializer)
        if from_value:
            value = np.asarray(initializer, dtype=dtype.np_dtype)
            shape = as_shape(value.shape)
        if not shape.is_fully_defined():
            raise ValueError(f"Shape of a new partitioned variable ({name}) must be fully defined, but instead was "
                             f"{shape}.")
        axis, count = checked_partitions(name, shape, partitioner(shape=shape, dtype=dtype))
        parts, start = [], 0
        for k, part_shape in enumerate(part_shapes(shape, axis, count)):
            part_init = initializer
            if from_value:
                part_init = np.take(value, range(start, start + part_shape[axis]), axis=axis)
                start += part_shape[axis]
            parts.append(self.get_variable(f"{name}/part_{k}", None if from_value else part_shape, dtype, part_init,
                                           reuse=reuse, **options))
        variable = PartitionedVariable(name, shape, dtype, parts, axis)
        self.variables[name] = variable
        return variable

    def _existing(self, name: str, shape, dtype: dtypes.DType, reuse) -> Variable:
        found = self.variables[name]
        if not reuse:
            raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                             f"reuse=tf.AUTO_REUSE in VarScope?")
        if not shape.is_compatible_with(found.shape):
            raise ValueError(f"Trying to share variable {name}, but specified shape {shape} and found shape "
                             f"{found.shape}.")
        if dtype is not found.dtype:
            raise ValueError(f"Trying to share variable {name}, but specified dtype {dtype.name} and found dtype "
                             f"{found.dtype.name}.")
        return found


def _default_initializer(name: str, dtype: dtypes.DType):
    if dtype.is_floating:
        return GlorotUniform()
    if dtype.is_integer or dtype.is_bool or dtype is dtypes.string:
        return Zeros()
    raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")


def _no_arguments(initializer) -> bool:
    """Whether `initializer` is a callable that needs no arguments (it then makes its own shape and dtype)."""
    parameters = inspect.signature(initializer).parameters.values()
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def _initial_value(name: str, shape, dtype: dtypes.DType, initializer) -> tuple:
    """Variable's initial_value (a value, or a function building the tensor) and dtype (None: the value's)."""
    if initializer is not None and not callable(initializer):
        return initializer, None
    if initializer is None:
        initializer = _default_initializer(name, dtype)
    if inspect.isclass(initializer):
        initializer = initializer()
    if shape.is_fully_defined():
        return functools.partial(initializer, shape.as_list(), dtype=dtype, partition_info=None), dtype
    if _no_arguments(initializer):
        return initializer, None
    raise ValueError("The initializer passed is not valid. It should be a callable with no arguments and the shape "
                     "should not be provided or an instance of `tf.keras.initializers.*' and `shape` should be "
                     "fully defined.")


def _add_regularization_loss(variable: Variable, name: str, regularizer) -> None:
    graph = variable.graph
    with graph.colocate_with(variable.op), graph.name_scope(name + "/Regularizer/"), \
            graph.control_dependencies(None):
        loss = regularizer(variable)
    if loss is not None:
        graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)


def _store(graph=None) -> _VariableStore:
    graph = graph or get_default_graph()
    if graph._variable_store is None:
        graph._variable_store = _VariableStore()
    return graph._variable_store


def get_variable_scope() -> VariableScope:
    """The current variable scope of the default graph."""
    return _store().current_scope


def get_variable(name: str, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                 collections=None, caching_device=None, partitioner=None, validate_shape: bool = True,
                 use_resource=None, custom_getter=None, constraint=None) -> Variable:
    """The variable `scope/name`: created with the scope's defaults, or the existing one where reuse is on.

    Without an initializer, floats use glorot_uniform and integers, bools and strings zeros.
    """
    return get_variable_scope().get_variable(
        _store(), name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        trainable=trainable, collections=collections, caching_device=caching_device, partitioner=partitioner,
        validate_shape=validate_shape, use_resource=use_resource, custom_getter=custom_getter, constraint=constraint)


def get_local_variable(name: str, shape=None, dtype=None, initializer=None, regularizer=None, trainable=False,
                       collections=None, caching_device=None, partitioner=None, validate_shape: bool = True,
                       use_resource=None, custom_getter=None, constraint=None) -> Variable:
    """get_variable for a LOCAL_VARIABLES variable (not saved, not trained)."""
    return get_variable(name, shape, dtype, initializer, regularizer, trainable,
                        [GraphKeys.LOCAL_VARIABLES] + list(collections or []), caching_device, partitioner,
                        validate_shape, use_resource, custom_getter, constraint)


def _wrap_custom_getter(custom_getter, outer_getter):
    """A getter calling `custom_getter` with a getter that goes through `outer_getter` (outer scopes' getters)."""
    if custom_getter is None or outer_getter is None:
        return custom_getter or outer_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(functools.partial(outer_getter, getter), *args, **kwargs)
    return wrapped


class variable_scope:  # noqa: N801 (TF1's name)
    """Opens a variable scope (and a name scope): `with tf.variable_scope("layer", reuse=tf.AUTO_REUSE) as scope:`.

    `name_or_scope` is a name or a VariableScope to re-enter; with None, `default_name` is made unique.
    `reuse` True or AUTO_REUSE turns reuse on for this scope; None (or False) inherits it. `values` is ignored.
    """

    def __init__(self, name_or_scope, default_name: str | None = None, values=None, initializer=None,
                 regularizer=None, caching_device=None, partitioner=None, custom_getter=None, reuse=None,
                 dtype=None, use_resource=None, constraint=None, auxiliary_name_scope: bool = True) -> None:
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        reuse = None if reuse is False else reuse
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if name_or_scope is None and reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._reuse = reuse
        self._auxiliary_name_scope = auxiliary_name_scope
        self._overrides = {"initializer": initializer, "regularizer": regularizer, "caching_device": caching_device,
                           "partitioner": partitioner, "dtype": dtype, "use_resource": use_resource,
                           "constraint": constraint}
        self._custom_getter = custom_getter

    def __enter__(self) -> VariableScope:
        graph = get_default_graph()
        self._store = store = _store(graph)
        self._old = store.current_scope
        self._name_scope = self._open_name_scope(graph)
        name_scope = self._name_scope.__enter__()
        self._scope = scope = self._new_scope(name_scope)
        self._saved_counts = dict(store.scope_counts) if isinstance(self._name_or_scope, VariableScope) else None
        store.open_scope(scope.name)
        store.current_scope = scope
        return scope

    def __exit__(self, exc_type, exc, tb) -> None:
        store = self._store
        if self._saved_counts is not None:
            store.scope_counts = self._saved_counts
        else:
            store.close_subscopes(self._scope.name)
        store.current_scope = self._old
        self._name_scope.__exit__(exc_type, exc, tb)

    def _open_name_scope(self, graph):
        if not self._auxiliary_name_scope:
            current = graph.get_name_scope()
            return graph.name_scope(current + "/" if current else "")
        if isinstance(self._name_or_scope, VariableScope):
            last = self._name_or_scope.name.split("/")[-1]
            return graph.name_scope(last) if last else graph.name_scope(graph.get_name_scope() + "/")
        return graph.name_scope(self._name_or_scope if self._name_or_scope is not None else self._default_name)

    def _new_scope(self, name_scope: str) -> VariableScope:
        if isinstance(self._name_or_scope, VariableScope):
            base = self._name_or_scope
            name, reuse, name_scope = base.name, self._reuse or base.reuse, base.original_name_scope
        else:
            base = self._old
            relative = self._name_or_scope or _unique_scope_name(self._store, self._old, self._default_name)
            name = f"{base.name}/{relative}" if base.name else relative
            reuse = self._reuse or base.reuse
        scope = VariableScope(reuse, name, base.initializer, base.regularizer, base.caching_device, base.partitioner,
                              _wrap_custom_getter(self._custom_getter, base.custom_getter), name_scope, base.dtype,
                              base.use_resource, base.constraint)
        for attribute, value in self._overrides.items():
            if value is not None:
                setattr(scope, attribute, dtypes.as_dtype(value) if attribute == "dtype" else value)
        return scope


def _unique_scope_name(store: _VariableStore, current: VariableScope, prefix: str) -> str:
    """`prefix`, or `prefix_N` with the first N whose scope has not been opened in `current`."""
    full = f"{current.name}/{prefix}" if current.name else prefix
    if not store.scope_counts.get(full):
        return prefix
    index = 1
    while store.scope_counts.get(f"{full}_{index}"):
        index += 1
    return f"{prefix}_{index}"
