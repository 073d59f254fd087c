"""Optimizers, learning-rate schedules and the global step (tf.train)."""

from tfnb.ops import training_ops  # noqa: F401  (registers the update ops)
from tfnb.training.adadelta import AdadeltaOptimizer
from tfnb.training.adagrad import AdagradOptimizer
from tfnb.training.adam import AdamOptimizer
from tfnb.training.gradient_descent import GradientDescentOptimizer
from tfnb.training.learning_rate_decay import (
                                               exponential_decay,
                                               inverse_time_decay,
                                               piecewise_constant,
                                               polynomial_decay,
)
from tfnb.training.momentum import MomentumOptimizer
from tfnb.training.optimizer import Optimizer
from tfnb.training.rmsprop import RMSPropOptimizer
from tfnb.training.training_util import (
                                               assert_global_step,
                                               create_global_step,
                                               get_global_step,
                                               get_or_create_global_step,
                                               global_step,
)

__all__ = ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdagradOptimizer", "AdadeltaOptimizer",
           "RMSPropOptimizer", "AdamOptimizer", "exponential_decay", "inverse_time_decay", "piecewise_constant",
           "polynomial_decay", "global_step", "get_global_step", "create_global_step", "get_or_create_global_step",
           "assert_global_step"]
