# GPU point and orientation kernels against the CPU reference (label gpu:
# exit code 77, skipped, without a CUDA device or in a CPU-only build).
ts_add_test(test_gpu_point SOURCES test_gpu_point.c LABELS gpu)
ts_add_test(test_gpu_orient SOURCES test_gpu_orient.c LABELS gpu)
