"""tf.train: optimizers, learning-rate schedules, the global step, checkpoints, and clusters of tasks."""

from tfnb.distributed import *  # noqa: F401,F403
from tfnb.input.input_pipeline import *  # noqa: F401,F403
from tfnb.input.queue_runner import *  # noqa: F401,F403
from tfnb.io.checkpoints import *  # noqa: F401,F403
from tfnb.io.meta_graph import *  # noqa: F401,F403
from tfnb.training import *  # noqa: F401,F403
