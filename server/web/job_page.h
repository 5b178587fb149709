#pragma once

// One job's page (/jobs/<id>): its state and verdict with the facts of its life (tenant, model,
// board, times, inference time), its checks (outputs and budgets, each with what was measured
// and the limit), a many-case job's cases (each one's verdict, difference, top-1, time and
// outputs), the partition table of its compile report (every op, NPU or CPU, and why an op
// stayed on the CPU), the run's timeline picture (runtime/cli/timeline_svg.h, inline), links to
// its files and the board's log.
//
//   JobPageData data{.job = job, .report = report_json, .timeline_svg = svg, ...};
//   std::string body = JobPageBody(data);

#include <cstdint>
#include <string>
#include <vector>

#include "boardlab/v1/types.pb.h"
#include "nlohmann/json.hpp"

namespace boardlab::server::web {

/// A file the page links to (/jobs/<id>/files/<name>).
struct JobFileLink {
  std::string name;
  int64_t size_bytes = -1;  // -1: drawn when downloaded (trace.json, timeline.svg)
};

struct JobPageData {
  v1::Job job;
  nlohmann::json report;      // the compile report (compiler/report.h); null when there is none
  std::string timeline_svg;   // an <svg> element made by TimelineSvg; "" when there is none
  std::string timeline_note;  // why there is none (text)
  std::vector<JobFileLink> files;
  std::string log_text;  // the board's log (text, any bytes); "" when there is none
  int64_t now_ms = 0;
};

/// The page's body (for PageDocument).
std::string JobPageBody(const JobPageData& data);

/// The partition table and its summary from a compile report, or a note when `report` holds no
/// ops. Fields of the wrong type show as empty rather than failing the page.
std::string PartitionSection(const nlohmann::json& report);

/// The last `max_lines` lines of `text` (all of it when shorter), and how many were left out.
std::string LogTail(const std::string& text, int max_lines, int* omitted);

}  // namespace boardlab::server::web
