# Decides whether the MPI parts are built (OVL_MPI = AUTO|ON|OFF): `ovl report --mpi` (the
# analyzer's analyzer/mpi/) and ovl-ddp's launch under mpirun (workloads/).
# Sets OVL_MPI_FOUND, OVL_MPI_WHY (why not, when not found), OVL_MPIEXEC (mpirun or mpiexec
# for the tests; may be empty) and, when found, the target MPI::MPI_C.
#
# FindMPI is asked only once the MPI compiler wrapper is known to name include folders that
# exist: a half-installed MPI (Debian's openmpi-bin without libopenmpi-dev) has a wrapper that
# names a missing folder, and FindMPI's own test build then fails the whole configure. AUTO
# then builds without MPI and says why; ON fails naming the problem; OFF looks for nothing.
set(OVL_MPI_FOUND FALSE)
set(OVL_MPI_WHY "")
set(OVL_MPIEXEC "")
if(OVL_MPI STREQUAL "OFF")
  set(OVL_MPI_WHY "OVL_MPI=OFF")
else()
  if(MPI_C_COMPILER)
    set(_ovl_mpicc "${MPI_C_COMPILER}")
  else()
    find_program(OVL_MPICC NAMES mpicc mpicc.openmpi mpicc.mpich)
    set(_ovl_mpicc "${OVL_MPICC}")
  endif()
  if(_ovl_mpicc)
    # Open MPI lists its include folders with -showme:incdirs; MPICH (and Open MPI) print the
    # whole compile line with -show, whose -I arguments are the same folders.
    execute_process(COMMAND ${_ovl_mpicc} -showme:incdirs OUTPUT_VARIABLE _ovl_mpi_inc
                    RESULT_VARIABLE _ovl_mpi_rc ERROR_QUIET TIMEOUT 20)
    if(_ovl_mpi_rc EQUAL 0)
      string(REPLACE " " ";" _ovl_mpi_inc "${_ovl_mpi_inc}")
    else()
      execute_process(COMMAND ${_ovl_mpicc} -show OUTPUT_VARIABLE _ovl_mpi_show
                      RESULT_VARIABLE _ovl_mpi_rc ERROR_QUIET TIMEOUT 20)
      string(REGEX MATCHALL "-I[^ \t\n]+" _ovl_mpi_inc "${_ovl_mpi_show}")
      string(REPLACE "-I" "" _ovl_mpi_inc "${_ovl_mpi_inc}")
    endif()
    foreach(dir ${_ovl_mpi_inc})
      string(STRIP "${dir}" dir)
      if(dir AND NOT IS_DIRECTORY "${dir}")
        string(CONCAT OVL_MPI_WHY "the MPI compiler wrapper ${_ovl_mpicc} names the include folder ${dir}, "
                      "which does not exist (MPI is half installed: on Debian install libopenmpi-dev, or libmpich-dev)")
        break()
      endif()
    endforeach()
  endif()
  if(NOT OVL_MPI_WHY)
    find_package(MPI QUIET COMPONENTS C)
    if(MPI_C_FOUND)
      set(OVL_MPI_FOUND TRUE)
      find_program(OVL_MPIEXEC_PROGRAM NAMES mpirun mpiexec HINTS ${MPIEXEC_EXECUTABLE})
      if(MPIEXEC_EXECUTABLE)
        set(OVL_MPIEXEC "${MPIEXEC_EXECUTABLE}")
      elseif(OVL_MPIEXEC_PROGRAM)
        set(OVL_MPIEXEC "${OVL_MPIEXEC_PROGRAM}")
      endif()
    elseif(_ovl_mpicc)
      set(OVL_MPI_WHY "FindMPI could not build a C program with ${_ovl_mpicc}")
    else()
      set(OVL_MPI_WHY "no MPI found (on Debian: apt-get install libopenmpi-dev openmpi-bin; ./bootstrap.sh does)")
    endif()
  endif()
  if(NOT OVL_MPI_FOUND AND OVL_MPI STREQUAL "ON")
    message(FATAL_ERROR "OVL_MPI=ON: MPI not usable: ${OVL_MPI_WHY}")
  endif()
endif()
if(OVL_MPI_FOUND)
  message(STATUS "MPI parts built (ovl report --mpi): ${MPI_C_LIBRARIES}; tests launch with '${OVL_MPIEXEC}'")
else()
  message(STATUS "MPI parts not built (ovl report --mpi): ${OVL_MPI_WHY}")
endif()
