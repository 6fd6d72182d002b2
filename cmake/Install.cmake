# `cmake --install`: libdreduce, its public headers (include/dreduce.h, include/dreduce/), the dreduce program, a
# CMake package (find_package(dreduce) -> dreduce::dreduce) and a pkg-config file (pkg-config --cflags --libs dreduce).
include(CMakePackageConfigHelpers)
if(DREDUCE_SANITIZE OR DREDUCE_FUZZ)
  return() # instrumented builds are for testing here, not for installing (their runtime objects are not exported)
endif()

install(TARGETS libdreduce EXPORT dreduceTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS dreduce RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES include/dreduce.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/dreduce/types.h include/dreduce/status.h ${PROJECT_BINARY_DIR}/include/dreduce/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dreduce)

set(DR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dreduce)
install(EXPORT dreduceTargets NAMESPACE dreduce:: DESTINATION ${DR_CMAKE_DIR})
configure_package_config_file(cmake/dreduceConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/dreduceConfig.cmake
                              INSTALL_DESTINATION ${DR_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/dreduceConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/dreduceConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/dreduceConfigVersion.cmake
        DESTINATION ${DR_CMAKE_DIR})

# pkg-config: the MPI and CUDA runtime flags are those this build used (a consumer compiles with mpicc, or adds them).
set(DR_PC_CFLAGS "")
foreach(dir ${CUDAToolkit_INCLUDE_DIRS})
  string(APPEND DR_PC_CFLAGS " -I${dir}")
endforeach()
set(DR_CUDART_DIR ${CUDAToolkit_LIBRARY_DIR})
set(DR_PC_REQUIRES "")
# The pkg-config module of the MPI this build used: ompi-c (Open MPI) or mpich, where the MPI ships one.
set(dr_pc_mpi "")
if(DR_MPI_FLAVOR STREQUAL openmpi)
  set(dr_pc_mpi ompi-c)
elseif(DR_MPI_FLAVOR STREQUAL mpich)
  set(dr_pc_mpi mpich)
endif()
if(PkgConfig_FOUND AND dr_pc_mpi)
  pkg_check_modules(DR_PC_MPI QUIET ${dr_pc_mpi})
  if(DR_PC_MPI_FOUND)
    set(DR_PC_REQUIRES ${dr_pc_mpi})
  endif()
endif()
configure_file(cmake/dreduce.pc.in ${CMAKE_CURRENT_BINARY_DIR}/dreduce.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/dreduce.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
