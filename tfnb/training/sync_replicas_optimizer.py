"""tf.train.SyncReplicasOptimizer: synchronous data-parallel training, with backup workers (OSDI paper, 4.4).

Each of `total_num_replicas` workers computes gradients at its local step and applies them to one conditional
accumulator per variable, on the variable's ps task; a gradient from an older step is dropped there. The chief
runs the sync op in a queue-runner thread: it takes the mean of the first `replicas_to_aggregate` gradients of
every variable, applies them with the wrapped optimizer (incrementing the global step) and puts one token per
replica, holding the new global step, in a token queue. A worker's train op waits for its token and moves its
local step to it. With more replicas than gradients to aggregate, the extra ones are backup workers: the
slowest gradients of each step are never waited for, and dropped when they arrive late.
"""

from __future__ import annotations

from tfnb.framework.graph import GraphKeys, get_default_graph
from tfnb.framework.indexed_slices import IndexedSlices
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.input.queue_runner import QueueRunner
from tfnb.ops import array_ops
from tfnb.ops.conditional_accumulators import ConditionalAccumulator, SparseConditionalAccumulator
from tfnb.ops.control_flow.dependencies import group, no_op
from tfnb.ops.data_flow_ops import FIFOQueue
from tfnb.ops.variables import Variable, global_variables, report_uninitialized_variables
from tfnb.training.optimizer import Optimizer
from tfnb.training.session_manager import ready_or_why
from tfnb.training.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]


class SyncReplicasOptimizer(Optimizer):
    """Aggregates the gradients of `replicas_to_aggregate` of `total_num_replicas` workers per step, then applies
    them with `opt` (see the module docstring). `variable_averages` is not supported by tfnb."""

    def __init__(self, opt: Optimizer, replicas_to_aggregate: int, total_num_replicas: int | None = None,
                 variable_averages=None, variables_to_average=None, use_locking: bool = False,
                 name: str = "sync_replicas") -> None:
        if variable_averages is not None:
            raise NotImplementedError("tfnb's SyncReplicasOptimizer does not average variables")
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas if total_num_replicas is not None else replicas_to_aggregate
        self._tokens_per_step = max(self._total_num_replicas, replicas_to_aggregate)
        self._gradients_applied = False
        self._global_step: Variable | None = None
        self._sync_token_queue: FIFOQueue | None = None
        self._chief_queue_runner: QueueRunner | None = None
        self._accumulators: list[tuple[object, str]] = []
        self._local_step: Variable | None = None
        self.local_step_init_op: Operation | None = None
        self.chief_init_op: Operation | None = None
        self.ready_for_local_init_op: Tensor | None = None

    def compute_gradients(self, *args, **kwargs) -> list[tuple]:
        """The wrapped optimizer's gradients."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name: str | None = None) -> Operation:
        """This replica's train op: apply its gradients to the accumulators, then wait for the next token."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = get_default_graph()
        self._make_local_step(graph, global_step)
        applied, aggregated = [], []
        with graph.name_scope(self._name):
            for grad, var in grads_and_vars:
                if grad is None:
                    aggregated.append(None)
                    continue
                with graph.device(var.device):
                    accumulator, apply, take = self._aggregation(grad, var)
                applied.append(apply)
                aggregated.append(take)
                self._accumulators.append((accumulator, var.device))
        with graph.device(global_step.device), graph.name_scope(None):
            update_op = self._opt.apply_gradients(list(zip(aggregated, [v for _, v in grads_and_vars])), global_step)
            self._sync_token_queue = FIFOQueue(-1, global_step.dtype, shapes=(), name="sync_token_q",
                                               shared_name="sync_token_q")
            with graph.control_dependencies(applied):
                token = self._sync_token_queue.dequeue()
            train_op = self._local_step.assign(token, read_value=False)
            with graph.control_dependencies([update_op]):
                tokens = array_ops.fill([self._tokens_per_step], global_step.value())
                sync_op = self._sync_token_queue.enqueue_many((tokens,))
            self._chief_queue_runner = QueueRunner(self._sync_token_queue, [sync_op])
        chief_init = [self.local_step_init_op]
        for accumulator, device in self._accumulators:
            with graph.device(device):
                chief_init.append(accumulator.set_global_step(global_step.value(), name="SetGlobalStep"))
        self.chief_init_op = group(*chief_init)
        self._gradients_applied = True
        return train_op

    def _make_local_step(self, graph, global_step: Variable) -> None:
        """The step this replica's gradients are computed at: a local variable on the worker, not on a ps."""
        anchor = no_op(name="local_anchor")
        with graph.colocate_with(anchor):
            self._local_step = Variable(0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                                        dtype=global_step.dtype, name="sync_rep_local_step")
        self.local_step_init_op = self._local_step.assign(global_step.value(), read_value=False)
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

    def _aggregation(self, grad, var: Variable) -> tuple:
        """The accumulator of `var`'s gradients, this replica's apply op, and the chief's mean of the gradients."""
        shared_name = var.op.name + "/grad_accum"
        if isinstance(grad, IndexedSlices):
            accumulator = SparseConditionalAccumulator(grad.dtype, shape=(), shared_name=shared_name)
            return (accumulator, accumulator.apply_indexed_slices_grad(grad, local_step=self._local_step.value()),
                    accumulator.take_indexed_slices_grad(self._replicas_to_aggregate))
        accumulator = ConditionalAccumulator(grad.dtype, shape=var.shape, shared_name=shared_name)
        return (accumulator, accumulator.apply_grad(grad, local_step=self._local_step.value()),
                accumulator.take_grad(self._replicas_to_aggregate))

    def get_chief_queue_runner(self) -> QueueRunner:
        """The queue runner the chief starts: it runs the sync op in a loop."""
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens: int = -1) -> Operation:
        """The op that fills the token queue before the first step (`replicas_to_aggregate` tokens by default)."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) vs {needed} (needed)")
        if num_tokens <= 0:
            return no_op(name="no_init_tokens")
        graph = get_default_graph()
        with graph.device(self._global_step.device), graph.name_scope(None):
            tokens = array_ops.fill([num_tokens], self._global_step.value())
            return self._sync_token_queue.enqueue_many((tokens,))

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs) -> list[str]:
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self) -> list[Variable]:
        return self._opt.variables()

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1) -> SessionRunHook:
        """The hook that initializes this replica (the chief also fills the token queue and starts the sync op)."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    """Runs the replica's local init once the model is ready; on the chief, the tokens and the sync thread too."""

    def __init__(self, optimizer: SyncReplicasOptimizer, is_chief: bool, num_tokens: int) -> None:
        self._optimizer, self._is_chief, self._num_tokens = optimizer, is_chief, num_tokens

    def begin(self) -> None:
        optimizer = self._optimizer
        if not optimizer._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before using the hook.")
        self._local_init_op = optimizer.chief_init_op if self._is_chief else optimizer.local_step_init_op
        self._queue_runner = optimizer.get_chief_queue_runner() if self._is_chief else None
        self._init_tokens_op = optimizer.get_init_tokens_op(self._num_tokens) if self._is_chief else None

    def after_create_session(self, session, coord) -> None:
        ready, why = ready_or_why(self._optimizer.ready_for_local_init_op, session)
        if not ready:
            raise RuntimeError(f"Init operations did not make model ready for SyncReplicasOptimizer local_init. "
                               f"Init op: {self._local_init_op.name}, error: {why}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._queue_runner is not None:
            self._queue_runner.create_threads(session, coord=coord, daemon=True, start=True)
