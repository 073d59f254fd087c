"""tfnb: the dataflow system of the TensorFlow whitepapers, in Python, for JupyterLab.

`import tfnb as tf` gives TF1 graph-mode names: build a graph, run it in a Session.
"""

from tfnb import (contrib, data, datasets, debugging, image, initializers, layers, losses, math, nn, strings, summary,
                  test, train)
from tfnb.autodiff.gradients import UnconnectedGradients, gradients
from tfnb.client.session import ConfigProto, GraphOptions, InteractiveSession, OptimizerOptions, Session
from tfnb.framework import dtypes, errors
from tfnb.framework.default_session import get_default_session
from tfnb.framework.device_spec import DeviceSpec
from tfnb.framework.dtypes import (DType, as_dtype, complex64, complex128, double, float16, float32, float64, half,
                                   int8, int16, int32, int64, resource, string, uint8, uint16)
from tfnb.framework.dtypes import bool_ as bool  # noqa: A004  (TF's name)
from tfnb.framework.graph import (Graph, GraphKeys, add_to_collection, add_to_collections, colocate_with, container,
                                  control_dependencies, device, get_collection, get_collection_ref, get_default_graph,
                                  name_scope, reset_default_graph)
from tfnb.framework.graph_def import GraphDef
from tfnb.framework.importer import import_graph_def
from tfnb.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import Dimension, TensorShape
from tfnb.input.readers import *
from tfnb.ops.array.gathering import segment_sum, unsorted_segment_sum
from tfnb.ops.array.unique import unique
from tfnb.input.input_pipeline import random_shuffle
from tfnb.ops.array_ops import *
from tfnb.ops.clip_ops import *
from tfnb.ops.conditional_accumulators import *
from tfnb.ops.confusion_matrix import confusion_matrix
from tfnb.ops.constant_op import constant, convert_to_tensor, register_tensor_conversion_function
from tfnb.ops.contraction_ops import *
from tfnb.ops.control_flow.cond import case, cond
from tfnb.ops.control_flow.dependencies import group, no_op, tuple  # noqa: A004  (TF's name)
from tfnb.ops.control_flow.while_loop import while_loop
from tfnb.ops.check_ops import *
from tfnb.ops.data_flow_ops import *
from tfnb.ops.functional_ops import *
from tfnb.ops.image_ops import random_crop
from tfnb.ops.io_ops import *
from tfnb.ops.init_ops import *
from tfnb.ops.math_ops import *
from tfnb.ops.partitioned_variables import *
from tfnb.ops.random_ops import *
from tfnb.ops.selection_ops import *
from tfnb.ops.state_ops import *
from tfnb.ops.string_ops import *
from tfnb.ops.tensor_array_ops import *
from tfnb.ops.variable_scope import *
from tfnb.ops.variables import *
from tfnb.runtime.tracing import RunMetadata, RunOptions, Timeline

__version__ = "0.1.0"
