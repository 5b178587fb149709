#pragma once

// What the board-link firmware (main_link.cc) needs from a board beyond link::BoardSupport: the
// board started, and how it wants its memory shared out. One implementation per board ELF:
// an505_board_support.cc (QEMU mps2-an505) and rt700_board_support.cc (MIMXRT700-EVK).
//
//   LinkBoard board = StartLinkBoard();   // reads the reset record, starts UART and watchdog
//   uint8_t* cache = BoardMemory::Get().Reserve(board.cache_bytes);

#include <stddef.h>
#include <stdint.h>

#include "runtime/link/board_support.h"
#include "runtime/profiling/etdump/clock_record.h"

namespace boardlab::firmware {

struct LinkBoard {
  link::BoardSupport* support = nullptr;
  size_t cache_bytes = 0;      // the artifact cache, taken from the bulk pool for good
  size_t job_bytes = 0;        // inputs and expected outputs of the next RUN, likewise
  uint8_t receive_window = 1;  // frames the host may send ahead (the reorder buffer's slots)
  // The model slot (docs/board-protocol.md, MODEL_SLOT): memory the flash tool writes a model
  // into, which the board checks and runs in place. Null: the board has none.
  const uint8_t* model_slot = nullptr;
  size_t model_slot_bytes = 0;
  runtime::etdump::ClockRecord clock;  // what the ETDump's ticks count
};

/// Starts the board (once; never fails: a board that cannot talk cannot report either).
LinkBoard StartLinkBoard();

}  // namespace boardlab::firmware
