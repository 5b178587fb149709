#pragma once

/* The record a board keeps across a reset (in the .noinit section, which startup code does not
 * clear and QEMU's ELF loader does not rewrite): why the firmware restarted itself, and the
 * registers of the fault or of the code the watchdog interrupted. Written by the fault and NMI
 * handlers (link_faults.c) and by a requested reset, read once at boot by the board support,
 * which then clears it, so that a later power-on or monitor reset is not mistaken for it.
 * C, because the exception handlers that fill it are C. */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BOARDLAB_RESET_RECORD_MAGIC 0xB0A4D1A8u

/* Values of boardlab::link::ResetCause. */
enum {
  kBoardlabResetSoftware = 2,
  kBoardlabResetWatchdog = 3,
  kBoardlabResetFault = 4,
};

typedef struct {
  uint32_t magic;
  uint32_t cause;
  /* The exception frame the core stacked, then SP, EXC_RETURN and the fault status registers. */
  uint32_t r0, r1, r2, r3, r12, lr, pc, xpsr;
  uint32_t sp, exc_return;
  uint32_t cfsr, hfsr, mmfar, bfar;
  uint32_t check; /* magic ^ cause ^ pc: a record half-written or never written fails it */
} BoardlabResetRecord;

extern BoardlabResetRecord boardlab_reset_record;

/* Fills the record (`frame`: the stacked r0..xpsr, or null) and requests a system reset
 * (SYSRESETREQ). Never returns. */
void boardlab_record_and_reset(uint32_t cause, const uint32_t* frame, uint32_t exc_return)
    __attribute__((noreturn));

#ifdef __cplusplus
}
#endif
