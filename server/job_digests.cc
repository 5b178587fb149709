#include "server/job_digests.h"

#include <vector>

#include "boardlab/v1/types.pb.h"

namespace boardlab::server {

void CollectDigests(const google::protobuf::Message& message,
                    absl::flat_hash_set<std::string>& digests) {
  if (message.GetDescriptor() == v1::Digest::descriptor()) {
    const auto& digest = static_cast<const v1::Digest&>(message);
    if (!digest.sha256().empty()) digests.insert(digest.sha256());
    return;
  }
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (!field->is_repeated()) {
      CollectDigests(reflection->GetMessage(message, field), digests);
      continue;
    }
    for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
      CollectDigests(reflection->GetRepeatedMessage(message, field, i), digests);
    }
  }
}

}  // namespace boardlab::server
