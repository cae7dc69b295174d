# cmake --install puts the library, its public headers (include/tilestream/),
# a CMake package (find_package(tilestream) -> tilestream::tilestream) and a
# pkg-config file (tilestream.pc) under the prefix. The library is static:
# the package finds its dependencies again, and pkg-config lists them in
# Requires and Libs, so that `cc app.c $(pkg-config --cflags --libs
# tilestream)` links without --static.
include(CMakePackageConfigHelpers)

install(TARGETS tilestream EXPORT tilestreamTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${TS_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilestream)

set(TS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilestream)
install(EXPORT tilestreamTargets NAMESPACE tilestream:: DESTINATION ${TS_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tilestreamConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tilestreamConfig.cmake INSTALL_DESTINATION ${TS_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tilestreamConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tilestreamConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tilestreamConfigVersion.cmake
        DESTINATION ${TS_CMAKE_DIR})

set(TS_PC_LIBS_PRIVATE "-lpthread -lm")
if(TS_HAVE_CUDA)
  string(APPEND TS_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
endif()
set(TS_PC_CFLAGS "")
foreach(def IN ITEMS STB CUDA NPP)
  if(TS_HAVE_${def})
    string(APPEND TS_PC_CFLAGS " -DTS_HAVE_${def}=1")
  endif()
endforeach()
# prefix relative to the .pc file, so that cmake --install --prefix DIR works
set(TS_PC_PREFIX "\${pcfiledir}")
string(REPLACE "/" ";" TS_PC_DEPTH "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
foreach(part IN LISTS TS_PC_DEPTH)
  string(APPEND TS_PC_PREFIX "/..")
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/tilestream.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tilestream.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tilestream.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
