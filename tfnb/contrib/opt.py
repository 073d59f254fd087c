"""tf.contrib.opt: ScipyOptimizerInterface (L-BFGS and other scipy.optimize methods driven by a session)."""

from tfnb.training.external_optimizer import (
    ExternalOptimizerInterface,
    ScipyOptimizerInterface,
)

__all__ = ["ExternalOptimizerInterface", "ScipyOptimizerInterface"]
