"""tf.strings: the string ops tfnb has, by their TF1 `tf.strings.*` names."""

from tfnb.ops.string_ops import string_to_number as to_number

__all__ = ["to_number"]
