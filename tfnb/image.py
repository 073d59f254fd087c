"""tf.image: decoding, resizing, dtype conversion, standardization, flips, crops and color distortions."""

from tfnb.ops.image_ops import *  # noqa: F401,F403
