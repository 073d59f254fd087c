"""tf.initializers: variable initializers by their TF1 short names (`tf.initializers.glorot_uniform()`)."""

from tfnb.ops.init_ops import Constant as constant
from tfnb.ops.init_ops import GlorotNormal as glorot_normal
from tfnb.ops.init_ops import GlorotUniform as glorot_uniform
from tfnb.ops.init_ops import Ones as ones
from tfnb.ops.init_ops import RandomNormal as random_normal
from tfnb.ops.init_ops import RandomUniform as random_uniform
from tfnb.ops.init_ops import TruncatedNormal as truncated_normal
from tfnb.ops.init_ops import VarianceScaling as variance_scaling
from tfnb.ops.init_ops import Zeros as zeros
from tfnb.ops.variables import global_variables_initializer as global_variables
from tfnb.ops.variables import local_variables_initializer as local_variables
from tfnb.ops.variables import variables_initializer as variables

__all__ = ["constant", "glorot_normal", "glorot_uniform", "ones", "random_normal", "random_uniform",
           "truncated_normal", "variance_scaling", "zeros", "global_variables", "local_variables", "variables",
           "he_normal", "he_uniform", "lecun_normal", "lecun_uniform"]


def he_normal(seed=None) -> variance_scaling:
    """Truncated normal with variance 2 / fan_in (He et al., 2015)."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None) -> variance_scaling:
    """Uniform with variance 2 / fan_in (He et al., 2015)."""
    return variance_scaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None) -> variance_scaling:
    """Truncated normal with variance 1 / fan_in (LeCun et al., 1998)."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None) -> variance_scaling:
    """Uniform with variance 1 / fan_in (LeCun et al., 1998)."""
    return variance_scaling(1.0, "fan_in", "uniform", seed)
