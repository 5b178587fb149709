#include "runtime/cli/model_io.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "boardlab/schema/program_generated.h"
#include "runtime/cli/aligned_buffer.h"
#include "runtime/core/error.h"
#include "runtime/executor/program.h"

namespace boardlab::run {
namespace {

namespace rt = boardlab::runtime;
namespace fb = flatbuffers;

template <typename T>
int64_t ArgMaxAs(std::string_view bytes) {
  int64_t best = -1;
  T best_value{};
  for (size_t i = 0; i + sizeof(T) <= bytes.size(); i += sizeof(T)) {
    T value;
    std::memcpy(&value, bytes.data() + i, sizeof(T));
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(value)) continue;
    }
    if (best < 0 || value > best_value) {
      best = static_cast<int64_t>(i / sizeof(T));
      best_value = value;
    }
  }
  return best;
}

bool IsKnownType(int8_t value) {
  switch (static_cast<rt::ScalarType>(value)) {
    case rt::ScalarType::kByte:
    case rt::ScalarType::kChar:
    case rt::ScalarType::kShort:
    case rt::ScalarType::kInt:
    case rt::ScalarType::kLong:
    case rt::ScalarType::kFloat:
    case rt::ScalarType::kBool:
    case rt::ScalarType::kUInt32:
    case rt::ScalarType::kUInt64:
      return true;
  }
  return false;
}

// The tensors that `indices` (an execution plan's inputs or outputs) name; false with `error`.
bool ReadTensors(const executorch_flatbuffer::ExecutionPlan& plan,
                 const fb::Vector<int32_t>* indices, const char* role,
                 std::vector<TensorInfo>& tensors, std::string& error) {
  const auto* values = plan.values();
  for (fb::uoffset_t i = 0; indices != nullptr && i < indices->size(); ++i) {
    const int32_t value = indices->Get(i);
    const auto* tensor =
        values != nullptr && value >= 0 && static_cast<fb::uoffset_t>(value) < values->size()
            ? values->Get(static_cast<fb::uoffset_t>(value))->val_as_Tensor()
            : nullptr;
    if (tensor == nullptr) {
      error = std::string(role) + " " + std::to_string(i) + " is not a tensor";
      return false;
    }
    const int8_t type = static_cast<int8_t>(tensor->scalar_type());
    if (!IsKnownType(type)) {
      error = std::string(role) + " " + std::to_string(i) + " has an unsupported type";
      return false;
    }
    TensorInfo info;
    info.type = static_cast<rt::ScalarType>(type);
    int64_t elements = 1;
    for (fb::uoffset_t d = 0; tensor->sizes() != nullptr && d < tensor->sizes()->size(); ++d) {
      info.shape.push_back(tensor->sizes()->Get(d));
      elements *= tensor->sizes()->Get(d);
    }
    if (elements < 0) {
      error = std::string(role) + " " + std::to_string(i) + " has a negative dimension";
      return false;
    }
    info.bytes = static_cast<size_t>(elements) * static_cast<size_t>(rt::ElementSize(info.type));
    tensors.push_back(std::move(info));
  }
  return true;
}

}  // namespace

std::string TensorInfo::Describe() const {
  std::string text = std::string(ScalarTypeName(type)) + " [";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

const char* ScalarTypeName(rt::ScalarType type) {
  switch (type) {
    case rt::ScalarType::kByte:
      return "uint8";
    case rt::ScalarType::kChar:
      return "int8";
    case rt::ScalarType::kShort:
      return "int16";
    case rt::ScalarType::kInt:
      return "int32";
    case rt::ScalarType::kLong:
      return "int64";
    case rt::ScalarType::kFloat:
      return "float32";
    case rt::ScalarType::kBool:
      return "bool";
    case rt::ScalarType::kUInt32:
      return "uint32";
    case rt::ScalarType::kUInt64:
      return "uint64";
  }
  return "?";
}

rt::ScalarType ScalarTypeNamed(std::string_view name) {
  for (rt::ScalarType type : {rt::ScalarType::kByte, rt::ScalarType::kShort, rt::ScalarType::kInt,
                              rt::ScalarType::kLong, rt::ScalarType::kFloat, rt::ScalarType::kBool,
                              rt::ScalarType::kUInt32, rt::ScalarType::kUInt64}) {
    if (name == ScalarTypeName(type)) return type;
  }
  return rt::ScalarType::kChar;
}

int64_t ArgMax(std::string_view bytes, rt::ScalarType type) {
  switch (type) {
    case rt::ScalarType::kByte:
    case rt::ScalarType::kBool:
      return ArgMaxAs<uint8_t>(bytes);
    case rt::ScalarType::kShort:
      return ArgMaxAs<int16_t>(bytes);
    case rt::ScalarType::kInt:
      return ArgMaxAs<int32_t>(bytes);
    case rt::ScalarType::kLong:
      return ArgMaxAs<int64_t>(bytes);
    case rt::ScalarType::kUInt32:
      return ArgMaxAs<uint32_t>(bytes);
    case rt::ScalarType::kUInt64:
      return ArgMaxAs<uint64_t>(bytes);
    case rt::ScalarType::kFloat:
      return ArgMaxAs<float>(bytes);
    case rt::ScalarType::kChar:
      break;
  }
  return ArgMaxAs<int8_t>(bytes);
}

bool ReadArtifactIo(const uint8_t* data, size_t size, ModelIo* io, std::string* error) {
  // Program::Load wants the artifact aligned like the largest scalar it holds.
  AlignedBuffer aligned(size);
  std::copy(data, data + size, aligned.data());
  rt::Result<rt::Program> program = rt::Program::Load({aligned.data(), aligned.size()});
  if (!program.ok()) {
    *error = std::string(rt::ToString(program.error())) + ": " + rt::LastErrorMessage();
    return false;
  }
  const auto* plans = program->flatbuffer()->execution_plan();
  for (fb::uoffset_t p = 0; plans != nullptr && p < plans->size(); ++p) {
    const auto* plan = plans->Get(p);
    if (plan->name() == nullptr || plan->name()->str() != "forward") continue;
    *io = ModelIo{};
    return ReadTensors(*plan, plan->inputs(), "input", io->inputs, *error) &&
           ReadTensors(*plan, plan->outputs(), "output", io->outputs, *error);
  }
  *error = "no method 'forward'";
  return false;
}

}  // namespace boardlab::run
