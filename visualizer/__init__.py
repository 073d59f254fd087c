"""Notebook widgets for tfnb: the graph view, an execution replay and a per-device timeline."""

from .dashboard import Dashboard
from .graph_view import GraphView
from .replay import ExecutionReplay
from .timeline import Timeline
