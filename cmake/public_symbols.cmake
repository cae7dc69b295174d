# ts_public_symbols(OUT HEADER...): the functions the public headers declare
# (`ts_name(` after a space or a `*`), sorted. The shared library exports
# these and nothing else (CMakeLists.txt), and test_install checks that it
# does (tests/install/run.cmake): a library user sees the API, not the
# internals (tsk_*, cpu_*, the C++ of the kernels) whose names could clash.
function(ts_public_symbols out)
  set(names)
  foreach(header ${ARGN})
    file(READ ${header} text)
    string(REGEX MATCHALL "[ *]ts_[a-z0-9_]+\\(" found "${text}")
    foreach(f ${found})
      string(REGEX REPLACE "^[ *](ts_[a-z0-9_]+)\\($" "\\1" name "${f}")
      list(APPEND names ${name})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(SORT names)
  set(${out} ${names} PARENT_SCOPE)
endfunction()
