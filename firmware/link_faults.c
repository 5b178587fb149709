/* Fault and watchdog handlers of the board-link builds (every board; only Armv8-M System Control
 * Block registers): instead of stopping, the firmware records what happened (reset_record.h)
 * and resets; after the reset the board support reads the record and the board link sends it
 * to the host as a FAULT message. The semihosting build keeps startup.c's handler (message and
 * exit status 5), because there the QEMU process is the board and ends with the run. These
 * strong definitions replace the startup files' weak aliases.
 *
 * Watchdogs: an505's Secure CMSDK watchdog raises NMI at its first expiry (NMI_Handler); the
 * RT700's WWDT0 raises its warning interrupt shortly before it resets, which rt700_startup.c
 * routes to boardlab_watchdog_warning_handler. Both record the interrupted PC and reset at once. */

#include <stddef.h>
#include <stdint.h>

#include "firmware/reset_record.h"

#define SCB_AIRCR (*(volatile uint32_t*)0xE000ED0Cu)
#define SCB_CFSR (*(volatile uint32_t*)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t*)0xE000ED2Cu)
#define SCB_MMFAR (*(volatile uint32_t*)0xE000ED34u)
#define SCB_BFAR (*(volatile uint32_t*)0xE000ED38u)
#define AIRCR_VECTKEY (0x05FAu << 16)
#define AIRCR_SYSRESETREQ (1u << 2)

__attribute__((section(".noinit"))) BoardlabResetRecord boardlab_reset_record;

void boardlab_record_and_reset(uint32_t cause, const uint32_t* frame, uint32_t exc_return) {
  BoardlabResetRecord* r = &boardlab_reset_record;
  r->magic = 0;
  r->cause = cause;
  if (frame != NULL) {
    r->r0 = frame[0];
    r->r1 = frame[1];
    r->r2 = frame[2];
    r->r3 = frame[3];
    r->r12 = frame[4];
    r->lr = frame[5];
    r->pc = frame[6];
    r->xpsr = frame[7];
  } else {
    r->r0 = r->r1 = r->r2 = r->r3 = r->r12 = r->lr = r->pc = r->xpsr = 0;
  }
  r->sp = (uint32_t)(uintptr_t)frame;
  r->exc_return = exc_return;
  r->cfsr = cause == kBoardlabResetFault ? SCB_CFSR : 0;
  r->hfsr = cause == kBoardlabResetFault ? SCB_HFSR : 0;
  r->mmfar = cause == kBoardlabResetFault ? SCB_MMFAR : 0;
  r->bfar = cause == kBoardlabResetFault ? SCB_BFAR : 0;
  r->check = BOARDLAB_RESET_RECORD_MAGIC ^ cause ^ r->pc;
  r->magic = BOARDLAB_RESET_RECORD_MAGIC;
  __asm volatile("dsb" ::: "memory");
  SCB_AIRCR = AIRCR_VECTKEY | AIRCR_SYSRESETREQ;
  __asm volatile("dsb" ::: "memory");
  for (;;) {
  }
}

/* The stacked frame is on the stack that was in use: bit 2 of EXC_RETURN (in LR on entry)
 * selects PSP over MSP. r0 = cause, r1 = frame, r2 = EXC_RETURN. */
#define BOARDLAB_RECORD_HANDLER(name, cause) \
  __attribute__((naked)) void name(void) {   \
    __asm volatile(                          \
        "tst lr, #4\n\t"                     \
        "ite eq\n\t"                         \
        "mrseq r1, msp\n\t"                  \
        "mrsne r1, psp\n\t"                  \
        "mov r2, lr\n\t"                     \
        "movs r0, #" #cause                  \
        "\n\t"                               \
        "b boardlab_record_and_reset\n\t");  \
  }

_Static_assert(kBoardlabResetFault == 4 && kBoardlabResetWatchdog == 3,
               "the handlers below pass the causes as literals");

BOARDLAB_RECORD_HANDLER(HardFault_Handler, 4)
BOARDLAB_RECORD_HANDLER(MemManage_Handler, 4)
BOARDLAB_RECORD_HANDLER(BusFault_Handler, 4)
BOARDLAB_RECORD_HANDLER(UsageFault_Handler, 4)
BOARDLAB_RECORD_HANDLER(SecureFault_Handler, 4)
BOARDLAB_RECORD_HANDLER(NMI_Handler, 3)
BOARDLAB_RECORD_HANDLER(boardlab_watchdog_warning_handler, 3)
