# The batch runner (pipeline/batch.c): the memory budget on the CPU, and
# shrink on load (JPEG DCT scaling) against decoding whole.
ts_add_test(test_batch SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_batch.c LABELS cpu)
target_link_libraries(test_batch PRIVATE m)
