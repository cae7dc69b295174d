# The batch runner (pipeline/batch/batch.c): the memory budget on the CPU, and
# shrink on load (JPEG DCT scaling) against decoding whole.
ts_add_test(test_batch SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_batch.c LABELS cpu)
target_link_libraries(test_batch PRIVATE m)
# --gpus: two engines on one device (or one per device) from one queue give
# the same outputs as one engine; a stage line and a trace process per engine.
ts_add_test(test_batch_gpus SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_batch_gpus.c LABELS gpu)
target_link_libraries(test_batch_gpus PRIVATE m)
# Shrink on load: JPEG DCT-scaled decodes against decoding whole (size exact, PSNR bound).
ts_add_test(test_shrink SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_shrink.c LABELS cpu)
target_link_libraries(test_shrink PRIVATE m)
# nvJPEG against libjpeg-turbo (decode agreement, encode quality, metadata)
# and a mixed folder through --codec gpu and auto (pipeline/codec/codec_nvjpeg.c).
ts_add_test(test_nvjpeg SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_nvjpeg.c LABELS gpu)
target_include_directories(test_nvjpeg PRIVATE ${PROJECT_SOURCE_DIR}/pipeline)
target_link_libraries(test_nvjpeg PRIVATE m)
# The CPU half of GPU encoding: a finished stream written with EXIF, XMP and ICC.
ts_add_test(test_bitstream SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_bitstream.c LABELS cpu)
target_include_directories(test_bitstream PRIVATE ${PROJECT_SOURCE_DIR}/pipeline)
target_link_libraries(test_bitstream PRIVATE m)
