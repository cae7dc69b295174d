# --shard K/N: parsing, launcher environments, exact coverage (pipeline/batch/shard.c).
ts_add_test(test_shard SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_shard.c LABELS cpu)
