# CMake toolchain file: bare-metal Cortex-M33 (Armv8-M Mainline, single-precision FPU) with the
# Arm GNU toolchain (arm-none-eabi-gcc + newlib). STYLE.md rule 13: the runtime must build with
# no exceptions, no RTTI and no unwind tables.
#
#   cmake -S firmware -B build-fw -DCMAKE_TOOLCHAIN_FILE=firmware/cortex-m33.cmake

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m33)

set(BOARDLAB_ARM_PREFIX arm-none-eabi- CACHE STRING "Prefix of the cross tools")
set(CMAKE_C_COMPILER ${BOARDLAB_ARM_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${BOARDLAB_ARM_PREFIX}g++)
set(CMAKE_ASM_COMPILER ${BOARDLAB_ARM_PREFIX}gcc)
set(CMAKE_OBJCOPY ${BOARDLAB_ARM_PREFIX}objcopy CACHE FILEPATH "")
set(CMAKE_SIZE ${BOARDLAB_ARM_PREFIX}size CACHE FILEPATH "")

# try_compile cannot link a bare-metal executable without our linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(BOARDLAB_M33_FLAGS "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16")
set(CMAKE_C_FLAGS_INIT "${BOARDLAB_M33_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT
    "${BOARDLAB_M33_FLAGS} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-unwind-tables -fno-asynchronous-unwind-tables -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${BOARDLAB_M33_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${BOARDLAB_M33_FLAGS} -Wl,--gc-sections")

# Host programs (flatc) are found on the host; headers and libraries only in the sysroot.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
