# Text chunks of PNG inputs carried to PNG outputs, within a budget (pipeline/codec/png_text.c).
ts_add_test(test_png_text SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_png_text.c LABELS cpu)
# a million-chunk file took minutes when each chunk copied the records read so far
set_tests_properties(test_png_text PROPERTIES TIMEOUT 120)
