#pragma once

// Checks for the timeline views boardlab writes (runtime/cli/timeline.h), written from public
// definitions rather than from our own writer: the Trace Event Format's rules for the JSON
// object form (the fields of complete "X" and metadata "M" events), and SVG parsed as XML by
// libxml2, then drawn by rsvg-convert (librsvg).
//
//   absl::StatusOr<TraceLanes> lanes = ReadTrace(trace_json);   // format errors -> the status
//   EXPECT_TRUE(SlicesDoNotOverlap(*lanes));
//   absl::StatusOr<SvgSlices> svg = ReadSvgSlices(svg_text);

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace boardlab::testing {

/// One complete ("X") event of a trace.
struct TraceSlice {
  std::string name;
  std::string category;
  double ts = 0;
  double dur = 0;
  nlohmann::json args;
};

/// A trace's lanes: the thread names of its metadata events, the X events of each thread in
/// file order, and its otherData.
struct TraceLanes {
  std::map<int64_t, std::string> thread_names;  // tid -> name
  std::string process_name;
  std::map<int64_t, std::vector<TraceSlice>> slices;  // tid -> X events
  nlohmann::json other_data;
  bool has_display_time_unit = false;
};

/// Parses a Chrome trace (JSON object form) and checks every event against the Trace Event
/// Format: "traceEvents" is an array; "displayTimeUnit", when present, is "ms" or "ns"; every
/// event has a one-letter "ph" and an integer "pid"; X events have a string "name" and "cat",
/// numbers "ts" and "dur" >= 0, an integer "tid" and an object "args"; M events are
/// process_name / process_labels / process_sort_index / thread_name / thread_sort_index with the
/// args each needs ("name", "labels", an integer "sort_index"), thread ones with a "tid"; every
/// X event's thread is named. InvalidArgument naming the first violation.
absl::StatusOr<TraceLanes> ReadTrace(const std::string& text);

/// Within each lane, slices in file order start at or after the previous one ends (ordered and
/// disjoint, up to `tolerance` in ts units).
::testing::AssertionResult SlicesDoNotOverlap(const TraceLanes& lanes, double tolerance = 1e-6);

/// The slices of a timeline SVG: rect elements of class "slice", counted per data-lane, after
/// libxml2 parsed the document (InvalidArgument with its message when it is not well-formed XML
/// or its root is not <svg>).
struct SvgSlices {
  int total = 0;
  std::map<int, int> per_lane;     // data-lane -> rects
  std::vector<std::string> texts;  // every <text> element's content
};
absl::StatusOr<SvgSlices> ReadSvgSlices(const std::string& svg);

/// Renders `svg_path` to `png_path` with rsvg-convert (librsvg, deploy/install-deps.sh installs
/// librsvg2-bin); fails with its output when it cannot.
::testing::AssertionResult RenderSvgToPng(const std::string& svg_path, const std::string& png_path);

}  // namespace boardlab::testing
