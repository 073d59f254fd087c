"""tf.contrib.rnn: the RNN cells and the static (unrolled) RNN functions under their contrib names."""

from tfnb.layers.rnn_cell_impl import (  # noqa: F401
    BasicLSTMCell,
    BasicRNNCell,
    DeviceWrapper,
    DropoutWrapper,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    ResidualWrapper,
    RNNCell,
)
from tfnb.ops.rnn import static_bidirectional_rnn, static_rnn  # noqa: F401
