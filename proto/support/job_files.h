#pragma once

// The files a finished job leaves in the artifact store (v1::JobFiles), under the names the
// client's `--out DIR` and the server's web pages give them:
//   artifact.pte, report.json, debug_map.json, output<i>.bin, cases/<name>/output<i>.bin (a
//   many-case job), etdump.etdp, profile.json, log.txt
// and job.json, the job record itself (MessageJson). One list, so that a job's files have the same
// names on disk and in a browser.

#include <string>
#include <vector>

#include "boardlab/v1/types.pb.h"
#include "google/protobuf/message.h"

namespace boardlab::api {

struct JobFile {
  std::string name;  // file name inside the output folder
  v1::Digest digest;
};

/// The file name of output `index` of a many-case job's case `case_name`:
/// "cases/<case_name>/output<index>.bin" (case names hold no '/', run_cases.h).
std::string CaseOutputFileName(const std::string& case_name, int index);

/// The job's files that exist (a digest with a SHA-256), in the order listed above.
std::vector<JobFile> ListJobFiles(const v1::Job& job);

/// The message in proto3 JSON (field names as in the .proto, defaults included), one line.
std::string MessageJson(const google::protobuf::Message& message);

}  // namespace boardlab::api
