"""Meta graphs: the graph saved beside a checkpoint (`<prefix>.meta.json`), exported and imported again.

tfnb differs from TF: a meta graph is the GraphDef's JSON alone, without collections or a SaverDef;
`import_meta_graph` returns a Saver for the variables it finds in the imported graph.
"""

from __future__ import annotations

import os

from tfnb.framework.graph import get_default_graph
from tfnb.framework.graph_def import GraphDef, NodeDef, parse_nodes
from tfnb.framework.importer import import_graph_def
from tfnb.io.checkpoint_format import STORABLE
from tfnb.io.checkpoints import Saver

__all__ = ["export_meta_graph", "import_meta_graph"]


def export_meta_graph(filename: str | None = None, graph=None, clear_devices: bool = False, **kwargs) -> GraphDef:
    """The graph (the default one unless given) as a GraphDef, also written to `filename` when given."""
    graph_def = (graph or get_default_graph()).as_graph_def()
    if clear_devices:
        graph_def = _without_devices(graph_def)
    if filename is not None:
        with open(filename, "w", encoding="utf-8") as f:
            f.write(graph_def.to_json())
    return graph_def


def import_meta_graph(meta_graph_or_file, clear_devices: bool = False, import_scope: str | None = None,
                      **kwargs) -> Saver | None:
    """Imports a saved graph into the default graph; returns a Saver for its variables (None if it has none).

    Checkpoint names are the variables' names without `import_scope`, so `saver.restore` reads the checkpoint
    saved with the graph. Nothing is built unless the whole file is a valid graph.
    """
    graph_def = meta_graph_or_file if isinstance(meta_graph_or_file, GraphDef) else _read(meta_graph_or_file)
    if clear_devices:
        graph_def = _without_devices(graph_def)
    names = [node.name for node in parse_nodes(graph_def.node)
             if node.op == "VarHandleOp" and node.attrs.get("dtype") in STORABLE]
    handles = import_graph_def(graph_def, return_elements=names, name=import_scope or "")
    return Saver({name: op.outputs[0] for name, op in zip(names, handles)}) if handles else None


def _read(path) -> GraphDef:
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise OSError(f"File does not exist. Received: {path}.")
    with open(path, "rb") as f:
        return GraphDef.FromString(f.read())


def _without_devices(graph_def: GraphDef) -> GraphDef:
    return GraphDef(NodeDef({**node, "device": ""}) for node in graph_def.node)
