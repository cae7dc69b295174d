# The fast CPU ops against the reference, and the CPU thread pool
# (kernels/<family>/cpu_*.c, pipeline/engine/pool.c, pipeline/engine/cpu.c).
ts_add_test(test_cpu_ops SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cpu_ops.c LABELS cpu)
# GPU kernel versions: an unknown tsk_launch.version is refused, not run as
# the default (kernels/gpu.cu); no device needed, so it runs everywhere.
ts_add_test(test_kernel_versions SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kernel_versions.c LABELS cpu)
