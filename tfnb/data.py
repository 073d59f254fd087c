"""tf.data (TF1 style): Dataset pipelines in the graph, read through one-shot or initializable iterators."""

from tfnb.input.datasets import (  # noqa: F401
    Dataset,
    Iterator,
    make_initializable_iterator,
    make_one_shot_iterator,
)
