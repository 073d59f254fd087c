"""`python -m benchmarks`: every benchmark, printed as ratios measured side by side."""

from benchmarks import (
    bench_cnn,
    bench_concurrent_steps,
    bench_convnets,
    bench_dashboard,
    bench_devices,
    bench_distributed,
    bench_executor,
    bench_lstm,
    bench_mlp,
    bench_while_loop,
)


def main() -> None:
    bench_executor.main()
    bench_mlp.main()
    bench_cnn.main()
    bench_dashboard.main()
    bench_while_loop.main()
    bench_lstm.main()
    bench_concurrent_steps.main()
    bench_devices.main()
    bench_distributed.main()
    bench_convnets.main([])  # the paper's Table 1 at a small batch (BATCH)
    bench_convnets.main(["--device", "gpu"])  # and on a GPU at the paper's batches, where there is one


if __name__ == "__main__":
    main()
