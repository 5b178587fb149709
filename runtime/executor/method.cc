#include "runtime/executor/method.h"

#include <cstdio>
#include <cstring>

#include "boardlab/schema/program_generated.h"
#include "runtime/executor/backend_registry.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/platform/platform.h"

namespace boardlab::runtime {

namespace et = ::executorch_flatbuffer;

struct Method::Instruction {
  InstructionKind kind = InstructionKind::kFree;
  // KernelCall.
  const KernelRegistration* kernel = nullptr;
  void* op_data = nullptr;
  Value** args = nullptr;
  const char* key = nullptr;
  const char* event_name = nullptr;
  // DelegateCall.
  int32_t delegate_index = -1;
  TensorView** tensor_args = nullptr;
  // KernelCall / DelegateCall argument count.
  uint32_t num_args = 0;
  // MoveCall (from, to), JumpFalseCall (condition, destination), FreeCall (value).
  int32_t a = 0;
  int32_t b = 0;
};

struct Method::Delegate {
  Backend* backend = nullptr;
  void* handle = nullptr;
  const char* id = nullptr;
};

namespace {

// Operator keys are "name.overload"; longer keys than this are rejected rather than truncated,
// since a truncated key could match the wrong kernel.
constexpr size_t kMaxOperatorKey = 128;
// The next_pc an instruction gives to end the inference without an error (end_inference).
constexpr size_t kEndInference = SIZE_MAX;
constexpr char kEventPrefix[] = "native_call_";

Ticks PlatformClock() { return rt_pal_current_ticks(); }

// Allocates `count` zero-initialised T from `allocator` (non-null for count 0 too, so that callers
// can tell failure from emptiness).
template <typename T>
T* AllocateZeroed(MemoryAllocator* allocator, size_t count) {
  const size_t bytes = count == 0 ? 1 : count * sizeof(T);
  void* p = allocator->Allocate(bytes, alignof(T) > 16 ? alignof(T) : 16);
  if (p != nullptr) std::memset(p, 0, bytes);
  return static_cast<T*>(p);
}

#define RT_ALLOCATE_OR_RETURN(ptr, allocator, T, count, what)                                  \
  T* ptr = AllocateZeroed<T>(allocator, count);                                                \
  RT_CHECK_OR_RETURN_ERROR(ptr != nullptr, kMemoryAllocationFailed,                            \
                           "LoadMethod: persistent memory exhausted allocating %s (%lu x %lu " \
                           "bytes; %lu of %lu used)",                                          \
                           what, static_cast<unsigned long>(count),                            \
                           static_cast<unsigned long>(sizeof(T)),                              \
                           static_cast<unsigned long>((allocator)->used()),                    \
                           static_cast<unsigned long>((allocator)->size()))

const char* CopyString(MemoryAllocator* allocator, const char* s) {
  const size_t n = std::strlen(s) + 1;
  char* p = static_cast<char*>(allocator->Allocate(n, 1));
  if (p != nullptr) std::memcpy(p, s, n);
  return p;
}

bool FitsWithin(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

// What boardlab's compiler puts in planned buffer `i` (docs/artifact-format.md section 2).
const char* PlannedBufferRole(size_t i) {
  switch (i) {
    case 0:
      return "activation arena";
    case 1:
      return "weight scratch";
    case 2:
      return "variable state";
    default:
      return "planned buffer";
  }
}

Error ToScalarType(et::ScalarType in, size_t value_index, ScalarType* out) {
  switch (in) {
    case et::ScalarType::BYTE:
      *out = ScalarType::kByte;
      return Error::kOk;
    case et::ScalarType::CHAR:
      *out = ScalarType::kChar;
      return Error::kOk;
    case et::ScalarType::SHORT:
      *out = ScalarType::kShort;
      return Error::kOk;
    case et::ScalarType::INT:
      *out = ScalarType::kInt;
      return Error::kOk;
    case et::ScalarType::LONG:
      *out = ScalarType::kLong;
      return Error::kOk;
    case et::ScalarType::FLOAT:
      *out = ScalarType::kFloat;
      return Error::kOk;
    case et::ScalarType::BOOL:
      *out = ScalarType::kBool;
      return Error::kOk;
    case et::ScalarType::UINT32:
      *out = ScalarType::kUInt32;
      return Error::kOk;
    case et::ScalarType::UINT64:
      *out = ScalarType::kUInt64;
      return Error::kOk;
    default:
      break;
  }
  const char* name = et::EnumNameScalarType(in);
  RT_CHECK_OR_RETURN_ERROR(name == nullptr || name[0] == '\0', kNotSupported,
                           "value %lu: tensor scalar type %s is not supported by the runtime",
                           static_cast<unsigned long>(value_index), name);
  RT_INTERNAL_SET_MESSAGE("invalid program: value %lu: unknown tensor scalar type %d",
                          static_cast<unsigned long>(value_index), static_cast<int>(in));
  return Error::kInvalidProgram;
}

// Builds the TensorView of `t` (executorch-formats.md 1.3 and 1.5 tensor rules).
Error ParseTensor(const et::Tensor* t, size_t value_index, const Program& program,
                  Span<Span<uint8_t>> planned, TensorView* out) {
  RT_RETURN_IF_ERROR(ToScalarType(t->scalar_type(), value_index, &out->type));
  RT_CHECK_OR_RETURN_ERROR(t->storage_offset() == 0, kInvalidProgram,
                           "invalid program: value %lu: tensor storage_offset %d (must be 0)",
                           static_cast<unsigned long>(value_index),
                           static_cast<int>(t->storage_offset()));
  RT_CHECK_OR_RETURN_ERROR(t->shape_dynamism() != et::TensorShapeDynamism::DYNAMIC_UNBOUND,
                           kNotSupported, "value %lu: DYNAMIC_UNBOUND tensors are not supported",
                           static_cast<unsigned long>(value_index));
  const et::ExtraTensorInfo* extra = t->extra_tensor_info();
  RT_CHECK_OR_RETURN_ERROR(extra == nullptr || extra->location() == et::TensorDataLocation::SEGMENT,
                           kNotSupported,
                           "value %lu: tensor data in an external .ptd file is not supported",
                           static_cast<unsigned long>(value_index));
  const auto* sizes = t->sizes();
  const auto* dim_order = t->dim_order();
  RT_CHECK_OR_RETURN_ERROR(sizes != nullptr && dim_order != nullptr, kInvalidProgram,
                           "invalid program: value %lu: tensor without sizes or dim_order",
                           static_cast<unsigned long>(value_index));
  RT_CHECK_OR_RETURN_ERROR(sizes->size() <= static_cast<size_t>(kMaxRank), kNotSupported,
                           "value %lu: tensor rank %u exceeds the runtime's maximum %d",
                           static_cast<unsigned long>(value_index),
                           static_cast<unsigned>(sizes->size()), kMaxRank);
  RT_CHECK_OR_RETURN_ERROR(dim_order->size() == sizes->size(), kInvalidProgram,
                           "invalid program: value %lu: dim_order has %u entries for rank %u",
                           static_cast<unsigned long>(value_index),
                           static_cast<unsigned>(dim_order->size()),
                           static_cast<unsigned>(sizes->size()));
  out->rank = static_cast<int32_t>(sizes->size());
  uint64_t elements = 1;
  for (flatbuffers::uoffset_t d = 0; d < sizes->size(); ++d) {
    const int32_t dim = sizes->Get(d);
    RT_CHECK_OR_RETURN_ERROR(
        dim >= 0, kInvalidProgram, "invalid program: value %lu: negative size %d in dim %u",
        static_cast<unsigned long>(value_index), static_cast<int>(dim), static_cast<unsigned>(d));
    // Kernels index contiguous memory; only the identity dim_order is contiguous.
    RT_CHECK_OR_RETURN_ERROR(dim_order->Get(d) == d, kNotSupported,
                             "value %lu: tensor dim_order is not contiguous (dim %u -> %u)",
                             static_cast<unsigned long>(value_index), static_cast<unsigned>(d),
                             dim_order->Get(d));
    out->dims[d] = dim;
    RT_CHECK_OR_RETURN_ERROR(
        !__builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &elements), kInvalidProgram,
        "invalid program: value %lu: tensor size overflows",
        static_cast<unsigned long>(value_index));
  }
  uint64_t bytes = 0;
  RT_CHECK_OR_RETURN_ERROR(
      !__builtin_mul_overflow(elements, static_cast<uint64_t>(ElementSize(out->type)), &bytes) &&
          bytes <= SIZE_MAX / 2,
      kInvalidProgram, "invalid program: value %lu: tensor byte size overflows",
      static_cast<unsigned long>(value_index));

  const et::AllocationDetails* allocation = t->allocation_info();
  const uint32_t buffer = t->data_buffer_idx();
  if (allocation != nullptr) {
    const uint32_t memory_id = allocation->memory_id();
    // memory_id is 1-based: entry 0 of non_const_buffer_sizes is reserved.
    RT_CHECK_OR_RETURN_ERROR(memory_id >= 1 && memory_id <= planned.size(), kInvalidProgram,
                             "invalid program: value %lu: planned buffer memory_id %u, the "
                             "method has %lu planned buffers",
                             static_cast<unsigned long>(value_index),
                             static_cast<unsigned>(memory_id),
                             static_cast<unsigned long>(planned.size()));
    const uint64_t offset = static_cast<uint64_t>(allocation->memory_offset_low()) |
                            (static_cast<uint64_t>(allocation->memory_offset_high()) << 32);
    const Span<uint8_t> region = planned[memory_id - 1];
    RT_CHECK_OR_RETURN_ERROR(
        FitsWithin(offset, bytes, region.size()), kInvalidProgram,
        "invalid program: value %lu: tensor [%llu, +%llu) lies outside "
        "planned buffer %u (%lu bytes)",
        static_cast<unsigned long>(value_index), static_cast<unsigned long long>(offset),
        static_cast<unsigned long long>(bytes), static_cast<unsigned>(memory_id),
        static_cast<unsigned long>(region.size()));
    out->data = region.data() + offset;
    if (buffer > 0) {
      // A mutable buffer (a variable tensor): it starts from its initial value at every load,
      // then kernels update it in place and it keeps its value from one Execute to the next.
      const uint64_t list = extra == nullptr ? 0 : extra->mutable_data_segments_idx();
      RT_ASSIGN_OR_RETURN(const uint8_t* initial,
                          program.MutableData(list, buffer, static_cast<size_t>(bytes)));
      std::memcpy(out->data, initial, static_cast<size_t>(bytes));
    }
    return Error::kOk;
  }
  if (buffer > 0) {
    RT_ASSIGN_OR_RETURN(const uint8_t* data,
                        program.ConstantData(buffer, static_cast<size_t>(bytes)));
    // Kernels never write constants; TensorView has no const flavour.
    out->data = const_cast<uint8_t*>(data);
    return Error::kOk;
  }
  // Neither planned nor constant: boardlab plans every activation, so such a tensor would be a
  // null pointer in a kernel. Empty tensors need no storage.
  RT_CHECK_OR_RETURN_ERROR(bytes == 0, kNotSupported,
                           "value %lu: tensor has neither planned memory nor constant data "
                           "(unplanned tensors are not supported)",
                           static_cast<unsigned long>(value_index));
  return Error::kOk;
}

template <typename T>
ListView<T> ToList(const flatbuffers::Vector<T>* items) {
  ListView<T> list;
  if (items != nullptr) {
    list.data = items->data();
    list.size = items->size();
  }
  return list;
}

// "boardlab::conv_2d" + "out" -> "boardlab::conv_2d.out" and "native_call_conv_2d.out".
Error OperatorNames(const et::Operator* op, int32_t op_index, MemoryAllocator* persistent,
                    const char** key, const char** event_name,
                    char (&key_buffer)[kMaxOperatorKey]) {
  RT_CHECK_OR_RETURN_ERROR(op != nullptr && op->name() != nullptr, kInvalidProgram,
                           "invalid program: operator %d has no name", static_cast<int>(op_index));
  const char* name = op->name()->c_str();
  const char* overload = op->overload() == nullptr ? "" : op->overload()->c_str();
  const int n =
      std::snprintf(key_buffer, sizeof(key_buffer), overload[0] ? "%s.%s" : "%s%s", name, overload);
  RT_CHECK_OR_RETURN_ERROR(n > 0 && static_cast<size_t>(n) < sizeof(key_buffer), kNotSupported,
                           "operator %d: name '%s' is longer than %lu characters",
                           static_cast<int>(op_index), name,
                           static_cast<unsigned long>(kMaxOperatorKey - 1));
  *key = CopyString(persistent, key_buffer);
  const char* short_name = name;
  for (const char* p = name; *p != '\0'; ++p) {
    if (p[0] == ':' && p[1] == ':') short_name = p + 2;
  }
  char event[sizeof(kEventPrefix) + kMaxOperatorKey];
  std::snprintf(event, sizeof(event), overload[0] ? "%s%s.%s" : "%s%s%s", kEventPrefix, short_name,
                overload);
  *event_name = CopyString(persistent, event);
  RT_CHECK_OR_RETURN_ERROR(*key != nullptr && *event_name != nullptr, kMemoryAllocationFailed,
                           "LoadMethod: persistent memory exhausted copying operator names");
  return Error::kOk;
}

// Prefixes the current error message with the failing instruction, keeping the callee's text.
void AddInstructionContext(size_t pc, const char* what, const char* name, Error error) {
#if !defined(RT_STRIP_ERROR_STRINGS)
  char inner[192];
  std::snprintf(inner, sizeof(inner), "%s", LastErrorMessage());
  internal::SetLastErrorMessage("instruction %lu (%s %s) failed with %s%s%s",
                                static_cast<unsigned long>(pc), what, name == nullptr ? "?" : name,
                                ToString(error), inner[0] ? ": " : "", inner);
#else
  (void)pc, (void)what, (void)name, (void)error;
#endif
}

}  // namespace

Result<Method> Program::LoadMethod(const char* name, MemoryManager& memory,
                                   BackendRegistry& backends, EventTracer* tracer,
                                   KernelLookupFn lookup, const MethodOptions& options) const {
  MemoryAllocator* persistent = memory.persistent();
  RT_CHECK_OR_RETURN_ERROR(persistent != nullptr, kInvalidArgument,
                           "LoadMethod: the memory manager has no persistent allocator");
  RT_CHECK_OR_RETURN_ERROR(lookup != nullptr, kInvalidArgument,
                           "LoadMethod: null kernel lookup function");
  const Clock clock = options.clock != nullptr ? options.clock : &PlatformClock;
  const size_t used_before = persistent->used();
  internal::BeginRun(tracer, "Default");
  internal::ProfileScope load_scope(tracer, "Program::load_method", -1, -1, clock);

  const et::ExecutionPlan* plan = FindPlan(name);
  RT_CHECK_OR_RETURN_ERROR(plan != nullptr, kNotFound, "LoadMethod: no method '%s' in the program",
                           name == nullptr ? "(null)" : name);
  const auto* values = plan->values();
  const auto* plan_inputs = plan->inputs();
  const auto* plan_outputs = plan->outputs();
  const auto* chains = plan->chains();
  const auto* buffer_sizes = plan->non_const_buffer_sizes();
  const auto* operators = plan->operators();
  const auto* delegates = plan->delegates();
  RT_CHECK_OR_RETURN_ERROR(values != nullptr && plan_inputs != nullptr && plan_outputs != nullptr &&
                               buffer_sizes != nullptr && delegates != nullptr,
                           kInvalidProgram,
                           "invalid program: method '%s' lacks values, inputs, outputs, "
                           "delegates or non_const_buffer_sizes",
                           name);
  RT_CHECK_OR_RETURN_ERROR(chains != nullptr && chains->size() > 0, kInvalidProgram,
                           "invalid program: method '%s' has no chains", name);
  // Every program EXIR and boardlab emit has one chain; control flow across chains is not
  // implemented.
  RT_CHECK_OR_RETURN_ERROR(chains->size() == 1, kNotSupported,
                           "method '%s' has %u chains; the runtime runs single-chain methods", name,
                           static_cast<unsigned>(chains->size()));
  const et::Chain* chain = chains->Get(0);
  RT_CHECK_OR_RETURN_ERROR(chain != nullptr && chain->instructions() != nullptr, kInvalidProgram,
                           "invalid program: method '%s' chain 0 has no instructions", name);

  // Planned buffers: the artifact's sizes are the contract with whoever sized the memory.
  const size_t num_planned = buffer_sizes->size() == 0 ? 0 : buffer_sizes->size() - 1;
  const Span<Span<uint8_t>> planned = memory.planned();
  RT_CHECK_OR_RETURN_ERROR(planned.size() == num_planned, kInvalidArgument,
                           "LoadMethod: method '%s' needs %lu planned buffers, the memory "
                           "manager provides %lu",
                           name, static_cast<unsigned long>(num_planned),
                           static_cast<unsigned long>(planned.size()));
  for (size_t i = 0; i < num_planned; ++i) {
    const int64_t expected = buffer_sizes->Get(static_cast<flatbuffers::uoffset_t>(i + 1));
    RT_CHECK_OR_RETURN_ERROR(expected >= 0, kInvalidProgram,
                             "invalid program: planned buffer %lu has size %lld",
                             static_cast<unsigned long>(i), static_cast<long long>(expected));
    RT_CHECK_OR_RETURN_ERROR(
        static_cast<uint64_t>(expected) == planned[i].size() &&
            (planned[i].data() != nullptr || expected == 0),
        kInvalidArgument,
        "LoadMethod: planned buffer %lu (%s) must be %lld bytes, the memory manager gives %lu",
        static_cast<unsigned long>(i), PlannedBufferRole(i), static_cast<long long>(expected),
        static_cast<unsigned long>(planned[i].size()));
  }

  Method m;
  m.persistent_ = persistent;
  m.temp_ = memory.temp();
  m.tracer_ = tracer;
  m.clock_ = clock;

  // Values: scalars, tensors and plain lists first; tensor lists point at tensors, which may come
  // later in the table, so they get a second pass.
  m.num_values_ = values->size();
  RT_ALLOCATE_OR_RETURN(value_array, persistent, Value, m.num_values_, "values");
  m.values_ = value_array;
  size_t num_tensors = 0;
  for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i) {
    const et::EValue* v = values->Get(i);
    RT_CHECK_OR_RETURN_ERROR(v != nullptr, kInvalidProgram, "invalid program: value %u is null",
                             static_cast<unsigned>(i));
    if (v->val_type() == et::KernelTypes::Tensor) ++num_tensors;
  }
  RT_ALLOCATE_OR_RETURN(tensors, persistent, TensorView, num_tensors, "tensor views");
  size_t next_tensor = 0;
  for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i) {
    const et::EValue* v = values->Get(i);
    Value& out = m.values_[i];
    switch (v->val_type()) {
      case et::KernelTypes::Null:
        out.tag = ValueTag::kNone;
        break;
      case et::KernelTypes::Int:
        RT_CHECK_OR_RETURN_ERROR(v->val_as_Int() != nullptr, kInvalidProgram,
                                 "invalid program: value %u: Int without payload",
                                 static_cast<unsigned>(i));
        out.tag = ValueTag::kInt;
        out.int_value = v->val_as_Int()->int_val();
        break;
      case et::KernelTypes::Bool:
        RT_CHECK_OR_RETURN_ERROR(v->val_as_Bool() != nullptr, kInvalidProgram,
                                 "invalid program: value %u: Bool without payload",
                                 static_cast<unsigned>(i));
        out.tag = ValueTag::kBool;
        out.bool_value = v->val_as_Bool()->bool_val();
        break;
      case et::KernelTypes::Double:
        RT_CHECK_OR_RETURN_ERROR(v->val_as_Double() != nullptr, kInvalidProgram,
                                 "invalid program: value %u: Double without payload",
                                 static_cast<unsigned>(i));
        out.tag = ValueTag::kDouble;
        out.double_value = v->val_as_Double()->double_val();
        break;
      case et::KernelTypes::String: {
        const et::String* s = v->val_as_String();
        out.tag = ValueTag::kString;
        out.string_value =
            s == nullptr || s->string_val() == nullptr ? "" : s->string_val()->c_str();
        break;
      }
      case et::KernelTypes::IntList:
        RT_CHECK_OR_RETURN_ERROR(v->val_as_IntList() != nullptr, kInvalidProgram,
                                 "invalid program: value %u: IntList without payload",
                                 static_cast<unsigned>(i));
        out.tag = ValueTag::kIntList;
        out.int_list = ToList(v->val_as_IntList()->items());
        break;
      case et::KernelTypes::DoubleList:
        RT_CHECK_OR_RETURN_ERROR(v->val_as_DoubleList() != nullptr, kInvalidProgram,
                                 "invalid program: value %u: DoubleList without payload",
                                 static_cast<unsigned>(i));
        out.tag = ValueTag::kDoubleList;
        out.double_list = ToList(v->val_as_DoubleList()->items());
        break;
      case et::KernelTypes::BoolList: {
        RT_CHECK_OR_RETURN_ERROR(v->val_as_BoolList() != nullptr, kInvalidProgram,
                                 "invalid program: value %u: BoolList without payload",
                                 static_cast<unsigned>(i));
        const auto* items = v->val_as_BoolList()->items();
        out.tag = ValueTag::kBoolList;
        out.bool_list.data =
            items == nullptr ? nullptr : reinterpret_cast<const uint8_t*>(items->Data());
        out.bool_list.size = items == nullptr ? 0 : items->size();
        break;
      }
      case et::KernelTypes::Tensor: {
        RT_CHECK_OR_RETURN_ERROR(v->val_as_Tensor() != nullptr, kInvalidProgram,
                                 "invalid program: value %u: Tensor without payload",
                                 static_cast<unsigned>(i));
        TensorView* view = &tensors[next_tensor++];
        RT_RETURN_IF_ERROR(ParseTensor(v->val_as_Tensor(), i, *this, planned, view));
        out.tag = ValueTag::kTensor;
        out.tensor = view;
        break;
      }
      case et::KernelTypes::TensorList:
      case et::KernelTypes::OptionalTensorList:
        break;  // second pass
      default:
        RT_INTERNAL_SET_MESSAGE("invalid program: value %u has unknown type %d",
                                static_cast<unsigned>(i), static_cast<int>(v->val_type()));
        return Error::kInvalidProgram;
    }
  }
  for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i) {
    const et::EValue* v = values->Get(i);
    const bool optional = v->val_type() == et::KernelTypes::OptionalTensorList;
    if (v->val_type() != et::KernelTypes::TensorList && !optional) continue;
    const flatbuffers::Vector<int32_t>* items =
        optional
            ? (v->val_as_OptionalTensorList() ? v->val_as_OptionalTensorList()->items() : nullptr)
            : (v->val_as_TensorList() ? v->val_as_TensorList()->items() : nullptr);
    const size_t count = items == nullptr ? 0 : items->size();
    RT_ALLOCATE_OR_RETURN(list, persistent, TensorView*, count, "a tensor list");
    for (size_t k = 0; k < count; ++k) {
      const int32_t index = items->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (optional && index == -1) continue;  // None stays a null pointer
      RT_CHECK_OR_RETURN_ERROR(
          index >= 0 && static_cast<size_t>(index) < m.num_values_ && m.values_[index].is_tensor(),
          kInvalidProgram,
          "invalid program: value %u: tensor list item %lu refers to value "
          "%d, which is not a tensor",
          static_cast<unsigned>(i), static_cast<unsigned long>(k), static_cast<int>(index));
      list[k] = m.values_[index].tensor;
    }
    m.values_[i].tag = ValueTag::kTensorList;
    m.values_[i].tensor_list.data = list;
    m.values_[i].tensor_list.size = count;
  }

  // Inputs and outputs: planned tensors (SetInput writes into them).
  const flatbuffers::Vector<int32_t>* io_lists[2] = {plan_inputs, plan_outputs};
  TensorView** io_views[2] = {nullptr, nullptr};
  for (int io = 0; io < 2; ++io) {
    const char* what = io == 0 ? "input" : "output";
    const size_t count = io_lists[io]->size();
    RT_ALLOCATE_OR_RETURN(views, persistent, TensorView*, count, "input/output views");
    for (size_t k = 0; k < count; ++k) {
      const int32_t index = io_lists[io]->Get(static_cast<flatbuffers::uoffset_t>(k));
      RT_CHECK_OR_RETURN_ERROR(
          index >= 0 && static_cast<size_t>(index) < m.num_values_ && m.values_[index].is_tensor(),
          kInvalidProgram, "invalid program: method %s %lu is value %d, not a tensor", what,
          static_cast<unsigned long>(k), static_cast<int>(index));
      RT_CHECK_OR_RETURN_ERROR(values->Get(index)->val_as_Tensor()->allocation_info() != nullptr,
                               kNotSupported, "method %s %lu (value %d) is not memory-planned",
                               what, static_cast<unsigned long>(k), static_cast<int>(index));
      views[k] = m.values_[index].tensor;
    }
    io_views[io] = views;
  }
  m.inputs_ = io_views[0];
  m.num_inputs_ = plan_inputs->size();
  m.outputs_ = io_views[1];
  m.num_outputs_ = plan_outputs->size();

  // Delegates: one backend handle per BackendDelegate, shared by every DelegateCall to it.
  RT_ALLOCATE_OR_RETURN(context, persistent, BackendContext, 1, "the backend context");
  context->persistent = persistent;
  context->temp = m.temp_;
  context->arena = num_planned > 0 ? planned[0].data() : nullptr;
  context->arena_size = num_planned > 0 ? planned[0].size() : 0;
  context->weight_scratch = num_planned > 1 ? planned[1].data() : nullptr;
  context->weight_scratch_size = num_planned > 1 ? planned[1].size() : 0;
  context->tracer = tracer;
  m.backend_context_ = context;
  m.num_delegates_ = delegates->size();
  RT_ALLOCATE_OR_RETURN(delegate_array, persistent, Method::Delegate, m.num_delegates_,
                        "delegates");
  m.delegates_ = delegate_array;
  for (flatbuffers::uoffset_t i = 0; i < delegates->size(); ++i) {
    const et::BackendDelegate* d = delegates->Get(i);
    Backend* backend = backends.Find(d->id()->c_str());
    RT_CHECK_OR_RETURN_ERROR(backend != nullptr, kNotFound,
                             "LoadMethod: delegate %u needs backend '%s', which is not registered",
                             static_cast<unsigned>(i), d->id()->c_str());
    RT_ASSIGN_OR_RETURN(
        const Span<const uint8_t> blob,
        DelegateData(static_cast<uint8_t>(d->processed()->location()), d->processed()->index()));
    context->instruction = -1;
    Result<void*> handle = backend->Init(blob, *context);
    if (m.temp_ != nullptr) m.temp_->Reset();
    if (!handle.ok()) {
      AddInstructionContext(i, "delegate init", d->id()->c_str(), handle.error());
      return handle.error();
    }
    m.delegates_[i].backend = backend;
    m.delegates_[i].handle = handle.get();
    m.delegates_[i].id = d->id()->c_str();
  }

  // Instructions.
  const auto* instructions = chain->instructions();
  m.num_instructions_ = instructions->size();
  RT_ALLOCATE_OR_RETURN(instruction_array, persistent, Method::Instruction, m.num_instructions_,
                        "instructions");
  m.instructions_ = instruction_array;
  const auto value_ok = [&](int32_t index) {
    return index >= 0 && static_cast<size_t>(index) < m.num_values_;
  };
  // Per value: 1 + the last KernelCall of a stateful kernel whose last argument it is (0 for
  // none), allocated at the first such call.
  uint32_t* last_stateful_call = nullptr;
  for (flatbuffers::uoffset_t pc = 0; pc < instructions->size(); ++pc) {
    const et::Instruction* instr = instructions->Get(pc);
    RT_CHECK_OR_RETURN_ERROR(instr != nullptr, kInvalidProgram,
                             "invalid program: instruction %u is null", static_cast<unsigned>(pc));
    Method::Instruction& out = m.instructions_[pc];
    switch (instr->instr_args_type()) {
      case et::InstructionArguments::KernelCall: {
        const et::KernelCall* call = instr->instr_args_as_KernelCall();
        RT_CHECK_OR_RETURN_ERROR(call != nullptr && call->args() != nullptr, kInvalidProgram,
                                 "invalid program: instruction %u: KernelCall without args",
                                 static_cast<unsigned>(pc));
        const int32_t op_index = call->op_index();
        RT_CHECK_OR_RETURN_ERROR(operators != nullptr && op_index >= 0 &&
                                     static_cast<size_t>(op_index) < operators->size(),
                                 kInvalidProgram,
                                 "invalid program: instruction %u: operator index %d out of range",
                                 static_cast<unsigned>(pc), static_cast<int>(op_index));
        char key[kMaxOperatorKey];
        RT_RETURN_IF_ERROR(OperatorNames(operators->Get(op_index), op_index, persistent, &out.key,
                                         &out.event_name, key));
        const KernelRegistration* kernel = lookup(out.key);
        RT_CHECK_OR_RETURN_ERROR(kernel != nullptr && kernel->eval != nullptr, kOperatorMissing,
                                 "LoadMethod: operator '%s' (instruction %u) has no kernel",
                                 out.key, static_cast<unsigned>(pc));
        out.kind = InstructionKind::kKernelCall;
        out.kernel = kernel;
        out.num_args = call->args()->size();
        RT_ALLOCATE_OR_RETURN(args, persistent, Value*, out.num_args, "kernel arguments");
        for (uint32_t k = 0; k < out.num_args; ++k) {
          const int32_t index = call->args()->Get(k);
          RT_CHECK_OR_RETURN_ERROR(value_ok(index), kInvalidProgram,
                                   "invalid program: instruction %u argument %u is value %d, out "
                                   "of range (%lu values)",
                                   static_cast<unsigned>(pc), static_cast<unsigned>(k),
                                   static_cast<int>(index),
                                   static_cast<unsigned long>(m.num_values_));
          args[k] = &m.values_[index];
        }
        out.args = args;
        if (kernel->keeps_state && out.num_args > 0) {
          // One TFLite operator inlined at several call sites of its subgraph is one kernel
          // instance, as in TFLite Micro: the compiler gives every site the same arguments, and
          // the sites share the first one's state.
          if (last_stateful_call == nullptr) {
            RT_ALLOCATE_OR_RETURN(table, persistent, uint32_t, m.num_values_,
                                  "stateful kernel table");
            last_stateful_call = table;
          }
          uint32_t& last = last_stateful_call[call->args()->Get(out.num_args - 1)];
          const Method::Instruction* earlier = last > 0 ? &m.instructions_[last - 1] : nullptr;
          if (earlier != nullptr && earlier->kernel == kernel &&
              earlier->num_args == out.num_args &&
              std::memcmp(earlier->args, out.args, out.num_args * sizeof(Value*)) == 0) {
            out.op_data = earlier->op_data;
            break;
          }
          last = pc + 1;
        }
        if (kernel->op_data_size > 0) {
          RT_ALLOCATE_OR_RETURN(op_data, persistent, uint8_t, kernel->op_data_size,
                                "kernel op_data");
          out.op_data = op_data;
        }
        if (kernel->prepare != nullptr) {
          KernelContext ctx{persistent, m.temp_, out.op_data};
          const Error err = kernel->prepare(ctx, Span<Value* const>(out.args, out.num_args));
          if (m.temp_ != nullptr) m.temp_->Reset();
          if (err != Error::kOk) {
            AddInstructionContext(pc, "prepare", out.key, err);
            return err;
          }
        }
        break;
      }
      case et::InstructionArguments::DelegateCall: {
        const et::DelegateCall* call = instr->instr_args_as_DelegateCall();
        RT_CHECK_OR_RETURN_ERROR(call != nullptr && call->args() != nullptr, kInvalidProgram,
                                 "invalid program: instruction %u: DelegateCall without args",
                                 static_cast<unsigned>(pc));
        const int32_t index = call->delegate_index();
        RT_CHECK_OR_RETURN_ERROR(index >= 0 && static_cast<size_t>(index) < m.num_delegates_,
                                 kInvalidProgram,
                                 "invalid program: instruction %u: delegate index %d out of range "
                                 "(%lu delegates)",
                                 static_cast<unsigned>(pc), static_cast<int>(index),
                                 static_cast<unsigned long>(m.num_delegates_));
        out.kind = InstructionKind::kDelegateCall;
        out.delegate_index = index;
        out.key = m.delegates_[index].id;
        out.num_args = call->args()->size();
        RT_ALLOCATE_OR_RETURN(args, persistent, TensorView*, out.num_args, "delegate arguments");
        for (uint32_t k = 0; k < out.num_args; ++k) {
          const int32_t v = call->args()->Get(k);
          RT_CHECK_OR_RETURN_ERROR(value_ok(v) && m.values_[v].is_tensor(), kInvalidProgram,
                                   "invalid program: instruction %u delegate argument %u is value "
                                   "%d, not a tensor",
                                   static_cast<unsigned>(pc), static_cast<unsigned>(k),
                                   static_cast<int>(v));
          args[k] = m.values_[v].tensor;
        }
        out.tensor_args = args;
        break;
      }
      case et::InstructionArguments::MoveCall: {
        const et::MoveCall* call = instr->instr_args_as_MoveCall();
        RT_CHECK_OR_RETURN_ERROR(
            call != nullptr && value_ok(call->move_from()) && value_ok(call->move_to()),
            kInvalidProgram, "invalid program: instruction %u: MoveCall values out of range",
            static_cast<unsigned>(pc));
        out.kind = InstructionKind::kMove;
        out.a = call->move_from();
        out.b = call->move_to();
        break;
      }
      case et::InstructionArguments::JumpFalseCall: {
        const et::JumpFalseCall* call = instr->instr_args_as_JumpFalseCall();
        RT_CHECK_OR_RETURN_ERROR(
            call != nullptr && value_ok(call->cond_value_index()) &&
                call->destination_instruction() >= 0 &&
                static_cast<size_t>(call->destination_instruction()) <= m.num_instructions_,
            kInvalidProgram,
            "invalid program: instruction %u: JumpFalseCall condition or destination out of "
            "range",
            static_cast<unsigned>(pc));
        out.kind = InstructionKind::kJumpFalse;
        out.a = call->cond_value_index();
        out.b = call->destination_instruction();
        break;
      }
      case et::InstructionArguments::FreeCall: {
        const et::FreeCall* call = instr->instr_args_as_FreeCall();
        RT_CHECK_OR_RETURN_ERROR(call != nullptr && value_ok(call->value_index()), kInvalidProgram,
                                 "invalid program: instruction %u: FreeCall value out of range",
                                 static_cast<unsigned>(pc));
        out.kind = InstructionKind::kFree;
        out.a = call->value_index();
        break;
      }
      default:
        RT_INTERNAL_SET_MESSAGE("invalid program: instruction %u has unknown type %d",
                                static_cast<unsigned>(pc),
                                static_cast<int>(instr->instr_args_type()));
        return Error::kInvalidProgram;
    }
  }
  m.persistent_bytes_ = persistent->used() - used_before;
  return m;
}

const TensorView* Method::input(size_t i) const { return i < num_inputs_ ? inputs_[i] : nullptr; }

const TensorView* Method::GetOutput(size_t i) const {
  return i < num_outputs_ ? outputs_[i] : nullptr;
}

Error Method::SetInput(size_t i, const void* data, size_t size) {
  RT_CHECK_OR_RETURN_ERROR(i < num_inputs_, kInvalidArgument,
                           "SetInput: input %lu requested, the method has %lu",
                           static_cast<unsigned long>(i), static_cast<unsigned long>(num_inputs_));
  TensorView* t = inputs_[i];
  const size_t expected = static_cast<size_t>(t->NumBytes());
  RT_CHECK_OR_RETURN_ERROR(size == expected, kInvalidArgument,
                           "SetInput: input %lu takes %lu bytes, got %lu",
                           static_cast<unsigned long>(i), static_cast<unsigned long>(expected),
                           static_cast<unsigned long>(size));
  if (size == 0) return Error::kOk;
  RT_CHECK_OR_RETURN_ERROR(data != nullptr, kInvalidArgument, "SetInput: input %lu: null data",
                           static_cast<unsigned long>(i));
  std::memcpy(t->data, data, size);
  return Error::kOk;
}

InstructionInfo Method::instruction_info(size_t i) const {
  InstructionInfo info;
  if (i >= num_instructions_) {
    info.kind = InstructionKind::kFree;
    return info;
  }
  const Instruction& in = instructions_[i];
  info.kind = in.kind;
  info.name = in.key;
  info.event_name = in.event_name;
  info.delegate_index = in.kind == InstructionKind::kDelegateCall ? in.delegate_index : -1;
  return info;
}

uint64_t Method::LastDelegateCycles(size_t instruction) const {
  if (instruction >= num_instructions_) return 0;
  const Instruction& in = instructions_[instruction];
  if (in.kind != InstructionKind::kDelegateCall) return 0;
  const Delegate& d = delegates_[in.delegate_index];
  return d.backend->LastCycles(d.handle);
}

Error Method::Execute() {
  internal::BeginRun(tracer_, "Execute");
  internal::ProfileScope scope(tracer_, "Method::execute", -1, -1, clock_);
  size_t pc = 0;
  produced_outputs_ = false;
  while (pc < num_instructions_) {
    size_t next = pc + 1;
    RT_RETURN_IF_ERROR(ExecuteInstruction(pc, next));
    if (next == kEndInference) {
      // Profilers tell this run's partial chain from whole inferences by the mark.
      internal::LogMark(tracer_, kEndedEarlyEvent, 0, static_cast<int32_t>(pc), clock_);
      return Error::kOk;
    }
    pc = next;
  }
  produced_outputs_ = true;
  return Error::kOk;
}

// The hot path: no checks beyond what a data-dependent jump needs (STYLE.md rule 7); load did
// the rest.
Error Method::ExecuteInstruction(size_t pc, size_t& next_pc) {
  Instruction& in = instructions_[pc];
  const int32_t instruction = static_cast<int32_t>(pc);
  Error err = Error::kOk;
  switch (in.kind) {
    case InstructionKind::kKernelCall: {
      internal::ProfileScope op_scope(tracer_, "OPERATOR_CALL", 0, instruction, clock_);
      {
        internal::ProfileScope call_scope(tracer_, in.event_name, 0, instruction, clock_);
        KernelContext ctx{persistent_, temp_, in.op_data};
        err = in.kernel->eval(ctx, Span<Value* const>(in.args, in.num_args));
        if (ctx.end_inference) next_pc = kEndInference;
      }
      if (temp_ != nullptr) temp_->Reset();
      if (err != Error::kOk) AddInstructionContext(pc, "kernel", in.key, err);
      return err;
    }
    case InstructionKind::kDelegateCall: {
      internal::ProfileScope scope(tracer_, "DELEGATE_CALL", 0, instruction, clock_);
      Delegate& d = delegates_[in.delegate_index];
      backend_context_->temp = temp_;
      backend_context_->tracer = tracer_;
      backend_context_->chain = 0;
      backend_context_->instruction = instruction;
      err = d.backend->Execute(d.handle, Span<TensorView* const>(in.tensor_args, in.num_args),
                               *backend_context_);
      if (temp_ != nullptr) temp_->Reset();
      if (err != Error::kOk) AddInstructionContext(pc, "delegate", d.id, err);
      return err;
    }
    case InstructionKind::kMove: {
      internal::ProfileScope scope(tracer_, "MOVE_CALL", 0, instruction, clock_);
      values_[in.b] = values_[in.a];
      return Error::kOk;
    }
    case InstructionKind::kJumpFalse: {
      internal::ProfileScope scope(tracer_, "JF_CALL", 0, instruction, clock_);
      const Value& cond = values_[in.a];
      RT_CHECK_OR_RETURN_ERROR(cond.tag == ValueTag::kBool, kInvalidProgram,
                               "instruction %lu: jump condition value %d is not a Bool",
                               static_cast<unsigned long>(pc), static_cast<int>(in.a));
      if (!cond.bool_value) next_pc = static_cast<size_t>(in.b);
      return Error::kOk;
    }
    case InstructionKind::kFree:
      // Planned memory is never freed one tensor at a time; nothing to do.
      return Error::kOk;
  }
  return Error::kInternal;
}

}  // namespace boardlab::runtime
