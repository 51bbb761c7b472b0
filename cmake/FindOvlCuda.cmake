# Decides whether the CUDA parts are built (OVL_WITH_CUDA = AUTO|ON|OFF) and finds the
# toolkit pieces they need: CUPTI, NCCL, NVTX3 headers, cudart and cuBLAS.
# Sets OVL_CUDA_FOUND and OVL_CUDA_ROOT plus imported targets ovl::cupti, ovl::nccl,
# ovl::cudart, ovl::cublas and the include dir OVL_CUDA_INCLUDE_DIR.
set(OVL_CUDA_FOUND FALSE)
if(NOT OVL_WITH_CUDA STREQUAL "OFF")
  set(_ovl_cuda_hints "")
  if(DEFINED ENV{CUDA_HOME})
    list(APPEND _ovl_cuda_hints "$ENV{CUDA_HOME}")
  endif()
  if(DEFINED ENV{CUDA_PATH})
    list(APPEND _ovl_cuda_hints "$ENV{CUDA_PATH}")
  endif()
  list(APPEND _ovl_cuda_hints /usr/local/cuda /usr/cuda /opt/cuda)

  find_path(OVL_CUDA_INCLUDE_DIR cupti.h HINTS ${_ovl_cuda_hints}
            PATH_SUFFIXES include extras/CUPTI/include)
  find_path(OVL_NCCL_INCLUDE_DIR nccl.h HINTS ${_ovl_cuda_hints} PATH_SUFFIXES include)
  find_path(OVL_NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${_ovl_cuda_hints} PATH_SUFFIXES include)
  find_library(OVL_CUPTI_LIBRARY cupti HINTS ${_ovl_cuda_hints}
               PATH_SUFFIXES lib64 lib extras/CUPTI/lib64)
  find_library(OVL_NCCL_LIBRARY nccl HINTS ${_ovl_cuda_hints} PATH_SUFFIXES lib64 lib)
  find_library(OVL_CUDART_LIBRARY cudart HINTS ${_ovl_cuda_hints} PATH_SUFFIXES lib64 lib)
  find_library(OVL_CUBLAS_LIBRARY cublas HINTS ${_ovl_cuda_hints} PATH_SUFFIXES lib64 lib)
  find_program(OVL_NVCC nvcc HINTS ${_ovl_cuda_hints} PATH_SUFFIXES bin)

  if(OVL_CUDA_INCLUDE_DIR AND OVL_NCCL_INCLUDE_DIR AND OVL_NVTX_INCLUDE_DIR AND
     OVL_CUPTI_LIBRARY AND OVL_NCCL_LIBRARY AND OVL_CUDART_LIBRARY AND OVL_CUBLAS_LIBRARY AND OVL_NVCC)
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
  elseif(OVL_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "OVL_WITH_CUDA=ON but the CUDA toolkit with CUPTI, NCCL, NVTX3, cudart, "
                        "cuBLAS and nvcc was not found (set CUDA_HOME)")
  else()
    message(STATUS "CUDA toolkit with CUPTI and NCCL not found: building the analyzer only")
  endif()
endif()
