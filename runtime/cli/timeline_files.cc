#include "runtime/cli/timeline_files.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "runtime/cli/timeline.h"
#include "runtime/cli/timeline_svg.h"
#include "runtime/cli/trace_event_json.h"

namespace boardlab::run {
namespace {

bool WriteText(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) *error = "writing '" + path + "' failed";
  return static_cast<bool>(out);
}

}  // namespace

std::optional<TimelineTexts> TimelineFileTexts(std::string_view etdp,
                                               const nlohmann::json& debug_map,
                                               const std::string& source, std::string* error) {
  std::string why;
  const std::optional<Timeline> timeline = TimelineFromEtdump(etdp, debug_map, &why);
  if (!timeline) {
    *error = "'" + source + "': " + why;
    return std::nullopt;
  }
  // Names come from the model file and need not be UTF-8; the trace must stay JSON.
  return TimelineTexts{TraceEventJson(*timeline, source)
                               .dump(1, ' ', false, nlohmann::json::error_handler_t::replace) +
                           "\n",
                       TimelineSvg(*timeline, source)};
}

bool WriteTimelineFiles(std::string_view etdp, const nlohmann::json& debug_map,
                        const std::string& source, const TimelinePaths& paths, std::string* error) {
  const std::optional<TimelineTexts> texts = TimelineFileTexts(etdp, debug_map, source, error);
  if (!texts) return false;
  if (!paths.trace.empty() && !WriteText(paths.trace, texts->trace, error)) return false;
  return paths.timeline.empty() || WriteText(paths.timeline, texts->svg, error);
}

bool WriteTimelineFilesOf(const std::string& etdump_path, const nlohmann::json& debug_map,
                          const std::string& source, const TimelinePaths& paths,
                          std::string* error) {
  std::ifstream in(etdump_path, std::ios::binary);
  const std::string etdp((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) {
    *error = "reading ETDump '" + etdump_path + "': cannot open it";
    return false;
  }
  return WriteTimelineFiles(etdp, debug_map, source, paths, error);
}

std::string UnwritableTimelinePath(const TimelinePaths& paths) {
  for (const std::string& path : {paths.trace, paths.timeline}) {
    if (path.empty()) continue;
    const std::string dir = std::filesystem::path(path).parent_path().string();
    if (::access(dir.empty() ? "." : dir.c_str(), W_OK) != 0) {
      return "cannot write '" + path + "': its directory '" + (dir.empty() ? "." : dir) +
             "' does not exist or is not writable";
    }
  }
  return "";
}

}  // namespace boardlab::run
