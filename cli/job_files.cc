#include "cli/job_files.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "cli/file_io.h"
#include "cli/tables.h"
#include "nlohmann/json.hpp"
#include "runtime/cli/timeline_files.h"

namespace boardlab::cli {

std::vector<JobFile> ListJobFiles(const v1::Job& job) {
  const v1::JobFiles& files = job.files();
  std::vector<JobFile> list = {{"artifact.pte", files.artifact()},
                               {"report.json", files.report()},
                               {"debug_map.json", files.debug_map()}};
  for (int i = 0; i < files.outputs_size(); ++i) {
    list.push_back({absl::StrCat("output", i, ".bin"), files.outputs(i)});
  }
  // A many-case job: each case's outputs in cases/NAME/ (names have no '/', run_cases.h).
  for (const v1::CaseResult& c : job.cases()) {
    for (int i = 0; i < c.outputs_size(); ++i) {
      list.push_back({absl::StrCat("cases/", c.name(), "/output", i, ".bin"), c.outputs(i)});
    }
  }
  list.push_back({"etdump.etdp", files.etdump()});
  list.push_back({"profile.json", files.profile()});
  list.push_back({"log.txt", files.log()});
  std::erase_if(list, [](const JobFile& file) { return file.digest.sha256().empty(); });
  return list;
}

absl::Status DownloadJobFiles(api::BlobClient& blobs, const v1::Job& job, const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot create '", dir, "': ", error.message()));
  }
  for (const JobFile& file : ListJobFiles(job)) {
    absl::StatusOr<std::string> bytes = blobs.Get(file.digest);
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(),
                          absl::StrCat("downloading ", file.name, ": ", bytes.status().message()));
    }
    const std::filesystem::path path = std::filesystem::path(dir) / file.name;
    std::filesystem::create_directories(path.parent_path(), error);
    absl::Status written = WriteFileBytes(path.string(), *bytes);
    if (!written.ok()) return written;
  }
  return WriteFileBytes((std::filesystem::path(dir) / "job.json").string(),
                        MessageJson(job) + "\n");
}

absl::StatusOr<int> WriteJobTimeline(const v1::Job& job, const std::string& dir) {
  if (job.files().etdump().sha256().empty()) return 0;
  const std::filesystem::path folder(dir);
  nlohmann::json map;  // null: rows keep the names the ETDump gives them
  if (!job.files().debug_map().sha256().empty()) {
    std::ifstream in(folder / "debug_map.json", std::ios::binary);
    map = nlohmann::json::parse(std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>(), nullptr,
                                /*allow_exceptions=*/false);
    if (map.is_discarded() || !map.is_object()) map = nullptr;
  }
  std::string error;
  if (!run::WriteTimelineFilesOf(
          (folder / "etdump.etdp").string(), map, "job " + job.id(),
          {(folder / "trace.json").string(), (folder / "timeline.svg").string()}, &error)) {
    return error.rfind("writing", 0) == 0 ? absl::InternalError(error)
                                          : absl::InvalidArgumentError(error);
  }
  return 2;
}

}  // namespace boardlab::cli
