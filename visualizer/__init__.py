"""Notebook widgets for tfnb: the graph view, an execution replay, a per-device timeline, a live dashboard and a
cluster's tasks."""

from .cluster_view import ClusterView
from .dashboard import Dashboard
from .graph_view import GraphView
from .placement_view import MemoryView, PlacementView
from .replay import ExecutionReplay
from .timeline import Timeline
