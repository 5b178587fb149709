#include "runtime/executor/program.h"

#include <cstring>
#include <string>
#include <vector>

#include "boardlab/schema/program_generated.h"
#include "gtest/gtest.h"
#include "runtime/core/error.h"
#include "tests/runtime/executor_test_support.h"

namespace boardlab::runtime {
namespace {

namespace et = ::executorch_flatbuffer;
using testing::AlignedBytes;
using testing::CompilePte;
using testing::CpuOnly;

// Compiled once per process: compiling is the slow part of these tests.
const std::vector<uint8_t>& ConvCpuPte() {  // constant segment, no delegates
  static const std::vector<uint8_t> pte = CompilePte(boardlab::testing::SingleConv2D(), CpuOnly());
  return pte;
}
const std::vector<uint8_t>& ConvNpuPte() {  // delegate segment
  static const std::vector<uint8_t> pte =
      CompilePte(boardlab::testing::SingleConv2D(), compiler::CompileOptions{});
  return pte;
}
// CPU constants in segment 0 and NPU blobs in segments 1.. (stored, non-zero offsets).
const std::vector<uint8_t>& MixedPte() {
  static const std::vector<uint8_t> pte = [] {
    compiler::CompileOptions options;
    options.no_npu = {compiler::OpType::kFullyConnected};
    return CompilePte(boardlab::testing::TinyDsCnn(), options);
  }();
  return pte;
}
// A variable tensor: planned buffer 3 and its reset value in the mutable-data segment.
const std::vector<uint8_t>& SvdfPte() {
  static const std::vector<uint8_t> pte =
      CompilePte(boardlab::testing::SingleOpModel(compiler::OpType::kSvdf), CpuOnly());
  return pte;
}
const std::vector<uint8_t>& AddCpuPte() {  // bare flatbuffer, no segments
  static const std::vector<uint8_t> pte = CompilePte(testing::AddModel(), CpuOnly());
  return pte;
}

// Byte offset in the file of `table`'s field `field` (a VT_ constant); 0 when absent (default).
template <typename T>
size_t FieldOffset(const uint8_t* base, const T* table, uint16_t field) {
  const uint8_t* p = reinterpret_cast<const flatbuffers::Table*>(table)->GetAddressOf(field);
  return p == nullptr ? 0 : static_cast<size_t>(p - base);
}

// GCC 12 at -O2 traces offsets computed from flatbuffer accessors back to a table object and
// reports overflows that are not there.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
template <typename T>
void Poke(AlignedBytes& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

Error LoadError(const AlignedBytes& bytes,
                Program::Verification v = Program::Verification::kInternalConsistency) {
  Result<Program> p = Program::Load(bytes.span(), v);
  return p.error();
}

TEST(ProgramLoad, LoadsCpuProgramWithConstantSegment) {
  AlignedBytes bytes(ConvCpuPte());
  ASSERT_GT(bytes.size(), 0u);
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok()) << LastErrorMessage();
  EXPECT_EQ(p->num_methods(), 1u);
  EXPECT_STREQ(p->method_name(0), "forward");
  EXPECT_EQ(p->method_name(1), nullptr);
  Result<size_t> planned = p->NumPlannedBuffers("forward");
  ASSERT_TRUE(planned.ok());
  EXPECT_EQ(*planned, 1u);
  Result<size_t> arena = p->PlannedBufferSize("forward", 0);
  ASSERT_TRUE(arena.ok());
  EXPECT_GT(*arena, 0u);
  EXPECT_EQ(p->PlannedBufferSize("forward", 1).error(), Error::kInvalidArgument);
  EXPECT_EQ(p->NumPlannedBuffers("backward").error(), Error::kNotFound);
  Result<Span<const uint8_t>> constants = p->Segment(0);
  ASSERT_TRUE(constants.ok());
  EXPECT_GT(constants->size(), 0u);
  EXPECT_EQ(p->Segment(1).error(), Error::kInvalidArgument);
  Result<const uint8_t*> first = p->ConstantData(1, 4);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, constants->data());  // offsets[1] = 0: the first real tensor
  EXPECT_EQ(p->ConstantData(1000, 1).error(), Error::kInvalidProgram);
  EXPECT_EQ(p->ConstantData(1, constants->size() + 1).error(), Error::kInvalidProgram);
}

TEST(ProgramLoad, LoadsNpuProgramWithDelegateSegment) {
  AlignedBytes bytes(ConvNpuPte());
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok()) << LastErrorMessage();
  const et::ExecutionPlan* plan = p->flatbuffer()->execution_plan()->Get(0);
  ASSERT_NE(plan->delegates(), nullptr);
  ASSERT_GT(plan->delegates()->size(), 0u);
  const et::BackendDelegate* d = plan->delegates()->Get(0);
  EXPECT_STREQ(d->id()->c_str(), "BoardlabNeutronBackend");
  Result<Span<const uint8_t>> blob =
      p->DelegateData(static_cast<uint8_t>(d->processed()->location()), d->processed()->index());
  ASSERT_TRUE(blob.ok());
  ASSERT_GE(blob->size(), 4u);
  EXPECT_EQ(std::memcmp(blob->data(), "BLNP", 4), 0);
}

TEST(ProgramLoad, LoadsBareFlatbufferWithoutHeader) {
  AlignedBytes bytes(AddCpuPte());
  ASSERT_NE(std::memcmp(bytes.data() + 8, "eh00", 4), 0) << "expected no extended header";
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok()) << LastErrorMessage();
  EXPECT_EQ(p->program_size(), bytes.size());
}

TEST(ProgramLoad, MinimalVerificationLoadsValidFiles) {
  for (const std::vector<uint8_t>* pte :
       {&ConvCpuPte(), &ConvNpuPte(), &AddCpuPte(), &MixedPte(), &SvdfPte()}) {
    AlignedBytes bytes(*pte);
    EXPECT_EQ(LoadError(bytes, Program::Verification::kMinimal), Error::kOk) << LastErrorMessage();
  }
}

TEST(ProgramLoad, TruncatedFilesAreInvalidAtEveryLength) {
  for (const std::vector<uint8_t>* pte :
       {&ConvCpuPte(), &ConvNpuPte(), &AddCpuPte(), &MixedPte(), &SvdfPte()}) {
    for (size_t len = 0; len < pte->size(); ++len) {
      AlignedBytes bytes(pte->data(), len);
      const Error e = LoadError(bytes);
      ASSERT_EQ(e, Error::kInvalidProgram) << "length " << len << " of " << pte->size();
      ASSERT_NE(std::string(LastErrorMessage()), "");
    }
  }
}

TEST(ProgramLoad, TruncatedFileMessageSaysTruncated) {
  AlignedBytes bytes(ConvNpuPte().data(), ConvNpuPte().size() - 1);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("truncated"), std::string::npos)
      << LastErrorMessage();
}

TEST(ProgramLoad, OtherEtVersionIsIncompatible) {
  AlignedBytes bytes(ConvCpuPte());
  std::memcpy(bytes.data() + 4, "ET11", 4);
  EXPECT_EQ(LoadError(bytes), Error::kIncompatibleVersion);
  EXPECT_NE(std::string(LastErrorMessage()).find("'ET11'"), std::string::npos)
      << LastErrorMessage();
}

TEST(ProgramLoad, ForeignIdentifierIsInvalid) {
  AlignedBytes bytes(ConvCpuPte());
  std::memcpy(bytes.data() + 4, "TFL3", 4);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("not an ExecuTorch program"), std::string::npos)
      << LastErrorMessage();
}

TEST(ProgramLoad, MisalignedDataIsRejected) {
  std::vector<uint8_t> storage(ConvCpuPte().size() + 32);
  AlignedBytes aligned(storage);
  std::memcpy(aligned.data() + 1, ConvCpuPte().data(), ConvCpuPte().size());
  Result<Program> p = Program::Load({aligned.data() + 1, ConvCpuPte().size()});
  EXPECT_EQ(p.error(), Error::kInvalidArgument);
  EXPECT_EQ(Program::Load({nullptr, 0}).error(), Error::kInvalidArgument);
}

TEST(ProgramLoad, ExtendedHeaderShorterThan24IsInvalid) {
  AlignedBytes bytes(ConvCpuPte());
  Poke<uint32_t>(bytes, 12, 16);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("header length 16"), std::string::npos);
}

TEST(ProgramLoad, ProgramSizeBeyondFileIsInvalid) {
  AlignedBytes bytes(ConvCpuPte());
  Poke<uint64_t>(bytes, 16, bytes.size() + 1);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_EQ(LoadError(bytes, Program::Verification::kMinimal), Error::kInvalidProgram);
}

TEST(ProgramLoad, SegmentDataSizeBeyondFileIsInvalid) {
  AlignedBytes bytes(ConvCpuPte());
  uint64_t data_size;
  std::memcpy(&data_size, bytes.data() + 32, 8);
  Poke<uint64_t>(bytes, 32, data_size + 1);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
}

TEST(ProgramLoad, CorruptedSegmentSizeIsInvalid) {
  AlignedBytes bytes(ConvNpuPte());
  const et::Program* fb = et::GetProgram(bytes.data());
  ASSERT_GT(fb->segments()->size(), 0u);
  const size_t at = FieldOffset(bytes.data(), fb->segments()->Get(0), et::DataSegment::VT_SIZE);
  ASSERT_GT(at, 0u);
  Poke<uint64_t>(bytes, at, uint64_t{1} << 40);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("segment 0"), std::string::npos)
      << LastErrorMessage();
  // Offset + size wrapping around 2^64 must not pass the bounds check.
  Poke<uint64_t>(bytes, at, ~uint64_t{0});
  EXPECT_EQ(LoadError(bytes, Program::Verification::kMinimal), Error::kInvalidProgram);
}

TEST(ProgramLoad, CorruptedSegmentOffsetIsInvalid) {
  // Segment 0 sits at offset 0, which the writer omits; segment 1 has a stored offset.
  AlignedBytes bytes(MixedPte());
  const et::Program* fb = et::GetProgram(bytes.data());
  ASSERT_GE(fb->segments()->size(), 2u);
  const size_t at = FieldOffset(bytes.data(), fb->segments()->Get(1), et::DataSegment::VT_OFFSET);
  ASSERT_GT(at, 0u);
  Poke<uint64_t>(bytes, at, bytes.size());
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("segment 1"), std::string::npos)
      << LastErrorMessage();
}

TEST(ProgramLoad, ConstantOffsetOutsideSegmentIsInvalid) {
  AlignedBytes bytes(ConvCpuPte());
  const et::Program* fb = et::GetProgram(bytes.data());
  const auto* offsets = fb->constant_segment()->offsets();
  ASSERT_GT(offsets->size(), 2u);
  const size_t at =
      static_cast<size_t>(reinterpret_cast<const uint8_t*>(offsets->data() + 2) - bytes.data());
  Poke<uint64_t>(bytes, at, uint64_t{1} << 32);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("constant 2"), std::string::npos)
      << LastErrorMessage();
}

TEST(ProgramLoad, DelegateSegmentIndexOutOfRangeIsInvalid) {
  AlignedBytes bytes(MixedPte());  // delegate blobs from segment 1 on: the index is stored
  const et::Program* fb = et::GetProgram(bytes.data());
  const auto* processed = fb->execution_plan()->Get(0)->delegates()->Get(0)->processed();
  const size_t at =
      FieldOffset(bytes.data(), processed, et::BackendDelegateDataReference::VT_INDEX);
  ASSERT_GT(at, 0u);
  Poke<uint32_t>(bytes, at, 77);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("segment 77"), std::string::npos)
      << LastErrorMessage();
}

TEST(ProgramLoad, LoadsStatefulProgramWithMutableData) {
  AlignedBytes bytes(SvdfPte());
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok()) << LastErrorMessage();
  Result<size_t> planned = p->NumPlannedBuffers("forward");
  ASSERT_TRUE(planned.ok());
  EXPECT_EQ(*planned, 3u);  // arena, (empty) weight scratch, state
  EXPECT_EQ(*p->PlannedBufferSize("forward", 1), 0u);
  EXPECT_GT(*p->PlannedBufferSize("forward", 2), 0u);
  const auto* lists = p->flatbuffer()->mutable_data_segments();
  ASSERT_NE(lists, nullptr);
  ASSERT_EQ(lists->size(), 1u);
  Result<const uint8_t*> initial = p->MutableData(0, 1, 2);
  ASSERT_TRUE(initial.ok()) << LastErrorMessage();
  EXPECT_EQ(p->MutableData(1, 1, 2).error(), Error::kInvalidProgram);
  EXPECT_EQ(p->MutableData(0, 9, 2).error(), Error::kInvalidProgram);
  EXPECT_EQ(p->MutableData(0, 1, 1 << 20).error(), Error::kInvalidProgram);
}

TEST(ProgramLoad, MutableDataOutsideItsSegmentIsInvalid) {
  AlignedBytes bytes(SvdfPte());
  const et::Program* fb = et::GetProgram(bytes.data());
  const auto* offsets = fb->mutable_data_segments()->Get(0)->offsets();
  ASSERT_GE(offsets->size(), 2u);
  const size_t at =
      static_cast<size_t>(reinterpret_cast<const uint8_t*>(offsets->data() + 1) - bytes.data());
  Poke<uint64_t>(bytes, at, uint64_t{1} << 32);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("mutable data 0 entry 1"), std::string::npos)
      << LastErrorMessage();
}

TEST(ProgramLoad, MutableDataInAMissingSegmentIsInvalid) {
  AlignedBytes bytes(SvdfPte());
  const et::Program* fb = et::GetProgram(bytes.data());
  const size_t at = FieldOffset(bytes.data(), fb->mutable_data_segments()->Get(0),
                                et::SubsegmentOffsets::VT_SEGMENT_INDEX);
  ASSERT_GT(at, 0u);  // segment 1: the constants come first
  Poke<uint32_t>(bytes, at, 77);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("missing segment"), std::string::npos)
      << LastErrorMessage();
}

TEST(ProgramLoad, SegmentsWithoutHeaderAreInvalid) {
  // Turn the header magic into padding: the reader then sees a bare flatbuffer that still lists
  // segments it cannot locate.
  AlignedBytes bytes(ConvCpuPte());
  std::memcpy(bytes.data() + 8, "xx00", 4);
  EXPECT_EQ(LoadError(bytes), Error::kInvalidProgram);
}

// Flipping bytes anywhere must give an error or a program, never a crash (ASan/UBSan builds).
TEST(ProgramLoad, RandomCorruptionNeverCrashes) {
  for (const std::vector<uint8_t>* pte :
       {&ConvCpuPte(), &ConvNpuPte(), &AddCpuPte(), &MixedPte(), &SvdfPte()}) {
    uint64_t state = 12345;
    for (int trial = 0; trial < 400; ++trial) {
      AlignedBytes bytes(*pte);
      for (int flips = 0; flips < 3; ++flips) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const size_t at = static_cast<size_t>((state >> 33) % bytes.size());
        bytes.data()[at] ^= static_cast<uint8_t>(1u << ((state >> 20) & 7));
      }
      Result<Program> p = Program::Load(bytes.span());
      if (!p.ok()) continue;
      // A corrupted buffer size could ask for gigabytes; such files are not what this tests.
      Result<size_t> planned = p->NumPlannedBuffers("forward");
      if (!planned.ok()) continue;
      bool huge = false;
      for (size_t i = 0; i < *planned; ++i) {
        Result<size_t> size = p->PlannedBufferSize("forward", i);
        huge = huge || !size.ok() || *size > (16u << 20);
      }
      if (huge) continue;
      testing::TestMemory memory(*p);
      testing::FakeNpuBackend npu;
      BackendRegistry registry;
      ASSERT_EQ(registry.Register(&npu), Error::kOk);
      MemoryManager manager = memory.manager();
      Result<Method> m = p->LoadMethod("forward", manager, registry, nullptr, testing::FakeLookup);
      if (m.ok()) (void)m->Execute();
    }
  }
}

}  // namespace
}  // namespace boardlab::runtime
