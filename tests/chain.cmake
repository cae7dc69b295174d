# Op chains, planning and the tiled CPU backend.
ts_add_test(test_chain SOURCES test_chain.c LABELS cpu)
target_include_directories(test_chain PRIVATE ${PROJECT_SOURCE_DIR}/pipeline)
