"""tfnb: the dataflow system of the TensorFlow whitepapers, in Python, for JupyterLab.

`import tfnb as tf` gives TF1 graph-mode names: build a graph, run it in a Session.
"""

from tfnb import dtypes, errors
from tfnb.dtypes import (DType, as_dtype, bool_ as bool, complex64, complex128, double, float16, float32, float64,
                         half, int8, int16, int32, int64, resource, string, uint8, uint16)
from tfnb.graph import (Graph, GraphKeys, add_to_collection, add_to_collections, colocate_with, container,
                        control_dependencies, device, get_collection, get_collection_ref, get_default_graph,
                        name_scope, reset_default_graph)
from tfnb.graph_io import GraphDef, import_graph_def
from tfnb.operation import Operation
from tfnb.ops.array_ops import *  # noqa: F401,F403
from tfnb.ops.constant_op import constant, convert_to_tensor, register_tensor_conversion_function
from tfnb.ops.control_flow_ops import group, no_op, tuple  # noqa: A004
from tfnb.ops.cond import case, cond
from tfnb.ops.while_loop import while_loop
from tfnb.ops.math_ops import *  # noqa: F401,F403
from tfnb.ops.random_ops import *  # noqa: F401,F403
from tfnb.ops.state_ops import *  # noqa: F401,F403
from tfnb.variables import *  # noqa: F401,F403
from tfnb.variable_scope import *  # noqa: F401,F403
from tfnb.init_ops import *  # noqa: F401,F403
from tfnb.gradients import gradients
from tfnb.indexed_slices import IndexedSlices, IndexedSlicesValue
from tfnb.ops.segment_ops import *  # noqa: F401,F403
from tfnb.ops.selection_ops import *  # noqa: F401,F403
from tfnb.ops.contraction_ops import *  # noqa: F401,F403
from tfnb.ops.data_flow_ops import *  # noqa: F401,F403
from tfnb.ops.tensor_array_ops import *  # noqa: F401,F403
from tfnb.ops.functional_ops import *  # noqa: F401,F403
from tfnb.readers import *  # noqa: F401,F403
from tfnb.ops import broadcast_grad  # noqa: F401  (registers BroadcastGradientArgs)
from tfnb import contrib, datasets, initializers, layers, losses, math, nn, summary, train  # noqa: E402
from tfnb.session import (ConfigProto, GraphOptions, InteractiveSession, OptimizerOptions, Session,
                          get_default_session)
from tfnb.tensor import Tensor
from tfnb.tensor_shape import Dimension, TensorShape
from tfnb.device_spec import DeviceSpec
from tfnb.tracing import RunMetadata, RunOptions, Timeline

from tfnb import test  # noqa: E402

__version__ = "0.1.0"
