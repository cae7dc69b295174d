# Text chunks of PNG inputs carried to PNG outputs, within a budget (pipeline/codec/png_text.c).
ts_add_test(test_png_text SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_png_text.c LABELS cpu)
