// Cortex-M33 start-up for the QEMU mps2-an505 board: the vector table and Reset_Handler.
//
// The core boots in the Secure state and reads word 0 (initial SP) and word 1 (reset vector) of
// the table at VTOR's reset value, the start of the code RAM (0x10000000, link.ld). Reset_Handler
// grants full access to the FPU coprocessors, because the runtime is compiled with
// -mfloat-abi=hard and the first VFP instruction would otherwise take a UsageFault, then hands
// over to newlib's crt0 (_start), which zeroes .bss, sets up semihosting, runs the C++
// constructors and main, and passes main's return value to exit() (the QEMU exit status).
//
// .data needs no copy loop here: QEMU's ELF loader places it straight into RAM. A flash-based
// board needs one (copy from LOADADDR(.data) to ADDR(.data)) before _start.

#include <stdint.h>

extern uint32_t __StackTop;
extern void _start(void);

void Reset_Handler(void);
void Default_Handler(void);

// Coprocessor Access Control Register (System Control Block).
#define BOARDLAB_SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)

void Reset_Handler(void) {
  // CP10 and CP11 (the FPU): full access from privileged and unprivileged code.
  BOARDLAB_SCB_CPACR |= 0xFu << 20;
  __asm volatile("dsb\n\tisb" ::: "memory");
  _start();
  for (;;) {
  }
}

// Any fault or unexpected interrupt: report over semihosting and stop QEMU with status 5, so
// a crash is told apart from the verdicts main returns (0, 1, 3, 4).
void Default_Handler(void) {
  static const char kMessage[] = "boardlab-firmware: fault or unexpected exception\n";
  // SYS_WRITE0 (0x04): write a NUL-terminated string to the debug console.
  register uint32_t op __asm("r0") = 0x04u;
  register const char* arg __asm("r1") = kMessage;
  __asm volatile("bkpt 0xAB" : "+r"(op) : "r"(arg) : "memory");
  // SYS_EXIT (0x18) with ADP_Stopped_ApplicationExit and status 5 (the 32-bit form takes the
  // reason code only, so use SYS_EXIT_EXTENDED, 0x20, with a parameter block).
  static uint32_t block[2] = {0x20026u, 5u};
  register uint32_t op2 __asm("r0") = 0x20u;
  register uint32_t* arg2 __asm("r1") = block;
  __asm volatile("bkpt 0xAB" : "+r"(op2) : "r"(arg2) : "memory");
  for (;;) {
  }
}

void NMI_Handler(void) __attribute__((weak, alias("Default_Handler")));
void HardFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void MemManage_Handler(void) __attribute__((weak, alias("Default_Handler")));
void BusFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void UsageFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SecureFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SVC_Handler(void) __attribute__((weak, alias("Default_Handler")));
void DebugMon_Handler(void) __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));

typedef void (*VectorEntry)(void);

// The 16 architectural entries; the firmware enables no device interrupts, so no IRQ entries.
__attribute__((section(".vectors"), used)) const VectorEntry kVectorTable[16] = {
    (VectorEntry)(uintptr_t)&__StackTop,  // initial main stack pointer
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    SecureFault_Handler,
    0,
    0,
    0,
    SVC_Handler,
    DebugMon_Handler,
    0,
    PendSV_Handler,
    SysTick_Handler,
};
