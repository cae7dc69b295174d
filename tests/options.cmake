# One range and one default per option (tilestream.h's ts_option table),
# and one outcome out of range: the library's check, the save path, the
# batch's options, the CPU bench and the command line.
ts_add_test(test_options SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_options.c LABELS cpu)
target_link_libraries(test_options PRIVATE tilestream_bench)
add_test(NAME test_cli_options COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli_options.sh $<TARGET_FILE:tilestream_cli>
         ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli_options PROPERTIES LABELS cpu)
