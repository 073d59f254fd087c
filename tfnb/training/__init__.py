"""Optimizers, learning-rate schedules, the global step, and distributed training's pieces (tf.train)."""

from tfnb.ops import training_ops  # noqa: F401  (registers the update ops)
from tfnb.training.adadelta import AdadeltaOptimizer
from tfnb.training.adagrad import AdagradOptimizer
from tfnb.training.adam import AdamOptimizer
from tfnb.training.basic_session_run_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    KeepBestCheckpointListener,
    SecondOrStepTimer,
    StopAtStepHook,
)
from tfnb.training.device_setter import replica_device_setter
from tfnb.training.gradient_descent import GradientDescentOptimizer
from tfnb.training.learning_rate_decay import (
                                               exponential_decay,
                                               inverse_time_decay,
                                               piecewise_constant,
                                               polynomial_decay,
)
from tfnb.training.momentum import MomentumOptimizer
from tfnb.training.monitored_session import (
                                               ChiefSessionCreator,
                                               MonitoredSession,
                                               MonitoredTrainingSession,
                                               Scaffold,
                                               SessionCreator,
                                               WorkerSessionCreator,
)
from tfnb.training.moving_averages import ExponentialMovingAverage
from tfnb.training.optimizer import Optimizer
from tfnb.training.rmsprop import RMSPropOptimizer
from tfnb.training.session_manager import SessionManager
from tfnb.training.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from tfnb.training.sync_replicas_optimizer import SyncReplicasOptimizer
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
           "assert_global_step", "ExponentialMovingAverage", "replica_device_setter", "SyncReplicasOptimizer",
           "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "StopAtStepHook",
           "CheckpointSaverHook", "CheckpointSaverListener", "KeepBestCheckpointListener", "SecondOrStepTimer",
           "SessionManager", "Scaffold", "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator",
           "MonitoredSession", "MonitoredTrainingSession"]
