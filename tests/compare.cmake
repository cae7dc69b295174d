# What `tilestream compare` writes (heat maps, the HTML page, JSON), made
# from CPU-computed images: no device needed.
ts_add_test(test_compare_report SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compare_report.c
            ${PROJECT_SOURCE_DIR}/app/compare_report.c LABELS cpu)
target_include_directories(test_compare_report PRIVATE ${PROJECT_SOURCE_DIR}/app)
