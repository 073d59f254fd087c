"""Notebook widgets for tfnb: the graph view, an execution replay, a per-device timeline and a live dashboard."""

from .dashboard import Dashboard
from .graph_view import GraphView
from .replay import ExecutionReplay
from .timeline import Timeline
from .placement_view import MemoryView, PlacementView
