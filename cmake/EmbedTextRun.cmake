# Script mode helper for ovl_embed_text: writes the bytes of INPUT as a hex C array.
file(READ "${INPUT}" content HEX)
string(LENGTH "${content}" hexlen)
math(EXPR nbytes "${hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${content}")
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}"
  "/* Generated from ${name} by cmake/EmbedTextRun.cmake; do not edit. */\n"
  "#include <stddef.h>\n"
  "const char ${SYMBOL}[${nbytes} + 1] = {\n${body}0x00};\n"
  "const size_t ${SYMBOL}_len = ${nbytes};\n")
