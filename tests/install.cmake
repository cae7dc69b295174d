# cmake --install into a temporary prefix, then a tiny program built with
# find_package(tilestream) and with pkg-config. Not in sanitizer builds: the
# library's -fsanitize link flags are the build's, not the package's.
if(NOT TS_SANITIZE)
  add_test(NAME test_install COMMAND ${CMAKE_COMMAND} -DBUILD=${PROJECT_BINARY_DIR}
    -DSRC=${PROJECT_SOURCE_DIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/install-check
    -DCC=${CMAKE_C_COMPILER} -P ${CMAKE_CURRENT_SOURCE_DIR}/install/run.cmake)
  set_tests_properties(test_install PROPERTIES LABELS cpu)
endif()
