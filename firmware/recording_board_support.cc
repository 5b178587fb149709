#include "firmware/recording_board_support.h"

#include "firmware/reset_record.h"

namespace boardlab::firmware {

void RecordingBoardSupport::TakeResetRecord() {
  BoardlabResetRecord& r = boardlab_reset_record;
  const bool valid = r.magic == BOARDLAB_RESET_RECORD_MAGIC &&
                     r.check == (BOARDLAB_RESET_RECORD_MAGIC ^ r.cause ^ r.pc) && r.cause >= 2 &&
                     r.cause <= 4;
  r.magic = 0;  // a later power-on, debugger or monitor reset is not this one
  if (!valid) return;
  cause_ = static_cast<link::ResetCause>(r.cause);
  has_record_ = cause_ != link::ResetCause::kSoftware;
  fault_.cause = cause_;
  fault_.r0 = r.r0;
  fault_.r1 = r.r1;
  fault_.r2 = r.r2;
  fault_.r3 = r.r3;
  fault_.r12 = r.r12;
  fault_.lr = r.lr;
  fault_.pc = r.pc;
  fault_.xpsr = r.xpsr;
  fault_.sp = r.sp;
  fault_.exc_return = r.exc_return;
  fault_.cfsr = r.cfsr;
  fault_.hfsr = r.hfsr;
  fault_.mmfar = r.mmfar;
  fault_.bfar = r.bfar;
}

void RecordingBoardSupport::KickWatchdog() {
  const uint32_t now = Milliseconds();
  if (now - last_kick_ms_ < kKickIntervalMs) return;
  last_kick_ms_ = now;
  FeedWatchdog();
}

bool RecordingBoardSupport::fault_record(link::Fault* fault) const {
  if (!has_record_) return false;
  *fault = fault_;
  return true;
}

void RecordingBoardSupport::Reset() {
  boardlab_record_and_reset(kBoardlabResetSoftware, nullptr, 0);
}

bool RecordingBoardSupport::CauseTestFault(link::TestFault fault) {
  switch (fault) {
    case link::TestFault::kNone:
      return false;
    case link::TestFault::kHang:
      SetWatchdogPeriod(kHangWatchdogMs);
      for (;;) {
      }
    case link::TestFault::kHangWithoutWatchdog:
      if (!StopWatchdog()) return false;  // unsupported on this board
      for (;;) {
      }
    case link::TestFault::kHardFault:
      __asm volatile("udf #0");  // undefined instruction: UsageFault, escalated to HardFault
      for (;;) {
      }
    case link::TestFault::kReset:
      Reset();
  }
  return false;
}

}  // namespace boardlab::firmware
