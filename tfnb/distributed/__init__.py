"""Distributed execution on Dask (OSDI paper, sections 3.3 and 4): clusters of tasks, a master, parameter servers.

Dask is imported only when a cluster is used (pip install "tfnb[distributed]").
"""

from tfnb.client.targets import register_target_opener
from tfnb.distributed.cluster_spec import ClusterSpec
from tfnb.distributed.server import Server, open_cluster_target

__all__ = ["ClusterSpec", "Server"]

register_target_opener(open_cluster_target)
