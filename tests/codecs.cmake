# Codec suite: image memory, formats, PNG/JPEG/BMP/TGA/HDR reading and
# writing, bad inputs, atomic saves. Data lives in tests/data (PngSuite,
# JPEG fixtures from tests/data/make_fixtures.sh).
ts_add_test(test_pngsuite SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pngsuite.c LABELS cpu)
ts_add_test(test_jpeg SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_jpeg.c LABELS cpu)
ts_add_test(test_codecs SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_codecs.c LABELS cpu)
ts_add_test(test_badinput SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_badinput.c LABELS cpu)
ts_add_test(test_save SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_save.c LABELS cpu)
ts_add_test(test_bombs SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_bombs.c LABELS cpu)
ts_add_test(test_fuzz_regressions SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fuzz_regressions.c LABELS cpu)
# The loaders' refusals through the command line.
add_test(NAME test_cli_loaders COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli_loaders.sh $<TARGET_FILE:tilestream_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli_loaders PROPERTIES LABELS cpu)
