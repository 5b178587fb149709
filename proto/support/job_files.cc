#include "proto/support/job_files.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"

namespace boardlab::api {

std::string CaseOutputFileName(const std::string& case_name, int index) {
  return absl::StrCat("cases/", case_name, "/output", index, ".bin");
}

std::vector<JobFile> ListJobFiles(const v1::Job& job) {
  const v1::JobFiles& files = job.files();
  std::vector<JobFile> list = {{"artifact.pte", files.artifact()},
                               {"report.json", files.report()},
                               {"debug_map.json", files.debug_map()}};
  for (int i = 0; i < files.outputs_size(); ++i) {
    list.push_back({absl::StrCat("output", i, ".bin"), files.outputs(i)});
  }
  for (const v1::CaseResult& c : job.cases()) {
    for (int i = 0; i < c.outputs_size(); ++i) {
      list.push_back({CaseOutputFileName(c.name(), i), c.outputs(i)});
    }
  }
  list.push_back({"etdump.etdp", files.etdump()});
  list.push_back({"profile.json", files.profile()});
  list.push_back({"log.txt", files.log()});
  std::erase_if(list, [](const JobFile& file) { return file.digest.sha256().empty(); });
  return list;
}

std::string MessageJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  // Printing a valid message cannot fail; an empty object is the fallback all the same.
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) return "{}";
  return json;
}

}  // namespace boardlab::api
