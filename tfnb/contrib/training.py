"""tf.contrib.training: load-balancing strategies for tf.train.replica_device_setter."""

from tfnb.training.device_setter import GreedyLoadBalancingStrategy, byte_size_load_fn

__all__ = ["GreedyLoadBalancingStrategy", "byte_size_load_fn"]
