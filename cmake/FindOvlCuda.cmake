# Decides whether the CUDA parts are built (OVL_WITH_CUDA = AUTO|ON|OFF) and finds the
# toolkit pieces they need: CUPTI, NCCL, NVTX3 headers, cudart, cuBLAS and nvcc.
# Sets OVL_CUDA_FOUND, OVL_CUDA_ROOT, OVL_CUPTI_MAJOR and OVL_CUDA_MAJOR, imported targets
# ovl::cupti, ovl::nccl, ovl::cudart, ovl::cublas, and the include dirs OVL_CUDA_INCLUDE_DIR,
# OVL_NCCL_INCLUDE_DIR, OVL_NVTX_INCLUDE_DIR.
#
# Where it looks, in order: $CUDA_HOME, $CUDA_PATH, $NCCL_HOME; the NVIDIA pip wheels under
# OVL_CUDA_PIP_ROOT=<site-packages>/nvidia ({cu13,cu12,nccl,cuda_cupti,...}); /usr/local/cuda,
# /usr/cuda, /opt/cuda; then the wheels of the python3 on the PATH.
# Libraries are found under their plain names (libnccl.so) or, as wheels ship them, only
# versioned (libnccl.so.2, libcupti.so.13, libcudart.so.13, libcublas.so.13).
#
# AUTO builds the CUDA parts when every piece is found and otherwise says which are missing;
# ON fails the configure naming each missing piece; OFF looks for nothing.
set(OVL_CUDA_FOUND FALSE)
if(NOT OVL_WITH_CUDA STREQUAL "OFF")
  # Explicit places first, then wheels named by OVL_CUDA_PIP_ROOT, then the usual toolkit
  # folders, and last the wheels of the python3 on the PATH (a fallback: its CUDA may not be
  # the toolkit's).
  set(_ovl_cuda_hints "")
  foreach(var CUDA_HOME CUDA_PATH NCCL_HOME)
    if(DEFINED ENV{${var}})
      list(APPEND _ovl_cuda_hints "$ENV{${var}}")
    endif()
  endforeach()
  if(NOT DEFINED OVL_CUDA_PIP_ROOT AND DEFINED ENV{OVL_CUDA_PIP_ROOT})
    set(OVL_CUDA_PIP_ROOT "$ENV{OVL_CUDA_PIP_ROOT}")
  endif()
  set(_ovl_pip_roots "")
  if(DEFINED OVL_CUDA_PIP_ROOT)
    list(APPEND _ovl_pip_roots "${OVL_CUDA_PIP_ROOT}")
  endif()
  set(_ovl_wheel_dirs cu13 cu12 nccl cuda_cupti cuda_runtime cublas nvtx cuda_nvcc)
  foreach(root ${_ovl_pip_roots})
    foreach(sub ${_ovl_wheel_dirs})
      list(APPEND _ovl_cuda_hints "${root}/${sub}")
    endforeach()
  endforeach()
  list(APPEND _ovl_cuda_hints /usr/local/cuda /usr/cuda /opt/cuda)
  if(NOT DEFINED OVL_CUDA_PIP_ROOT)
    find_program(OVL_PYTHON NAMES python3 python)
    if(OVL_PYTHON)
      execute_process(COMMAND ${OVL_PYTHON} -c "import nvidia, sys; sys.stdout.write(list(nvidia.__path__)[0])"
                      OUTPUT_VARIABLE _ovl_pip RESULT_VARIABLE _ovl_pip_rc ERROR_QUIET TIMEOUT 20)
      if(_ovl_pip_rc EQUAL 0 AND IS_DIRECTORY "${_ovl_pip}")
        foreach(sub ${_ovl_wheel_dirs})
          list(APPEND _ovl_cuda_hints "${_ovl_pip}/${sub}")
        endforeach()
      endif()
    endif()
  endif()
  set(_ovl_lib_suffixes lib64 lib extras/CUPTI/lib64 targets/x86_64-linux/lib)
  set(_ovl_inc_suffixes include extras/CUPTI/include targets/x86_64-linux/include)

  find_path(OVL_CUDA_INCLUDE_DIR cupti.h HINTS ${_ovl_cuda_hints} PATH_SUFFIXES ${_ovl_inc_suffixes})
  find_path(OVL_NCCL_INCLUDE_DIR nccl.h HINTS ${_ovl_cuda_hints} PATH_SUFFIXES include)
  find_path(OVL_NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${_ovl_cuda_hints} PATH_SUFFIXES ${_ovl_inc_suffixes})
  find_program(OVL_NVCC nvcc HINTS ${_ovl_cuda_hints} PATH_SUFFIXES bin)

  # The major versions name the versioned libraries to accept (and libovl's CUPTI soname):
  # DEFINE's value in HEADER divided by DIVISOR, or "" when the header is not there.
  function(_ovl_header_major out header define divisor)
    set(major "")
    if(OVL_CUDA_INCLUDE_DIR AND EXISTS "${OVL_CUDA_INCLUDE_DIR}/${header}")
      file(STRINGS "${OVL_CUDA_INCLUDE_DIR}/${header}" v REGEX "^#define ${define} [0-9]+")
      string(REGEX REPLACE ".* ([0-9]+)$" "\\1" v "${v}")
      math(EXPR major "${v} / ${divisor}")
    endif()
    set(${out} "${major}" PARENT_SCOPE)
  endfunction()
  _ovl_header_major(OVL_CUPTI_MAJOR cupti_version.h CUPTI_API_VERSION 10000)
  _ovl_header_major(OVL_CUDA_MAJOR cuda.h CUDA_VERSION 1000)

  find_library(OVL_CUPTI_LIBRARY NAMES cupti libcupti.so.${OVL_CUPTI_MAJOR}
               HINTS ${_ovl_cuda_hints} PATH_SUFFIXES ${_ovl_lib_suffixes})
  find_library(OVL_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_ovl_cuda_hints} PATH_SUFFIXES ${_ovl_lib_suffixes})
  find_library(OVL_CUDART_LIBRARY NAMES cudart libcudart.so.${OVL_CUDA_MAJOR}
               HINTS ${_ovl_cuda_hints} PATH_SUFFIXES ${_ovl_lib_suffixes})
  find_library(OVL_CUBLAS_LIBRARY NAMES cublas libcublas.so.${OVL_CUDA_MAJOR}
               HINTS ${_ovl_cuda_hints} PATH_SUFFIXES ${_ovl_lib_suffixes})

  set(_ovl_missing "")
  foreach(pair "OVL_CUDA_INCLUDE_DIR:cupti.h" "OVL_NCCL_INCLUDE_DIR:nccl.h" "OVL_NVTX_INCLUDE_DIR:nvtx3/nvToolsExt.h"
               "OVL_CUPTI_LIBRARY:libcupti.so" "OVL_NCCL_LIBRARY:libnccl.so" "OVL_CUDART_LIBRARY:libcudart.so"
               "OVL_CUBLAS_LIBRARY:libcublas.so" "OVL_NVCC:nvcc" "OVL_CUPTI_MAJOR:cupti_version.h")
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 var)
    list(GET pair 1 what)
    if(NOT ${var})
      list(APPEND _ovl_missing "${what}")
    endif()
  endforeach()

  if(NOT _ovl_missing)
    set(OVL_CUDA_FOUND TRUE)
    get_filename_component(OVL_CUDA_ROOT "${OVL_NVCC}" DIRECTORY)
    get_filename_component(OVL_CUDA_ROOT "${OVL_CUDA_ROOT}" DIRECTORY)
    foreach(lib cupti nccl cudart cublas)
      string(TOUPPER ${lib} LIBU)
      add_library(ovl::${lib} UNKNOWN IMPORTED)
      set_target_properties(ovl::${lib} PROPERTIES
        IMPORTED_LOCATION "${OVL_${LIBU}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${OVL_CUDA_INCLUDE_DIR};${OVL_NCCL_INCLUDE_DIR};${OVL_NVTX_INCLUDE_DIR}")
    endforeach()
    message(STATUS "CUDA parts: nvcc ${OVL_NVCC}, CUPTI ${OVL_CUPTI_MAJOR} ${OVL_CUPTI_LIBRARY}, NCCL ${OVL_NCCL_LIBRARY}")
  else()
    string(REPLACE ";" ", " _ovl_missing "${_ovl_missing}")
    if(OVL_WITH_CUDA STREQUAL "ON")
      message(FATAL_ERROR "OVL_WITH_CUDA=ON but the CUDA parts cannot be built: not found: ${_ovl_missing} "
                          "(looked in: ${_ovl_cuda_hints}; set CUDA_HOME, NCCL_HOME or OVL_CUDA_PIP_ROOT)")
    else()
      message(STATUS "CUDA parts not built (libovl.so, ovl-ddp, GPU tests): not found: ${_ovl_missing} "
                     "(set CUDA_HOME, NCCL_HOME or OVL_CUDA_PIP_ROOT; OVL_WITH_CUDA=ON makes this an error)")
    endif()
  endif()
endif()
