# ovl_schema_header(INPUT OUTPUT)
# Generates OUTPUT, a C header with the version and the columns of the trace schema INPUT
# (schema/ovl.sql), so that the writer and the reader take them from the one definition.
# The header is regenerated whenever INPUT changes.
function(ovl_schema_header input output)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -P ${CMAKE_SOURCE_DIR}/cmake/SchemaHeaderRun.cmake
    DEPENDS ${input} ${CMAKE_SOURCE_DIR}/cmake/SchemaHeaderRun.cmake
    COMMENT "Schema header from ${input}"
    VERBATIM)
endfunction()
