// Logging and abort of the board-link builds (every board): runtime log lines go to the host
// as LOG messages (through the sink main_link.cc installs; dropped without a session), and a
// runtime abort resets the board with a fault record, which the host receives as a FAULT after
// the reset. Strong definitions of the rt_pal_* symbols runtime/platform/minimal.cc leaves weak.

#include <stdio.h>

#include "firmware/link_pal.h"
#include "firmware/reset_record.h"
#include "runtime/platform/platform.h"

namespace boardlab::firmware {
namespace {

void (*g_sink)(void*, int, const char*) = nullptr;
void* g_sink_context = nullptr;

}  // namespace

void SetLogSink(void (*sink)(void* context, int level, const char* text), void* context) {
  g_sink = sink;
  g_sink_context = context;
}

}  // namespace boardlab::firmware

extern "C" {

void rt_pal_emit_log(RtPalLogLevel level, const char* file, int line, const char* message) {
  using boardlab::firmware::g_sink;
  if (g_sink == nullptr) return;
  static char text[256];
  if (file != nullptr) {
    snprintf(text, sizeof(text), "%s:%d] %s", file, line, message);
  } else {
    snprintf(text, sizeof(text), "%s", message);
  }
  g_sink(boardlab::firmware::g_sink_context, static_cast<int>(level), text);
}

void rt_pal_abort(void) {
  rt_pal_emit_log(kRtPalLogFatal, nullptr, 0, "boardlab-firmware: runtime abort");
  boardlab_record_and_reset(kBoardlabResetFault, nullptr, 0);
}

}  // extern "C"
