# cmake --install puts the libraries (libtilestream.a and libtilestream.so
# with its SONAME links), the public headers (include/tilestream/), a CMake
# package (find_package(tilestream) -> tilestream::tilestream, the static
# library, and tilestream::tilestream_shared) and a pkg-config file
# (tilestream.pc) under the prefix. pkg-config links the shared library,
# which names its own dependencies: `cc app.c $(pkg-config --cflags --libs
# tilestream)`. What the static library needs besides is in Requires.private
# and Libs.private (`pkg-config --static`).
include(CMakePackageConfigHelpers)

install(TARGETS tilestream tilestream_shared EXPORT tilestreamTargets
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

# Libs.private: what linking libtilestream.a takes besides libpng and
# libjpeg (Requires.private). Its CUDA objects are C++ (libstdc++) and call
# the CUDA runtime and the CUDA libraries the build found.
set(TS_PC_LIBS_PRIVATE "-lpthread -lm")
if(TS_HAVE_CUDA)
  string(APPEND TS_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR}")
  if(TS_HAVE_NVJPEG)
    string(APPEND TS_PC_LIBS_PRIVATE " -lnvjpeg")
  endif()
  if(TS_HAVE_NPP)
    string(APPEND TS_PC_LIBS_PRIVATE " -lnppif -lnppig -lnppicc -lnppitc")
    if(TARGET CUDA::nppidei)
      string(APPEND TS_PC_LIBS_PRIVATE " -lnppidei")
    endif()
    string(APPEND TS_PC_LIBS_PRIVATE " -lnppc")
  endif()
  string(APPEND TS_PC_LIBS_PRIVATE " -lcudart -lstdc++")
endif()
set(TS_PC_CFLAGS "")
foreach(def IN ITEMS STB CUDA NVJPEG NPP)
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
