"""Session configuration with TF1's names: ConfigProto, GraphOptions, OptimizerOptions."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OptimizerOptions:
    """Graph rewrites before a plan runs: L1 folds constants, merges common subexpressions and fuses kernels
    (tfnb/runtime/fusion.py; `do_kernel_fusion` is tfnb's); L0 does none of these.

    `delay_recvs` (tfnb's): a Recv waits until just before its first reader needs the value (the paper's added
    control edges), so a received copy lives no longer than needed; False receives as soon as the value is sent.
    """

    L1 = 0
    L0 = -1
    opt_level: int = 0
    do_constant_folding: bool = True
    do_common_subexpression_elimination: bool = True
    do_kernel_fusion: bool = True
    delay_recvs: bool = True


@dataclass
class GraphOptions:
    """Graph options: the rewrites (`optimizer_options`), and `enable_bfloat16_sendrecv`: values crossing devices
    travel as bfloat16, float32 cut to its top 16 bits (the paper's lossy compression, section 5.5)."""

    optimizer_options: OptimizerOptions = field(default_factory=OptimizerOptions)
    enable_bfloat16_sendrecv: bool = False


@dataclass
class ConfigProto:
    """Session configuration: logical devices (`device_count={'CPU': 4}`), placement, threads, rewrites.

    - log_device_placement: each compiled plan prints `name: (Type): device` per op to stderr, as TF logs it;
    - intra_op_parallelism_threads: the threads a run's kernels share (0: one per core; kernels/intra_op.py);
    - inter_op_parallelism_threads: the threads that run a plan's device partitions at the same time (0: one per
      device; 1: every device's nodes in one thread, one after another). Plans with control flow use one thread;
    - operation_timeout_in_ms: in a distributed session, how long a Recv waits for a value from another task before
      the step fails with UnavailableError (0: tfnb's default, 60 s); `device_filters` is accepted and ignored.
    """

    device_count: dict = field(default_factory=dict)
    allow_soft_placement: bool = False
    log_device_placement: bool = False
    inter_op_parallelism_threads: int = 0
    intra_op_parallelism_threads: int = 0
    graph_options: GraphOptions = field(default_factory=GraphOptions)
    operation_timeout_in_ms: int = 0
    device_filters: list = field(default_factory=list)
