# GPU convolution kernels (separable and 2-D), every version against the CPU
# reference (label gpu: exit code 77 without a device): one test body,
# test_gpu_conv, run once per family. TS_CONV_TIMING=1 times the versions
# instead; TS_CONV_SMALL=1 or 2 keeps to small images.
ts_add_test(test_gpu_conv_sep EXE test_gpu_conv SOURCES test_gpu_conv.c ARGS sep LABELS gpu)
ts_add_test(test_gpu_conv2d EXE test_gpu_conv ARGS 2d LABELS gpu)
# A separable convolution writing its output oriented (and through a colour
# matrix), as the planner fuses them: against the two ops on the GPU (exact)
# and the reference; and which chains the planner fuses.
ts_add_test(test_gpu_fuse SOURCES test_gpu_fuse.c LABELS gpu)
