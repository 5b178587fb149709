// artifact get: one blob of the artifact store by digest.

#include <iostream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/file_io.h"
#include "proto/support/blob_client.h"

namespace boardlab::cli {

int RunArtifactGet(const Connection& connection, const std::string& digest_text,
                   const std::string& output) {
  absl::StatusOr<v1::Digest> digest = ParseDigest(digest_text);
  if (!digest.ok()) return Fail(kExitUsage, digest.status().message());
  api::BlobClient blobs(connection.channel, connection.token);
  absl::StatusOr<std::string> bytes = blobs.Get(*digest);
  if (!bytes.ok()) {
    return FailWithStatus(bytes.status(), "downloading " + digest_text, connection.server);
  }
  if (output.empty() || output == "-") {
    std::cout.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    std::cout.flush();
    return kExitPass;
  }
  absl::Status written = WriteFileBytes(output, *bytes);
  if (!written.ok()) return Fail(kExitUsage, written.message());
  return kExitPass;
}

}  // namespace boardlab::cli
