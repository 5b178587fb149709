#pragma once

// What every firmware board support shares (an505_board_support.h, rt700_board_support.h): the
// reset record read at boot (why the board started, a fault's registers; reset_record.h), the
// software reset, the test faults that need no board hardware, the watchdog kick thinned to one
// per kKickIntervalMs, and HELLO's facts. A board adds its UART, its clock and its watchdog.
//
//   class MyBoard : public RecordingBoardSupport {
//     void FeedWatchdog() override;                    // restart the count
//     void SetWatchdogPeriod(uint32_t ms) override;    // TestFault::kHang
//     bool StopWatchdog() override;                    // false: cannot be stopped
//   };

#include <stddef.h>
#include <stdint.h>

#include "runtime/link/board_support.h"

// HELLO's firmware version and build id (firmware/CMakeLists.txt defines both for the board-link
// ELFs; build_id.cmake makes the id).
#ifndef BOARDLAB_FIRMWARE_VERSION
#define BOARDLAB_FIRMWARE_VERSION "0.0.0"
#endif
#ifndef BOARDLAB_FIRMWARE_BUILD_ID
#define BOARDLAB_FIRMWARE_BUILD_ID "unknown"
#endif

namespace boardlab::firmware {

class RecordingBoardSupport : public link::BoardSupport {
 public:
  /// Watchdog period while running (kernels kick it; the longest shared model's longest kernel
  /// takes well under a second of QEMU time).
  static constexpr uint32_t kWatchdogMs = 8000;
  /// Watchdog period of TestFault::kHang, so that recovery tests do not wait kWatchdogMs.
  static constexpr uint32_t kHangWatchdogMs = 1000;
  /// Kicks closer together than this are skipped (the protocol loop asks for one per turn).
  static constexpr uint32_t kKickIntervalMs = 50;

  void KickWatchdog() override;
  link::ResetCause reset_cause() const override { return cause_; }
  bool fault_record(link::Fault* fault) const override;
  void Reset() override;
  bool CauseTestFault(link::TestFault fault) override;
  const link::BoardInfo& info() const override { return info_; }

 protected:
  ~RecordingBoardSupport() = default;

  /// Reads and clears the reset record (once, at boot, before anything can fault).
  void TakeResetRecord();
  virtual void FeedWatchdog() = 0;
  virtual void SetWatchdogPeriod(uint32_t ms) = 0;
  virtual bool StopWatchdog() = 0;

  link::BoardInfo info_;

 private:
  uint32_t last_kick_ms_ = 0;
  link::ResetCause cause_ = link::ResetCause::kPowerOn;
  bool has_record_ = false;
  link::Fault fault_;
};

}  // namespace boardlab::firmware
