# The CPU reference ops and op geometry (kernels/<family>/ref_*.c, kernels/geometry.c).
ts_add_test(test_ref_point SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ref_point.c LABELS cpu)
ts_add_test(test_ref_orient SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ref_orient.c LABELS cpu)
ts_add_test(test_ref_conv SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ref_conv.c LABELS cpu)
ts_add_test(test_ref_sample SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ref_sample.c LABELS cpu)
ts_add_test(test_ref_regions SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ref_regions.c LABELS cpu)
# Shrinking quality of every interpolation (zone plate, sample photos)
# against a double-precision Lanczos-3 reference downscale.
ts_add_test(test_sample_quality SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sample_quality.c LABELS cpu)
