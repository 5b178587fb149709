#pragma once

// The board-link builds' log hook (link_pal.cc, shared by every board): where rt_pal_emit_log sends
// runtime log lines. main_link.cc points it at BoardEndpoint::Log.

namespace boardlab::firmware {

/// `sink` (nullable) receives each log line: level (RtPalLogLevel) and text (valid during the
/// call only). `context` is passed through.
void SetLogSink(void (*sink)(void* context, int level, const char* text), void* context);

}  // namespace boardlab::firmware
