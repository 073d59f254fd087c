"""tf.debugging: checks of a graph's values (check_numerics, Assert and the assert_* family) by TF1's names."""

from tfnb.ops.check_ops import (
    Assert,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_scalar,
    assert_type,
    check_numerics,
)
from tfnb.ops.check_ops import verify_tensor_all_finite as assert_all_finite

__all__ = ["Assert", "assert_all_finite", "assert_equal", "assert_greater", "assert_greater_equal", "assert_integer",
           "assert_less", "assert_less_equal", "assert_near", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_none_equal", "assert_positive", "assert_rank", "assert_scalar",
           "assert_type", "check_numerics"]
