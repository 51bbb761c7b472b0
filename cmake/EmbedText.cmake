# ovl_embed_text(INPUT SYMBOL OUTPUT)
# Generates OUTPUT, a C file defining `const char SYMBOL[]` with the bytes of INPUT, so
# binaries carry files such as schema/ovl.sql without anyone copying them by hand.
# The file is regenerated whenever INPUT changes.
function(ovl_embed_text input symbol output)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DSYMBOL=${symbol} -DOUTPUT=${output}
            -P ${CMAKE_SOURCE_DIR}/cmake/EmbedTextRun.cmake
    DEPENDS ${input} ${CMAKE_SOURCE_DIR}/cmake/EmbedTextRun.cmake
    COMMENT "Embedding ${input}"
    VERBATIM)
endfunction()
