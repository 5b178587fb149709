#include "runtime/executor/program.h"

#include <cstddef>
#include <cstring>

#include "boardlab/schema/program_generated.h"

namespace boardlab::runtime {
namespace {

namespace et = ::executorch_flatbuffer;

// executorch-formats.md 1.1: the extended header sits at byte 8, after the root offset and the
// file identifier.
constexpr size_t kHeaderOffset = 8;
constexpr char kHeaderMagic[4] = {'e', 'h', '0', '0'};
// Magic + length + program_size + segment_base_offset: the pre-1.0 header every reader accepts.
constexpr uint32_t kMinHeaderLength = 24;
// ... + segment_data_size, present from ExecuTorch 1.0 on.
constexpr uint32_t kHeaderLengthWithDataSize = 32;

uint32_t ReadU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t ReadU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool IsAlnum(uint8_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// a + b <= limit without overflowing.
bool FitsWithin(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

}  // namespace

Result<Program> Program::Load(Span<const uint8_t> file, Verification verification) {
  RT_CHECK_OR_RETURN_ERROR(file.data() != nullptr, kInvalidArgument, "Program::Load: null data");
  // FlatBuffers readers load scalars through aligned pointers; a misaligned buffer would be
  // undefined behaviour on the host and a fault on Cortex-M.
  RT_CHECK_OR_RETURN_ERROR(
      reinterpret_cast<uintptr_t>(file.data()) % alignof(std::max_align_t) == 0, kInvalidArgument,
      "Program::Load: data at %p is not aligned to %lu bytes",
      static_cast<const void*>(file.data()), static_cast<unsigned long>(alignof(std::max_align_t)));
  const uint8_t* d = file.data();
  const size_t size = file.size();
  RT_CHECK_OR_RETURN_ERROR(size >= kHeaderOffset, kInvalidProgram,
                           "invalid program: file is %lu bytes, shorter than the 8-byte "
                           "FlatBuffers root offset and identifier",
                           static_cast<unsigned long>(size));

  // Identifier first: it says whether this is a program at all and which version.
  if (std::memcmp(d + 4, kFileIdentifier, 4) != 0) {
    const bool other_version = d[4] == 'E' && d[5] == 'T' && IsAlnum(d[6]) && IsAlnum(d[7]);
    if (other_version) {
      RT_INTERNAL_SET_MESSAGE(
          "incompatible program: file identifier '%c%c%c%c' is not the supported '%s'", d[4], d[5],
          d[6], d[7], kFileIdentifier);
      return Error::kIncompatibleVersion;
    }
    RT_INTERNAL_SET_MESSAGE(
        "invalid program: not an ExecuTorch program (identifier bytes %02x %02x %02x %02x, "
        "expected '%s')",
        d[4], d[5], d[6], d[7], kFileIdentifier);
    return Error::kInvalidProgram;
  }

  Program p;
  p.data_ = d;
  p.size_ = size;
  p.program_size_ = size;
  bool has_header = false;
  if (size >= kHeaderOffset + 4 && std::memcmp(d + kHeaderOffset, kHeaderMagic, 4) == 0) {
    has_header = true;
    RT_CHECK_OR_RETURN_ERROR(size >= kHeaderOffset + kMinHeaderLength, kInvalidProgram,
                             "invalid program: file is %lu bytes, too short for its extended "
                             "header (needs %lu)",
                             static_cast<unsigned long>(size),
                             static_cast<unsigned long>(kHeaderOffset + kMinHeaderLength));
    const uint32_t length = ReadU32(d + kHeaderOffset + 4);
    RT_CHECK_OR_RETURN_ERROR(length >= kMinHeaderLength, kInvalidProgram,
                             "invalid program: extended header length %u < %u",
                             static_cast<unsigned>(length),
                             static_cast<unsigned>(kMinHeaderLength));
    RT_CHECK_OR_RETURN_ERROR(
        FitsWithin(kHeaderOffset, length, size), kInvalidProgram,
        "invalid program: extended header length %u runs past the %lu-byte file",
        static_cast<unsigned>(length), static_cast<unsigned long>(size));
    const uint64_t program_size = ReadU64(d + kHeaderOffset + 8);
    const uint64_t segment_base = ReadU64(d + kHeaderOffset + 16);
    const uint64_t segment_data_size =
        length >= kHeaderLengthWithDataSize ? ReadU64(d + kHeaderOffset + 24) : 0;
    RT_CHECK_OR_RETURN_ERROR(
        program_size >= kHeaderOffset + length && program_size <= size, kInvalidProgram,
        "invalid program: program_size %llu outside [%lu, file size %lu]",
        static_cast<unsigned long long>(program_size),
        static_cast<unsigned long>(kHeaderOffset + length), static_cast<unsigned long>(size));
    // executorch-formats.md 1.3: the expected file size is known unless an old header (no
    // segment_data_size) has segments.
    if ((segment_data_size == 0 && segment_base == 0) || segment_data_size > 0) {
      const bool fits = segment_base == 0 || FitsWithin(segment_base, segment_data_size, size);
      RT_CHECK_OR_RETURN_ERROR(
          fits, kInvalidProgram,
          "invalid program: file is %lu bytes but the header says segments end at %llu "
          "(segment_base_offset %llu + segment_data_size %llu); the file is truncated",
          static_cast<unsigned long>(size),
          static_cast<unsigned long long>(segment_base + segment_data_size),
          static_cast<unsigned long long>(segment_base),
          static_cast<unsigned long long>(segment_data_size));
    }
    RT_CHECK_OR_RETURN_ERROR(
        segment_base == 0 || (segment_base >= program_size && segment_base <= size),
        kInvalidProgram,
        "invalid program: segment_base_offset %llu outside [program_size %llu, file size %lu]",
        static_cast<unsigned long long>(segment_base),
        static_cast<unsigned long long>(program_size), static_cast<unsigned long>(size));
    p.program_size_ = static_cast<size_t>(program_size);
    p.segment_base_ = segment_base;
    p.segment_end_ = segment_base == 0       ? segment_base
                     : segment_data_size > 0 ? segment_base + segment_data_size
                                             : size;
  }

  const uint32_t root = ReadU32(d);
  RT_CHECK_OR_RETURN_ERROR(root >= kHeaderOffset && root < p.program_size_, kInvalidProgram,
                           "invalid program: root table offset %u outside [8, %lu)",
                           static_cast<unsigned>(root),
                           static_cast<unsigned long>(p.program_size_));
  if (verification == Verification::kInternalConsistency) {
    flatbuffers::Verifier::Options options;
    options.check_alignment = true;
    flatbuffers::Verifier verifier(d, p.program_size_, options);
    RT_CHECK_OR_RETURN_ERROR(et::VerifyProgramBuffer(verifier), kInvalidProgram,
                             "invalid program: the Program flatbuffer (%lu bytes) fails "
                             "FlatBuffers verification (truncated or corrupt)",
                             static_cast<unsigned long>(p.program_size_));
  }
  p.program_ = et::GetProgram(d);

  // Segments. Checked in both modes: they are few and an out-of-range segment would make every
  // later pointer into the file wrong.
  const auto* segments = p.program_->segments();
  const size_t num_segments = segments == nullptr ? 0 : segments->size();
  RT_CHECK_OR_RETURN_ERROR(num_segments == 0 || (has_header && p.segment_base_ != 0),
                           kInvalidProgram,
                           "invalid program: %lu segments but no extended header / segment base",
                           static_cast<unsigned long>(num_segments));
  const uint64_t segment_limit = p.segment_end_ - p.segment_base_;
  for (size_t i = 0; i < num_segments; ++i) {
    const et::DataSegment* s = segments->Get(static_cast<flatbuffers::uoffset_t>(i));
    RT_CHECK_OR_RETURN_ERROR(s != nullptr, kInvalidProgram, "invalid program: segment %lu is null",
                             static_cast<unsigned long>(i));
    RT_CHECK_OR_RETURN_ERROR(
        FitsWithin(s->offset(), s->size(), segment_limit), kInvalidProgram,
        "invalid program: segment %lu [%llu, +%llu) runs past the %llu bytes of segment data",
        static_cast<unsigned long>(i), static_cast<unsigned long long>(s->offset()),
        static_cast<unsigned long long>(s->size()), static_cast<unsigned long long>(segment_limit));
  }

  // Constants (executorch-formats.md 1.3): a non-trivial constant_segment excludes the legacy
  // constant_buffer; every offset must lie inside the segment (tensor sizes are checked when a
  // Method binds its tensors).
  const et::SubsegmentOffsets* constant_segment = p.program_->constant_segment();
  const auto* constant_offsets =
      constant_segment == nullptr ? nullptr : constant_segment->offsets();
  if (constant_offsets != nullptr && constant_offsets->size() > 0) {
    const auto* legacy = p.program_->constant_buffer();
    RT_CHECK_OR_RETURN_ERROR(legacy == nullptr || legacy->size() == 0, kInvalidProgram,
                             "invalid program: both constant_segment and constant_buffer are set");
    const uint32_t index = constant_segment->segment_index();
    RT_CHECK_OR_RETURN_ERROR(index < num_segments, kInvalidProgram,
                             "invalid program: constant segment index %u, program has %lu "
                             "segments",
                             static_cast<unsigned>(index),
                             static_cast<unsigned long>(num_segments));
    const et::DataSegment* s = segments->Get(index);
    p.constants_ = d + p.segment_base_ + s->offset();
    p.constants_size_ = static_cast<size_t>(s->size());
    for (flatbuffers::uoffset_t i = 0; i < constant_offsets->size(); ++i) {
      const uint64_t offset = constant_offsets->Get(i);
      RT_CHECK_OR_RETURN_ERROR(offset <= p.constants_size_, kInvalidProgram,
                               "invalid program: constant %u at offset %llu is outside the "
                               "%lu-byte constant segment",
                               static_cast<unsigned>(i), static_cast<unsigned long long>(offset),
                               static_cast<unsigned long>(p.constants_size_));
    }
  }

  // Mutable-data segments (initial values of variable tensors): each refers to an existing
  // segment, and every offset lies inside it.
  const auto* mutable_segments = p.program_->mutable_data_segments();
  for (flatbuffers::uoffset_t i = 0; mutable_segments != nullptr && i < mutable_segments->size();
       ++i) {
    const et::SubsegmentOffsets* m = mutable_segments->Get(i);
    RT_CHECK_OR_RETURN_ERROR(m != nullptr && m->segment_index() < num_segments, kInvalidProgram,
                             "invalid program: mutable data %u refers to a missing segment",
                             static_cast<unsigned>(i));
    const uint64_t size = segments->Get(m->segment_index())->size();
    for (flatbuffers::uoffset_t k = 0; m->offsets() != nullptr && k < m->offsets()->size(); ++k) {
      RT_CHECK_OR_RETURN_ERROR(m->offsets()->Get(k) <= size, kInvalidProgram,
                               "invalid program: mutable data %u entry %u at offset %llu is "
                               "outside its %llu-byte segment",
                               static_cast<unsigned>(i), static_cast<unsigned>(k),
                               static_cast<unsigned long long>(m->offsets()->Get(k)),
                               static_cast<unsigned long long>(size));
    }
  }

  // Every plan needs a name (methods are found by it), and every delegate's blob must exist.
  const auto* plans = p.program_->execution_plan();
  RT_CHECK_OR_RETURN_ERROR(plans != nullptr && plans->size() > 0, kInvalidProgram,
                           "invalid program: no execution plans");
  for (flatbuffers::uoffset_t i = 0; i < plans->size(); ++i) {
    const et::ExecutionPlan* plan = plans->Get(i);
    RT_CHECK_OR_RETURN_ERROR(plan != nullptr && plan->name() != nullptr, kInvalidProgram,
                             "invalid program: execution plan %u has no name",
                             static_cast<unsigned>(i));
    const auto* delegates = plan->delegates();
    if (delegates == nullptr) continue;
    for (flatbuffers::uoffset_t j = 0; j < delegates->size(); ++j) {
      const et::BackendDelegate* delegate = delegates->Get(j);
      RT_CHECK_OR_RETURN_ERROR(
          delegate != nullptr && delegate->id() != nullptr && delegate->processed() != nullptr,
          kInvalidProgram, "invalid program: plan '%s' delegate %u lacks an id or data",
          plan->name()->c_str(), static_cast<unsigned>(j));
      Result<Span<const uint8_t>> blob = p.DelegateData(
          static_cast<uint8_t>(delegate->processed()->location()), delegate->processed()->index());
      if (!blob.ok()) return blob.error();
    }
  }
  return p;
}

size_t Program::num_methods() const {
  const auto* plans = program_->execution_plan();
  return plans == nullptr ? 0 : plans->size();
}

const char* Program::method_name(size_t i) const {
  if (i >= num_methods()) return nullptr;
  return program_->execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(i))->name()->c_str();
}

const et::ExecutionPlan* Program::FindPlan(const char* name) const {
  if (name == nullptr) return nullptr;
  const auto* plans = program_->execution_plan();
  for (flatbuffers::uoffset_t i = 0; i < plans->size(); ++i) {
    if (std::strcmp(plans->Get(i)->name()->c_str(), name) == 0) return plans->Get(i);
  }
  return nullptr;
}

Result<size_t> Program::NumPlannedBuffers(const char* name) const {
  const et::ExecutionPlan* plan = FindPlan(name);
  RT_CHECK_OR_RETURN_ERROR(plan != nullptr, kNotFound, "no method '%s' in the program",
                           name == nullptr ? "(null)" : name);
  const auto* sizes = plan->non_const_buffer_sizes();
  RT_CHECK_OR_RETURN_ERROR(sizes != nullptr, kInvalidProgram,
                           "invalid program: method '%s' has no non_const_buffer_sizes", name);
  // Entry 0 is reserved (executorch-formats.md 1.5).
  return sizes->size() == 0 ? size_t{0} : static_cast<size_t>(sizes->size() - 1);
}

Result<size_t> Program::PlannedBufferSize(const char* name, size_t i) const {
  RT_ASSIGN_OR_RETURN(const size_t count, NumPlannedBuffers(name));
  RT_CHECK_OR_RETURN_ERROR(i < count, kInvalidArgument,
                           "method '%s' has %lu planned buffers, asked for buffer %lu", name,
                           static_cast<unsigned long>(count), static_cast<unsigned long>(i));
  const int64_t bytes =
      FindPlan(name)->non_const_buffer_sizes()->Get(static_cast<flatbuffers::uoffset_t>(i + 1));
  RT_CHECK_OR_RETURN_ERROR(bytes >= 0, kInvalidProgram,
                           "invalid program: method '%s' planned buffer %lu has size %lld", name,
                           static_cast<unsigned long>(i), static_cast<long long>(bytes));
  return static_cast<size_t>(bytes);
}

Result<Span<const uint8_t>> Program::Segment(size_t index) const {
  const auto* segments = program_->segments();
  const size_t count = segments == nullptr ? 0 : segments->size();
  RT_CHECK_OR_RETURN_ERROR(index < count, kInvalidArgument,
                           "segment %lu requested, program has %lu",
                           static_cast<unsigned long>(index), static_cast<unsigned long>(count));
  const et::DataSegment* s = segments->Get(static_cast<flatbuffers::uoffset_t>(index));
  return Span<const uint8_t>(data_ + segment_base_ + s->offset(), static_cast<size_t>(s->size()));
}

Result<const uint8_t*> Program::ConstantData(uint32_t data_buffer_idx, size_t size) const {
  const et::SubsegmentOffsets* constant_segment = program_->constant_segment();
  const auto* offsets = constant_segment == nullptr ? nullptr : constant_segment->offsets();
  if (offsets != nullptr && offsets->size() > 0) {
    RT_CHECK_OR_RETURN_ERROR(data_buffer_idx < offsets->size(), kInvalidProgram,
                             "invalid program: constant %u requested, the constant segment has "
                             "%u entries",
                             static_cast<unsigned>(data_buffer_idx),
                             static_cast<unsigned>(offsets->size()));
    const uint64_t offset = offsets->Get(data_buffer_idx);
    RT_CHECK_OR_RETURN_ERROR(
        FitsWithin(offset, size, constants_size_), kInvalidProgram,
        "invalid program: constant %u [%llu, +%lu) runs past the %lu-byte "
        "constant segment",
        static_cast<unsigned>(data_buffer_idx), static_cast<unsigned long long>(offset),
        static_cast<unsigned long>(size), static_cast<unsigned long>(constants_size_));
    return constants_ + offset;
  }
  // Legacy inline constants (deprecated in ExecuTorch 0.7; still readable).
  const auto* buffers = program_->constant_buffer();
  RT_CHECK_OR_RETURN_ERROR(buffers != nullptr && data_buffer_idx < buffers->size(), kInvalidProgram,
                           "invalid program: constant %u requested but the program has no such "
                           "constant data",
                           static_cast<unsigned>(data_buffer_idx));
  const et::Buffer* buffer = buffers->Get(data_buffer_idx);
  const auto* storage = buffer == nullptr ? nullptr : buffer->storage();
  const size_t available = storage == nullptr ? 0 : storage->size();
  RT_CHECK_OR_RETURN_ERROR(size <= available, kInvalidProgram,
                           "invalid program: constant buffer %u holds %lu bytes, tensor needs %lu",
                           static_cast<unsigned>(data_buffer_idx),
                           static_cast<unsigned long>(available), static_cast<unsigned long>(size));
  return size == 0 ? data_ : storage->Data();
}

Result<const uint8_t*> Program::MutableData(uint64_t segment_list_index, uint32_t data_buffer_idx,
                                            size_t size) const {
  const auto* lists = program_->mutable_data_segments();
  RT_CHECK_OR_RETURN_ERROR(lists != nullptr && segment_list_index < lists->size(), kInvalidProgram,
                           "invalid program: mutable data list %llu requested, the program has "
                           "%u",
                           static_cast<unsigned long long>(segment_list_index),
                           static_cast<unsigned>(lists == nullptr ? 0 : lists->size()));
  const et::SubsegmentOffsets* list =
      lists->Get(static_cast<flatbuffers::uoffset_t>(segment_list_index));
  const auto* offsets = list->offsets();
  RT_CHECK_OR_RETURN_ERROR(offsets != nullptr && data_buffer_idx < offsets->size(), kInvalidProgram,
                           "invalid program: mutable data %u requested, the list has %u entries",
                           static_cast<unsigned>(data_buffer_idx),
                           static_cast<unsigned>(offsets == nullptr ? 0 : offsets->size()));
  RT_ASSIGN_OR_RETURN(const Span<const uint8_t> segment, Segment(list->segment_index()));
  const uint64_t offset = offsets->Get(data_buffer_idx);
  RT_CHECK_OR_RETURN_ERROR(
      FitsWithin(offset, size, segment.size()), kInvalidProgram,
      "invalid program: mutable data %u [%llu, +%lu) runs past the %lu-byte "
      "segment",
      static_cast<unsigned>(data_buffer_idx), static_cast<unsigned long long>(offset),
      static_cast<unsigned long>(size), static_cast<unsigned long>(segment.size()));
  return segment.data() + offset;
}

Result<Span<const uint8_t>> Program::DelegateData(uint8_t location, uint32_t index) const {
  if (location == static_cast<uint8_t>(et::DataLocation::SEGMENT)) {
    const auto* segments = program_->segments();
    const size_t count = segments == nullptr ? 0 : segments->size();
    RT_CHECK_OR_RETURN_ERROR(index < count, kInvalidProgram,
                             "invalid program: delegate data in segment %u, program has %lu "
                             "segments",
                             static_cast<unsigned>(index), static_cast<unsigned long>(count));
    return Segment(index);
  }
  RT_CHECK_OR_RETURN_ERROR(location == static_cast<uint8_t>(et::DataLocation::INLINE),
                           kInvalidProgram, "invalid program: delegate data location %u", location);
  const auto* inline_data = program_->backend_delegate_data();
  RT_CHECK_OR_RETURN_ERROR(inline_data != nullptr && index < inline_data->size(), kInvalidProgram,
                           "invalid program: inline delegate data %u does not exist",
                           static_cast<unsigned>(index));
  const et::BackendDelegateInlineData* blob = inline_data->Get(index);
  RT_CHECK_OR_RETURN_ERROR(blob != nullptr && blob->data() != nullptr, kInvalidProgram,
                           "invalid program: inline delegate data %u is empty",
                           static_cast<unsigned>(index));
  return Span<const uint8_t>(blob->data()->Data(), blob->data()->size());
}

}  // namespace boardlab::runtime
