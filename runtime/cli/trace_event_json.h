#pragma once

// A timeline (timeline.h) as a Chrome trace: the JSON object form of the Trace Event Format,
// which the Perfetto UI and chrome://tracing open. Fields used (docs/profile-views.md lists them):
//
//   {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}
//   metadata events  {"ph": "M", "pid": 1, ["tid"], "name": "process_name" | "process_labels" |
//                     "thread_name" | "thread_sort_index", "args": {"name" | "labels" |
//                     "sort_index": ...}}
//   complete events  {"ph": "X", "pid": 1, "tid": lane + 1, "name", "cat", "ts", "dur", "args"}
//
// One process (pid 1) for the run, one thread per lane shown (tid 1 Cortex-M33, 2 NPU, 3 weight
// DMA), one complete event per slice. "ts"/"dur" are microseconds when the clock's ticks are a
// time (TraceUnit); on QEMU's instruction count and on unknown clocks they are that count, and
// the process name, its labels and otherData say so. "displayTimeUnit" ("ns") is written only
// for microseconds. Slice args: instruction, ops (TFLite operator indices), op_name, layer, macs,
// ran_on, clock, ticks, cycles / instructions / us (when known), debug_id, kernel, and for weight
// prefetches bytes and slot.
//
//   nlohmann::json trace = TraceEventJson(timeline, "kws.etdp");
//   out << trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

#include <string>

#include "nlohmann/json.hpp"
#include "runtime/cli/timeline.h"

namespace boardlab::run {

/// `source` names what was profiled (a file, a job) in the process name and otherData.
nlohmann::json TraceEventJson(const Timeline& timeline, const std::string& source);

/// The slice's facts as the trace's args (also what the SVG's tooltips say).
nlohmann::json SliceArgs(const Timeline& timeline, const TimelineSlice& slice);

}  // namespace boardlab::run
