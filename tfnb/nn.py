"""tf.nn: neural-network ops."""

from tfnb.ops.conv_ops import *  # noqa: F401,F403
from tfnb.ops.nn_impl import *  # noqa: F401,F403
from tfnb.ops.nn_ops import *  # noqa: F401,F403
from tfnb.ops.selection_ops import top_k  # noqa: F401,E402
