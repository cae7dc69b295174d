# Install the build tree BUILD into a fresh prefix under WORK, then build
# the consumer (tests/install/consumer) against it with find_package and
# with pkg-config, and run both. Fails on any step.
# cmake -DBUILD=... -DSRC=... -DWORK=... -DCC=... -P run.cmake
file(REMOVE_RECURSE ${WORK})
set(PREFIX ${WORK}/prefix)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX})

# users see only the public headers
file(GLOB headers RELATIVE ${PREFIX}/include/tilestream ${PREFIX}/include/tilestream/*)
list(SORT headers)
if(NOT headers STREQUAL "tilestream.h;ts_base.h")
  message(FATAL_ERROR "include/tilestream holds: ${headers}")
endif()

# the man page (from the help texts) and shell completion are installed
file(GLOB_RECURSE man ${PREFIX}/tilestream.1)
file(GLOB_RECURSE bash_completion ${PREFIX}/*/bash-completion/completions/tilestream)
file(GLOB_RECURSE zsh_completion ${PREFIX}/*/zsh/site-functions/_tilestream)
if(NOT man OR NOT bash_completion OR NOT zsh_completion)
  message(FATAL_ERROR "missing under the prefix: man page '${man}', bash '${bash_completion}', zsh '${zsh_completion}'")
endif()
file(READ ${man} man_text)
if(NOT man_text MATCHES "\\-\\-replace\\-input" AND NOT man_text MATCHES "--replace-input")
  message(FATAL_ERROR "the man page lacks run's options")
endif()
run(bash -n ${bash_completion})
run(bash -c "source '${bash_completion}' && COMP_WORDS=('${PREFIX}/bin/tilestream' run --rep) COMP_CWORD=2 && _tilestream && echo \"\${COMPREPLY[*]}\"")
if(NOT OUT MATCHES "--replace-input")
  message(FATAL_ERROR "bash completion of 'run --rep' gave: ${OUT}")
endif()

# find_package
run(${CMAKE_COMMAND} -S ${SRC}/tests/install/consumer -B ${WORK}/cmake-build
    -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_C_COMPILER=${CC} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/cmake-build)
run(${WORK}/cmake-build/consumer)
message(STATUS "find_package consumer: ${OUT}")

# pkg-config, as a user links: `cc app.c $(pkg-config --cflags --libs tilestream)`
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG)
  message(STATUS "no pkg-config: that half skipped")
  return()
endif()
file(GLOB_RECURSE pc ${PREFIX}/*/tilestream.pc)
get_filename_component(pcdir "${pc}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pcdir})
run(${PKG_CONFIG} --cflags tilestream)
string(STRIP "${OUT}" cflags)
separate_arguments(cflags UNIX_COMMAND "${cflags}")
run(${PKG_CONFIG} --libs tilestream)
string(STRIP "${OUT}" libs)
separate_arguments(libs UNIX_COMMAND "${libs}")
run(${CC} -std=c11 ${cflags} ${SRC}/tests/install/consumer/main.c -o ${WORK}/pc-consumer ${libs})
run(${WORK}/pc-consumer)
message(STATUS "pkg-config consumer: ${OUT}")
