# The fast CPU ops against the reference, and the CPU thread pool
# (kernels/cpu_*.c, pipeline/engine/pool.c, pipeline/engine/cpu.c).
ts_add_test(test_cpu_ops SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cpu_ops.c LABELS cpu)
