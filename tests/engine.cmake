# The GPU engine against the CPU backend: tolerance, tiled == untiled,
# 1 stream == N streams, images in flight, trace events (pipeline/engine_cuda.c).
ts_add_test(test_gpu_engine SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_engine.c LABELS gpu)
# Both sampling paths through the engine, tiled and untiled, on chains users
# run and on the sample photos, against the CPU backend within stated bounds.
ts_add_test(test_gpu_texture SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_texture.c LABELS gpu)
