#include "cli/model_io_tflite.h"

#include "absl/strings/str_cat.h"
#include "boardlab/schema/tflite_generated.h"

namespace boardlab::cli {
namespace {

using runtime::ScalarType;

// The runtime's element type of a TFLite TensorType (its numbers in TFLite's schema.fbs, which
// boardlab's schema/tflite.fbs keeps as a plain byte); nullopt for the types boardlab does not run.
std::optional<ScalarType> ScalarTypeOf(int8_t tensor_type) {
  switch (tensor_type) {
    case 0:  // FLOAT32
      return ScalarType::kFloat;
    case 2:  // INT32
      return ScalarType::kInt;
    case 3:  // UINT8
      return ScalarType::kByte;
    case 4:  // INT64
      return ScalarType::kLong;
    case 6:  // BOOL
      return ScalarType::kBool;
    case 7:  // INT16
      return ScalarType::kShort;
    case 9:  // INT8
      return ScalarType::kChar;
    default:
      return std::nullopt;
  }
}

absl::Status ReadTensors(const tflite::SubGraph& subgraph,
                         const flatbuffers::Vector<int32_t>* indices, const char* role,
                         const std::string& name, std::vector<run::TensorInfo>& tensors) {
  const auto* all = subgraph.tensors();
  for (flatbuffers::uoffset_t i = 0; indices != nullptr && i < indices->size(); ++i) {
    const int32_t index = indices->Get(i);
    const tflite::Tensor* t =
        all != nullptr && index >= 0 && static_cast<flatbuffers::uoffset_t>(index) < all->size()
            ? all->Get(static_cast<flatbuffers::uoffset_t>(index))
            : nullptr;
    const std::optional<ScalarType> type = t != nullptr ? ScalarTypeOf(t->type()) : std::nullopt;
    if (!type) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", name, "': ", role, " ", i,
                       " is no tensor of a type boardlab runs (int8, uint8, "
                       "int16, int32, int64, bool, float32)"));
    }
    run::TensorInfo info;
    info.type = *type;
    int64_t elements = 1;
    for (flatbuffers::uoffset_t d = 0; t->shape() != nullptr && d < t->shape()->size(); ++d) {
      const int32_t dim = t->shape()->Get(d);
      if (dim <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", name, "': ", role, " ", i, " has a dynamic or empty dimension"));
      }
      info.shape.push_back(dim);
      elements *= dim;
    }
    info.bytes = static_cast<size_t>(elements) * static_cast<size_t>(runtime::ElementSize(*type));
    tensors.push_back(std::move(info));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<run::ModelIo> ReadTfliteIo(const std::string& bytes, const std::string& name) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier(data, bytes.size());
  if (bytes.size() < 8 || !tflite::ModelBufferHasIdentifier(data) ||
      !tflite::VerifyModelBuffer(verifier)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name, "' is not a TFLite model; its case files cannot be checked"));
  }
  const tflite::Model* model = tflite::GetModel(data);
  if (model->subgraphs() == nullptr || model->subgraphs()->size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "': the model has no subgraph"));
  }
  const tflite::SubGraph& subgraph = *model->subgraphs()->Get(0);
  run::ModelIo io;
  absl::Status status = ReadTensors(subgraph, subgraph.inputs(), "input", name, io.inputs);
  if (status.ok()) status = ReadTensors(subgraph, subgraph.outputs(), "output", name, io.outputs);
  if (!status.ok()) return status;
  return io;
}

}  // namespace boardlab::cli
