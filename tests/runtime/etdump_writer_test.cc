// ETDump writer / reader: the bytes must be what ExecuTorch's tools read (executorch-formats.md
// section 3): size-prefixed "ED00", RunData per BeginRun, ProfileEvent fields, delegate events
// with an int id, no name and a metadata vector.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "boardlab/schema/etdump_generated.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/profiling/etdump/etdump_reader.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "tests/support/test_paths.h"

namespace boardlab::runtime::etdump {
namespace {

std::vector<uint8_t> WriteSample(std::vector<uint8_t>& buffer) {
  EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Default");
  w.LogProfileEvent("Program::load_method", -1, -1, 1, 5);
  w.BeginRun("Execute");
  const uint8_t meta[1] = {0};
  w.LogDelegateEvent(10, 0, 0, 100, 150, meta, 1);
  w.LogDelegateEvent(11, 0, 0, 150, 170, nullptr, 0);
  w.LogProfileEvent("DELEGATE_CALL", 0, 0, 90, 180);
  w.LogProfileEvent("native_call_softmax.out", 0, 1, 180, 200);
  w.LogProfileEvent("Method::execute", -1, -1, 80, 210);
  auto bytes = w.Finish();
  EXPECT_TRUE(bytes.ok());
  return std::vector<uint8_t>(bytes->begin(), bytes->end());
}

TEST(EtdumpWriterTest, ContainerIsSizePrefixedED00) {
  std::vector<uint8_t> buffer(16 * 1024);
  const std::vector<uint8_t> etdp = WriteSample(buffer);
  ASSERT_GE(etdp.size(), 12u);
  uint32_t prefix;
  std::memcpy(&prefix, etdp.data(), 4);
  EXPECT_EQ(prefix, etdp.size() - 4);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(etdp.data()) + 8, 4), "ED00");
  flatbuffers::Verifier v(etdp.data(), etdp.size());
  EXPECT_TRUE(::etdump::VerifySizePrefixedETDumpBuffer(v));
}

TEST(EtdumpWriterTest, EveryFieldRoundTrips) {
  std::vector<uint8_t> buffer(16 * 1024);
  const std::vector<uint8_t> etdp = WriteSample(buffer);
  const ::etdump::ETDump* root = flatbuffers::GetSizePrefixedRoot<::etdump::ETDump>(etdp.data());
  EXPECT_EQ(root->version(), 0u);
  ASSERT_EQ(root->run_data()->size(), 2u);
  const auto* load = root->run_data()->Get(0);
  EXPECT_STREQ(load->name()->c_str(), "Default");
  EXPECT_EQ(load->bundled_input_index(), -1);
  ASSERT_EQ(load->events()->size(), 1u);
  const auto* run = root->run_data()->Get(1);
  EXPECT_STREQ(run->name()->c_str(), "Execute");
  ASSERT_EQ(run->events()->size(), 5u);
  const auto* d0 = run->events()->Get(0)->profile_event();
  ASSERT_NE(d0, nullptr);
  EXPECT_EQ(d0->name(), nullptr);
  EXPECT_EQ(d0->delegate_debug_id_int(), 10);
  EXPECT_EQ(d0->delegate_debug_id_str(), nullptr);
  EXPECT_EQ(d0->chain_index(), 0);
  EXPECT_EQ(d0->instruction_id(), 0);
  EXPECT_EQ(d0->start_time(), 100u);
  EXPECT_EQ(d0->end_time(), 150u);
  ASSERT_NE(d0->delegate_debug_metadata(), nullptr);
  EXPECT_EQ(d0->delegate_debug_metadata()->size(), 1u);
  const auto* d1 = run->events()->Get(1)->profile_event();
  ASSERT_NE(d1->delegate_debug_metadata(), nullptr);  // written even when empty
  EXPECT_EQ(d1->delegate_debug_metadata()->size(), 0u);
  const auto* call = run->events()->Get(2)->profile_event();
  EXPECT_STREQ(call->name()->c_str(), "DELEGATE_CALL");
  EXPECT_EQ(call->delegate_debug_id_int(), -1);
  EXPECT_EQ(call->delegate_debug_metadata(), nullptr);
  const auto* method = run->events()->Get(4)->profile_event();
  EXPECT_STREQ(method->name()->c_str(), "Method::execute");
  EXPECT_EQ(method->chain_index(), -1);
  EXPECT_EQ(method->instruction_id(), -1);
  EXPECT_EQ(method->start_time(), 80u);
  EXPECT_EQ(method->end_time(), 210u);
  EXPECT_EQ(run->events()->Get(0)->allocation_event(), nullptr);
  EXPECT_EQ(run->events()->Get(0)->debug_event(), nullptr);
}

TEST(EtdumpWriterTest, FullBufferDropsEventsButStaysValid) {
  std::vector<uint8_t> buffer(4096);
  EtdumpWriter w(buffer.data(), buffer.size(), /*max_events=*/256, /*max_runs=*/2);
  w.BeginRun("Execute");
  for (int i = 0; i < 500; ++i) w.LogProfileEvent("OPERATOR_CALL", 0, i, i, i + 1);
  EXPECT_GT(w.dropped_events(), 0u);
  auto bytes = w.Finish();
  ASSERT_TRUE(bytes.ok());
  flatbuffers::Verifier v(bytes->data(), bytes->size());
  EXPECT_TRUE(::etdump::VerifySizePrefixedETDumpBuffer(v));
  EXPECT_EQ(w.Finish().error(), Error::kInvalidState);
  // A buffer too small for anything fails cleanly.
  uint8_t tiny[64];
  EtdumpWriter t(tiny, sizeof(tiny));
  t.LogProfileEvent("x", 0, 0, 0, 1);
  EXPECT_FALSE(t.Finish().ok());
}

TEST(EtdumpReaderTest, RowsCarryTheEventsAndWhereKernelsRan) {
  std::vector<uint8_t> buffer(16 * 1024);
  const std::vector<uint8_t> etdp = WriteSample(buffer);
  auto reader = EtdumpReader::Open(Span<const uint8_t>(etdp.data(), etdp.size()));
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->NumProfileEvents(), 6u);
  ProfileRow rows[8];
  const size_t n = reader->ReadRows(Span<ProfileRow>(rows, 8));
  ASSERT_EQ(n, 6u);
  EXPECT_STREQ(rows[0].run_name, "Default");
  EXPECT_EQ(rows[0].ran_on, ExecutionUnit::kUnknown);  // not a kernel
  EXPECT_EQ(rows[1].run, 1u);
  EXPECT_STREQ(rows[1].run_name, "Execute");
  EXPECT_EQ(rows[1].name, nullptr);
  EXPECT_EQ(rows[1].delegate_debug_id, 10);
  EXPECT_EQ(rows[1].chain, 0);
  EXPECT_EQ(rows[1].instruction, 0);
  EXPECT_EQ(rows[1].duration(), 50u);
  EXPECT_EQ(rows[1].ran_on, ExecutionUnit::kUnknown);  // one metadata byte: no unit
  EXPECT_STREQ(rows[3].name, "DELEGATE_CALL");
  EXPECT_STREQ(rows[4].name, "native_call_softmax.out");
  EXPECT_EQ(rows[4].ran_on, ExecutionUnit::kCpu);
  // Fewer slots than events: the first ones.
  EXPECT_EQ(reader->ReadRows(Span<ProfileRow>(rows, 2)), 2u);
  // Malformed input is rejected, not crashed on.
  std::vector<uint8_t> bad = etdp;
  bad[8] = 'X';
  EXPECT_FALSE(EtdumpReader::Open(Span<const uint8_t>(bad.data(), bad.size())).ok());
}

// The NPU backend's second metadata byte says where the kernel ran; unknown values read as
// unknown.
TEST(EtdumpReaderTest, DelegateMetadataGivesWhereTheKernelRan) {
  std::vector<uint8_t> buffer(16 * 1024);
  EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Execute");
  const uint8_t npu[2] = {0, static_cast<uint8_t>(ExecutionUnit::kNpu)};
  const uint8_t emulated[2] = {0, static_cast<uint8_t>(ExecutionUnit::kNpuEmulatedCortexM33)};
  const uint8_t bogus[2] = {0, 200};
  w.LogDelegateEvent(10, 0, 0, 0, 1, npu, 2);
  w.LogDelegateEvent(11, 0, 0, 1, 2, emulated, 2);
  w.LogDelegateEvent(12, 0, 0, 2, 3, bogus, 2);
  auto bytes = w.Finish();
  ASSERT_TRUE(bytes.ok());
  auto reader = EtdumpReader::Open(*bytes);
  ASSERT_TRUE(reader.ok());
  ProfileRow rows[3];
  ASSERT_EQ(reader->ReadRows(Span<ProfileRow>(rows, 3)), 3u);
  EXPECT_EQ(rows[0].ran_on, ExecutionUnit::kNpu);
  EXPECT_EQ(rows[1].ran_on, ExecutionUnit::kNpuEmulatedCortexM33);
  EXPECT_EQ(rows[2].ran_on, ExecutionUnit::kUnknown);
  EXPECT_STREQ(ExecutionUnitName(rows[1].ran_on), "npu-emulated-cortex-m33");
}

// A delegate event logged by name (a weight prefetch) carries delegate_debug_id_str, no int id,
// and its metadata, which the reader hands back with where it ran.
TEST(EtdumpReaderTest, NamedDelegateEventsKeepTheirNameAndMetadata) {
  std::vector<uint8_t> buffer(16 * 1024);
  EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Execute");
  const uint8_t dma[7] = {0, static_cast<uint8_t>(ExecutionUnit::kDma), 1, 0, 16, 0, 0};
  const uint8_t copy[7] = {
      0, static_cast<uint8_t>(ExecutionUnit::kDmaEmulatedCortexM33), 0, 8, 0, 0, 0};
  w.LogNamedDelegateEvent("weight_prefetch:10", 0, 3, 5, 9, dma, 7);
  w.LogNamedDelegateEvent("weight_prefetch:11", 0, 3, 9, 12, copy, 7);
  auto bytes = w.Finish();
  ASSERT_TRUE(bytes.ok());
  auto reader = EtdumpReader::Open(*bytes);
  ASSERT_TRUE(reader.ok());
  const ::etdump::ProfileEvent* pe =
      reader->root().run_data()->Get(0)->events()->Get(0)->profile_event();
  ASSERT_NE(pe->delegate_debug_id_str(), nullptr);
  EXPECT_STREQ(pe->delegate_debug_id_str()->c_str(), "weight_prefetch:10");
  EXPECT_EQ(pe->delegate_debug_id_int(), -1);
  EXPECT_EQ(pe->name(), nullptr);
  ProfileRow rows[2];
  ASSERT_EQ(reader->ReadRows(Span<ProfileRow>(rows, 2)), 2u);
  EXPECT_STREQ(rows[0].delegate_debug_name, "weight_prefetch:10");
  EXPECT_EQ(rows[0].delegate_debug_id, -1);
  EXPECT_EQ(rows[0].name, nullptr);
  EXPECT_EQ(rows[0].instruction, 3);
  EXPECT_EQ(rows[0].ran_on, ExecutionUnit::kDma);
  ASSERT_EQ(rows[0].delegate_metadata_size, 7u);
  EXPECT_EQ(rows[0].delegate_metadata[4], 16);
  EXPECT_EQ(rows[1].ran_on, ExecutionUnit::kDmaEmulatedCortexM33);
  EXPECT_STREQ(ExecutionUnitName(rows[0].ran_on), "dma");
  EXPECT_STREQ(ExecutionUnitName(rows[1].ran_on), "dma-emulated-cortex-m33");
}

// A named integer is a DebugEvent with an Int Value; a full buffer drops it like any event.
TEST(EtdumpWriterTest, NamedIntegersAreDebugEvents) {
  std::vector<uint8_t> buffer(16 * 1024);
  EtdumpWriter w(buffer.data(), buffer.size());
  w.LogNamedInt("answer", -42);  // opens "Default"
  auto bytes = w.Finish();
  ASSERT_TRUE(bytes.ok());
  const ::etdump::ETDump* root = flatbuffers::GetSizePrefixedRoot<::etdump::ETDump>(bytes->data());
  ASSERT_EQ(root->run_data()->size(), 1u);
  EXPECT_STREQ(root->run_data()->Get(0)->name()->c_str(), "Default");
  const ::etdump::DebugEvent* d = root->run_data()->Get(0)->events()->Get(0)->debug_event();
  ASSERT_NE(d, nullptr);
  EXPECT_STREQ(d->name()->c_str(), "answer");
  EXPECT_EQ(d->debug_entry()->val(), ::etdump::ValueType::Int);
  EXPECT_EQ(d->debug_entry()->int_value()->int_val(), -42);

  EtdumpWriter full(buffer.data(), buffer.size(), /*max_events=*/1, /*max_runs=*/1);
  full.LogNamedInt("a", 1);
  full.LogNamedInt("b", 2);
  EXPECT_EQ(full.dropped_events(), 1u);
  EXPECT_TRUE(full.Finish().ok());
}

// flatc decodes the file the way ExecuTorch's Python tools do (serialize.py).
TEST(EtdumpWriterTest, FlatcDecodesIt) {
  if (std::system("command -v flatc > /dev/null 2>&1") != 0) GTEST_SKIP() << "flatc not on PATH";
  const std::string schema = boardlab::testing::RepoDir() + "/runtime/schema/etdump.fbs";
  std::vector<uint8_t> buffer(16 * 1024);
  const std::vector<uint8_t> etdp = WriteSample(buffer);
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/sample.etdp";
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(etdp.data()), static_cast<std::streamsize>(etdp.size()));
  const std::string cmd = "cd " + dir +
                          " && flatc --json --size-prefixed --strict-json --raw-binary " + schema +
                          " -- " + file;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir + "/sample.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["run_data"].size(), 2u);
  EXPECT_EQ(j["run_data"][1]["name"], "Execute");
  const auto& ev = j["run_data"][1]["events"];
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0]["profile_event"]["delegate_debug_id_int"], 10);
  EXPECT_FALSE(ev[0]["profile_event"].contains("name"));
  EXPECT_EQ(ev[0]["profile_event"]["start_time"], 100);
  EXPECT_EQ(ev[0]["profile_event"]["delegate_debug_metadata"].size(), 1u);
  EXPECT_EQ(ev[2]["profile_event"]["name"], "DELEGATE_CALL");
  EXPECT_EQ(ev[4]["profile_event"]["chain_index"], -1);
}

}  // namespace
}  // namespace boardlab::runtime::etdump
