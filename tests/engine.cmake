# The GPU engine against the CPU backend: tolerance, tiled == untiled,
# 1 stream == N streams, images in flight, trace events (pipeline/engine/engine_cuda.c).
ts_add_test(test_gpu_engine SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_engine.c LABELS gpu)
# Both sampling paths through the engine, tiled and untiled, on chains users
# run and on the sample photos, against the CPU backend within stated bounds.
ts_add_test(test_gpu_texture SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_texture.c LABELS gpu)
# A nearly full device: smaller tiles, same pixels; a full one: a clear error.
# Alone, since it takes the device's memory from every other test.
ts_add_test(test_gpu_oom SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_oom.c LABELS gpu)
set_tests_properties(test_gpu_oom PROPERTIES RUN_SERIAL TRUE)
# Several engines at once (one per device, two on one device), each fed from
# its own thread: outputs equal one engine's; slots are never shared.
ts_add_test(test_gpu_multi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_multi.c LABELS gpu)
target_link_libraries(test_gpu_multi PRIVATE Threads::Threads)
