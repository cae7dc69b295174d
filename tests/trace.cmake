# Stage events, summaries and the trace writers (pipeline/report/trace.c).
ts_add_test(test_trace SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace.c LABELS cpu)
