# Writes OUT, a header defining BOARDLAB_FIRMWARE_BUILD_ID: the first 16 hex digits of a SHA-256
# over the SHA-256 of each file listed in LIST (a CMake list in a file). The header is rewritten
# only when the id changes, so an unchanged firmware is not recompiled.
#
#   cmake -DLIST=sources.txt -DOUT=firmware_build_id.h -P build_id.cmake
file(READ ${LIST} files)
set(hashes "")
foreach(f IN LISTS files)
  file(SHA256 ${f} h)
  string(APPEND hashes "${h}\n")
endforeach()
string(SHA256 id "${hashes}")
string(SUBSTRING ${id} 0 16 id)
file(WRITE ${OUT}.tmp "#define BOARDLAB_FIRMWARE_BUILD_ID \"${id}\"\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
