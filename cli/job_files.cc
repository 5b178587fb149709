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
