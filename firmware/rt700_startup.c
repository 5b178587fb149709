/* Cortex-M33 start-up for the rt700 board-link firmware (MIMXRT798S core 0): the vector table and
 * Reset_Handler, without newlib's crt0 (the ELF is linked with -nostartfiles).
 *
 * A debugger (LinkServer, pyOCD, J-Link: firmware/README.md) loads the ELF into SRAM and starts
 * Reset_Handler with the boot ROM's VTOR and stack still in place, so Reset_Handler points VTOR
 * at this table and sets MSP and MSPLIM itself, grants the FPU (CP10/CP11: the runtime is built
 * with -mfloat-abi=hard), copies .data from its load address when that differs (an image
 * programmed to flash), zeroes .bss (never .noinit: the reset record), runs the C++ constructors
 * and calls main, which does not return.
 *
 * Interrupts: the firmware polls its UART; only the watchdog's warning interrupt (WWDT0, IRQ 42)
 * is enabled, and it goes to boardlab_watchdog_warning_handler (link_faults.c). Every other entry
 * is Default_Handler, which spins until the watchdog resets the board with the PC recorded. */

#include <stdint.h>

extern uint32_t __StackTop;
extern uint32_t __StackLimit;
extern uint32_t __data_load__;
extern uint32_t __data_start__;
extern uint32_t __data_end__;
extern uint32_t __bss_start__;
extern uint32_t __bss_end__;
extern void (*__preinit_array_start[])(void);
extern void (*__preinit_array_end[])(void);
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);
extern int main(void);

void Reset_Handler(void);
void Default_Handler(void);

/* What crtbegin.o (not linked: -nostartfiles) defines for an executable: the handle C++ static
 * destructors register with __cxa_atexit. They never run (main does not return). */
void* __dso_handle = 0;
void boardlab_watchdog_warning_handler(void);

#define BOARDLAB_SCB_VTOR (*(volatile uint32_t*)0xE000ED08u)
#define BOARDLAB_SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)
#define BOARDLAB_WWDT0_IRQ 42

/* The stack is set before anything else touches it, so these run without one of their own. */
__attribute__((naked, noreturn)) void Reset_Handler(void) {
  __asm volatile(
      "cpsid i\n\t"
      "ldr r0, =__StackTop\n\t"
      "msr msp, r0\n\t"
      "ldr r0, =__StackLimit\n\t"
      "msr msplim, r0\n\t"
      "b boardlab_rt700_start\n\t");
}

static void CopyWords(uint32_t* dst, const uint32_t* src, const uint32_t* end) {
  while (dst < end) *dst++ = *src++;
}

static void ZeroWords(uint32_t* dst, const uint32_t* end) {
  while (dst < end) *dst++ = 0;
}

void boardlab_rt700_start(void) __attribute__((noreturn, used));
void boardlab_rt700_start(void) {
  extern void (*const boardlab_rt700_vectors[])(void);
  BOARDLAB_SCB_VTOR = (uint32_t)(uintptr_t)boardlab_rt700_vectors;
  BOARDLAB_SCB_CPACR |= 0xFu << 20;
  __asm volatile("dsb\n\tisb" ::: "memory");
  if (&__data_load__ != &__data_start__) CopyWords(&__data_start__, &__data_load__, &__data_end__);
  ZeroWords(&__bss_start__, &__bss_end__);
  for (void (**f)(void) = __preinit_array_start; f < __preinit_array_end; ++f) (*f)();
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  main();
  for (;;) {
  }
}

void Default_Handler(void) {
  for (;;) {
  }
}

void NMI_Handler(void) __attribute__((weak, alias("Default_Handler")));
void HardFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void MemManage_Handler(void) __attribute__((weak, alias("Default_Handler")));
void BusFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void UsageFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SecureFault_Handler(void) __attribute__((weak, alias("Default_Handler")));

typedef void (*VectorEntry)(void);

/* 16 architectural entries and 128 device interrupts (the RT700 core 0 uses fewer; the spare
 * entries cost 4 bytes each). Aligned for VTOR: 144 entries round up to 1 KB. */
#define BOARDLAB_NUM_IRQS 128
__attribute__((section(".vectors"), used, aligned(1024)))
const VectorEntry boardlab_rt700_vectors[16 + BOARDLAB_NUM_IRQS] = {
    [0] = (VectorEntry)(uintptr_t)&__StackTop,
    [1] = Reset_Handler,
    [2] = NMI_Handler,
    [3] = HardFault_Handler,
    [4] = MemManage_Handler,
    [5] = BusFault_Handler,
    [6] = UsageFault_Handler,
    [7] = SecureFault_Handler,
    [11] = Default_Handler, /* SVC */
    [12] = Default_Handler, /* DebugMon */
    [14] = Default_Handler, /* PendSV */
    [15] = Default_Handler, /* SysTick */
    [16 ... 16 + BOARDLAB_WWDT0_IRQ - 1] = Default_Handler,
    [16 + BOARDLAB_WWDT0_IRQ] = boardlab_watchdog_warning_handler,
    [16 + BOARDLAB_WWDT0_IRQ + 1 ... 16 + BOARDLAB_NUM_IRQS - 1] = Default_Handler,
};
