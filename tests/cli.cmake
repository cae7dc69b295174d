# The command line end to end on samples/ and tests/data/bad.
add_test(NAME test_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli.sh $<TARGET_FILE:tilestream_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli PROPERTIES LABELS cpu)
# BMP/TGA/HDR output exists only in builds with stb_image_write (TS_STB).
set_tests_properties(test_cli PROPERTIES ENVIRONMENT "TS_TEST_STB=${TS_HAVE_STB}")
# Faults on disk in the middle of a batch (file-size limit, output folders, inputs going away).
add_test(NAME test_cli_faults COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli_faults.sh $<TARGET_FILE:tilestream_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli_faults PROPERTIES LABELS cpu)
# What users expect of a command line: options, checks before
# work, refusals named, names, file lists, shards, progress, Ctrl-C, reports.
add_executable(json_check ${CMAKE_CURRENT_LIST_DIR}/json_check.c)
target_compile_options(json_check PRIVATE ${TS_C_WARNINGS})
add_test(NAME test_cli_ux COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli_ux.sh $<TARGET_FILE:tilestream_cli>
         ${PROJECT_SOURCE_DIR} $<TARGET_FILE:json_check>)
set_tests_properties(test_cli_ux PROPERTIES LABELS cpu ENVIRONMENT "TS_TEST_STB=${TS_HAVE_STB}")
# Nothing lost, nothing outside OUTDIR: other inputs, templates, links, FIFOs, signals, stale temporaries.
add_test(NAME test_cli_safety COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli_safety.sh $<TARGET_FILE:tilestream_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli_safety PROPERTIES LABELS cpu)
# The thumbnail job: fit inside, cover, pad, stretch, percentages, crop and pad, against ImageMagick where installed.
add_test(NAME test_cli_thumbnails COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli_thumbnails.sh $<TARGET_FILE:tilestream_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli_thumbnails PROPERTIES LABELS cpu)
# --device auto: the CPU at once, the GPU when it has started; a job that ends first does not wait for it.
add_test(NAME test_cli_backends COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli_backends.sh $<TARGET_FILE:tilestream_cli>
         ${PROJECT_SOURCE_DIR} $<TARGET_FILE:json_check>)
set_tests_properties(test_cli_backends PROPERTIES LABELS cpu)
# With a GPU: a mixed --device auto job writes each image as its backend's pure run does.
add_test(NAME test_gpu_backends COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_gpu_backends.sh $<TARGET_FILE:tilestream_cli>
         ${PROJECT_SOURCE_DIR} $<TARGET_FILE:json_check>)
set_tests_properties(test_gpu_backends PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
