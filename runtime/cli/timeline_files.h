#pragma once

// Writes the timeline views of an ETDump: the Chrome trace (trace.json) and the SVG picture
// (timeline.svg). Shared by boardlab-run (--trace, --timeline) and the boardlab client (--out),
// so that both make the same files from the same ETDump and debug map.
//
//   std::string error;
//   if (!WriteTimelineFiles(etdp_bytes, debug_map, "kws.etdp", {"trace.json", "timeline.svg"},
//                           &error)) { ... }

#include <optional>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace boardlab::run {

struct TimelinePaths {
  std::string trace;     // Chrome trace JSON; empty = not written
  std::string timeline;  // SVG picture; empty = not written
};

/// The contents of trace.json and timeline.svg.
struct TimelineTexts {
  std::string trace;
  std::string svg;
};

/// The timeline files of `etdp` as text (what WriteTimelineFiles writes; the server's web pages
/// serve them). nullopt with `error` set ("'<source>': ...") when the ETDump holds no timeline.
std::optional<TimelineTexts> TimelineFileTexts(std::string_view etdp,
                                               const nlohmann::json& debug_map,
                                               const std::string& source, std::string* error);

/// Builds the timeline of `etdp` (TimelineFromEtdump, named after `debug_map`, null for none)
/// and writes the files `paths` names; `source` names what was profiled in both. False with
/// `error` set when the ETDump holds no timeline ("'<source>': ...") or a file cannot be written
/// ("writing '<path>' failed").
bool WriteTimelineFiles(std::string_view etdp, const nlohmann::json& debug_map,
                        const std::string& source, const TimelinePaths& paths, std::string* error);

/// WriteTimelineFiles of the ETDump file at `etdump_path` (an unreadable file is an error too).
bool WriteTimelineFilesOf(const std::string& etdump_path, const nlohmann::json& debug_map,
                          const std::string& source, const TimelinePaths& paths,
                          std::string* error);

/// Checks before a run that each path's directory exists and is writable, so that a bad path
/// costs no run. Empty when they are, else a message naming the path.
std::string UnwritableTimelinePath(const TimelinePaths& paths);

}  // namespace boardlab::run
