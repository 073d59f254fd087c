"""tf.contrib: the TF1 contrib names that tutorials use (layers.l2_regularizer, opt.ScipyOptimizerInterface)."""

from tfnb.contrib import layers, opt, rnn, training  # noqa: F401
