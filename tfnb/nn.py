"""tf.nn: neural-network ops."""

from tfnb.layers import rnn_cell_impl as rnn_cell  # noqa: F401,E402  (tf.nn.rnn_cell)
from tfnb.ops.candidate_sampling_ops import *  # noqa: F401,F403,E402
from tfnb.ops.conv_ops import *  # noqa: F401,F403
from tfnb.ops.nn_impl import *  # noqa: F401,F403
from tfnb.ops.nn_ops import *  # noqa: F401,F403
from tfnb.ops.rnn import *  # noqa: F401,F403,E402
from tfnb.ops.sampled_losses import *  # noqa: F401,F403,E402
from tfnb.ops.selection_ops import top_k  # noqa: F401,E402
