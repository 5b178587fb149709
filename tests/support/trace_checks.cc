#include "tests/support/trace_checks.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "tests/support/process.h"

namespace boardlab::testing {
namespace {

using nlohmann::json;

constexpr char kRsvgConvert[] = "/usr/bin/rsvg-convert";

bool IsInteger(const json& object, const char* key) {
  return object.contains(key) && object[key].is_number_integer();
}

bool IsString(const json& object, const char* key) {
  return object.contains(key) && object[key].is_string();
}

absl::Status Invalid(size_t index, const std::string& what, const json& event) {
  return absl::InvalidArgumentError(
      absl::StrCat("traceEvents[", index, "]: ", what, ": ", event.dump()));
}

// Metadata event names and the arg each carries.
const std::map<std::string, std::string>& MetadataArgs() {
  static const auto* args =
      new std::map<std::string, std::string>{{"process_name", "name"},
                                             {"process_labels", "labels"},
                                             {"process_sort_index", "sort_index"},
                                             {"thread_name", "name"},
                                             {"thread_sort_index", "sort_index"}};
  return *args;
}

absl::Status ReadMetadata(size_t i, const json& e, TraceLanes& lanes) {
  if (!IsString(e, "name") || MetadataArgs().count(e["name"]) == 0) {
    return Invalid(i, "an M event names no known metadata", e);
  }
  const std::string name = e["name"];
  const std::string arg = MetadataArgs().at(name);
  if (!e.contains("args") || !e["args"].is_object() || !e["args"].contains(arg)) {
    return Invalid(i, "metadata without args." + arg, e);
  }
  const bool sort_index = arg == "sort_index";
  if (sort_index ? !e["args"][arg].is_number_integer() : !e["args"][arg].is_string()) {
    return Invalid(i, "args." + arg + " has the wrong type", e);
  }
  const bool thread = name.rfind("thread_", 0) == 0;
  if (thread && !IsInteger(e, "tid")) return Invalid(i, "thread metadata without a tid", e);
  if (name == "thread_name") lanes.thread_names[e["tid"]] = e["args"]["name"];
  if (name == "process_name") lanes.process_name = e["args"]["name"];
  return absl::OkStatus();
}

absl::Status ReadComplete(size_t i, const json& e, TraceLanes& lanes) {
  if (!IsString(e, "name") || !IsString(e, "cat")) return Invalid(i, "X without name/cat", e);
  if (!e.contains("ts") || !e["ts"].is_number()) return Invalid(i, "X without a numeric ts", e);
  if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
    return Invalid(i, "X without a duration >= 0", e);
  }
  if (!IsInteger(e, "tid")) return Invalid(i, "X without an integer tid", e);
  if (!e.contains("args") || !e["args"].is_object()) return Invalid(i, "X without args", e);
  lanes.slices[e["tid"]].push_back(
      {e["name"], e["cat"], e["ts"].get<double>(), e["dur"].get<double>(), e["args"]});
  return absl::OkStatus();
}

struct XmlDocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};

std::string XmlText(xmlNode* node) {
  xmlChar* content = xmlNodeGetContent(node);
  std::string text = content != nullptr ? reinterpret_cast<const char*>(content) : "";
  xmlFree(content);
  return text;
}

std::string Attribute(xmlNode* node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  std::string text = value != nullptr ? reinterpret_cast<const char*>(value) : "";
  xmlFree(value);
  return text;
}

void CollectSlices(xmlNode* node, SvgSlices& out) {
  for (xmlNode* n = node; n != nullptr; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    const std::string tag = reinterpret_cast<const char*>(n->name);
    if (tag == "rect" && Attribute(n, "class") == "slice") {
      ++out.total;
      ++out.per_lane[std::atoi(Attribute(n, "data-lane").c_str())];
    }
    if (tag == "text") out.texts.push_back(XmlText(n));
    CollectSlices(n->children, out);
  }
}

}  // namespace

absl::StatusOr<TraceLanes> ReadTrace(const std::string& text) {
  const json trace = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (trace.is_discarded() || !trace.is_object()) {
    return absl::InvalidArgumentError("the trace is not a JSON object");
  }
  if (!trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    return absl::InvalidArgumentError("no traceEvents array");
  }
  TraceLanes lanes;
  if (trace.contains("displayTimeUnit")) {
    lanes.has_display_time_unit = true;
    if (trace["displayTimeUnit"] != "ms" && trace["displayTimeUnit"] != "ns") {
      return absl::InvalidArgumentError("displayTimeUnit must be \"ms\" or \"ns\"");
    }
  }
  if (trace.contains("otherData")) lanes.other_data = trace["otherData"];
  const json& events = trace["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object() || !IsString(e, "ph") || e["ph"].get<std::string>().size() != 1 ||
        !IsInteger(e, "pid")) {
      return Invalid(i, "not an event with a one-letter ph and an integer pid", e);
    }
    const std::string ph = e["ph"];
    absl::Status read = ph == "M"   ? ReadMetadata(i, e, lanes)
                        : ph == "X" ? ReadComplete(i, e, lanes)
                                    : Invalid(i, "a phase boardlab does not write", e);
    if (!read.ok()) return read;
  }
  for (const auto& [tid, slices] : lanes.slices) {
    if (lanes.thread_names.count(tid) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("thread ", tid, " has slices but no name"));
    }
  }
  return lanes;
}

::testing::AssertionResult SlicesDoNotOverlap(const TraceLanes& lanes, double tolerance) {
  for (const auto& [tid, slices] : lanes.slices) {
    for (size_t i = 1; i < slices.size(); ++i) {
      const TraceSlice& before = slices[i - 1];
      if (slices[i].ts + tolerance < before.ts + before.dur) {
        return ::testing::AssertionFailure()
               << "lane " << lanes.thread_names.at(tid) << ": '" << slices[i].name << "' at "
               << slices[i].ts << " starts before '" << before.name << "' ends at "
               << before.ts + before.dur;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

absl::StatusOr<SvgSlices> ReadSvgSlices(const std::string& svg) {
  std::unique_ptr<xmlDoc, XmlDocFree> doc(
      xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "timeline.svg", nullptr,
                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
  if (doc == nullptr) {
    const xmlError* error = xmlGetLastError();
    return absl::InvalidArgumentError(absl::StrCat(
        "not well-formed XML: ", error != nullptr && error->message ? error->message : "?"));
  }
  xmlNode* root = xmlDocGetRootElement(doc.get());
  if (root == nullptr || std::string(reinterpret_cast<const char*>(root->name)) != "svg") {
    return absl::InvalidArgumentError("the root element is not <svg>");
  }
  SvgSlices slices;
  CollectSlices(root, slices);
  return slices;
}

::testing::AssertionResult RenderSvgToPng(const std::string& svg_path,
                                          const std::string& png_path) {
  if (::access(kRsvgConvert, X_OK) != 0) {
    return ::testing::AssertionFailure()
           << kRsvgConvert << " is missing: run deploy/install-deps.sh (it installs librsvg2-bin)";
  }
  const CommandResult render =
      RunCommand(absl::StrCat(kRsvgConvert, " '", svg_path, "' -o '", png_path, "'"));
  std::error_code error;
  if (render.exit_code != 0 || std::filesystem::file_size(png_path, error) == 0 || error) {
    return ::testing::AssertionFailure() << "rsvg-convert failed: " << render.output;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace boardlab::testing
