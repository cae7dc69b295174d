# GPU resampling kernels (TSK_SAMPLE, global and texture paths) against the
# CPU reference (label gpu: exit code 77, skipped, without a CUDA device or
# in a CPU-only build).
ts_add_test(test_gpu_sample SOURCES test_gpu_sample.c LABELS gpu)
