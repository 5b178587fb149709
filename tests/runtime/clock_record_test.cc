// The clock record of an ETDump (runtime/profiling/etdump/clock_record.h): written as named
// integer DebugEvents of the "Default" block, read back field by field; files of other producers
// read as clock unknown, files of an older boardlab-run through their tick-rate events. The events
// are plain ETDump DebugEvents that flatc decodes with the ETDump schema, as ExecuTorch's tools do.

#include "runtime/profiling/etdump/clock_record.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/profiling/etdump/etdump_reader.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "tests/support/test_paths.h"

namespace boardlab::runtime::etdump {
namespace {

// A file with `clock` recorded after the load events, and one Execute block.
std::vector<uint8_t> FileWith(const ClockRecord* clock) {
  std::vector<uint8_t> buffer(16 * 1024);
  EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Default");
  w.LogProfileEvent("Program::load_method", -1, -1, 1, 5);
  if (clock != nullptr) WriteClockRecord(w, *clock);
  w.BeginRun("Execute");
  w.LogProfileEvent("Method::execute", -1, -1, 10, 20);
  auto bytes = w.Finish();
  EXPECT_TRUE(bytes.ok());
  return std::vector<uint8_t>(bytes->begin(), bytes->end());
}

ClockRecord ReadBack(const std::vector<uint8_t>& etdp) {
  Result<EtdumpReader> reader = EtdumpReader::Open({etdp.data(), etdp.size()});
  EXPECT_TRUE(reader.ok());
  return reader.ok() ? ReadClockRecord(reader->root()) : ClockRecord{};
}

TEST(ClockRecordTest, QemuInstructionsRoundTrip) {
  ClockRecord clock;
  clock.kind = ClockKind::kQemuIcount;
  clock.ticks_per_second = 20000000;
  clock.icount_shift = 3;
  const ClockRecord back = ReadBack(FileWith(&clock));
  EXPECT_EQ(back.kind, ClockKind::kQemuIcount);
  EXPECT_EQ(back.ticks_per_second, 20000000u);
  EXPECT_EQ(back.icount_shift, 3);
  EXPECT_EQ(back.core_hz, 0u);
  EXPECT_EQ(back.delegate_kind, ClockKind::kUnknown);
  EXPECT_FALSE(back.legacy);
}

TEST(ClockRecordTest, DwtCyclesWithTheCoreClockAndADelegateClockRoundTrip) {
  ClockRecord clock;
  clock.kind = ClockKind::kDwtCycles;
  clock.ticks_per_second = 324000000;
  clock.core_hz = 324000000;
  clock.delegate_kind = ClockKind::kSimNpuCycles;
  clock.delegate_ticks_per_second = 528000000;
  const ClockRecord back = ReadBack(FileWith(&clock));
  EXPECT_EQ(back.kind, ClockKind::kDwtCycles);
  EXPECT_EQ(back.ticks_per_second, 324000000u);
  EXPECT_EQ(back.core_hz, 324000000u);
  EXPECT_EQ(back.icount_shift, -1);
  EXPECT_EQ(back.delegate_kind, ClockKind::kSimNpuCycles);
  EXPECT_EQ(back.delegate_ticks_per_second, 528000000u);
}

TEST(ClockRecordTest, EveryKindHasAFileNameThatReadsBack) {
  for (ClockKind kind :
       {ClockKind::kSimCycles, ClockKind::kSimNpuCycles, ClockKind::kQemuIcount,
        ClockKind::kQemuVirtualTime, ClockKind::kDwtCycles, ClockKind::kHostWall}) {
    const std::string name = ClockKindName(kind);
    EXPECT_NE(name, "unknown");
    EXPECT_EQ(ClockKindFromName(name.data(), name.size()), kind) << name;
  }
  EXPECT_EQ(ClockKindFromName("sim", 3), ClockKind::kUnknown);
  EXPECT_STREQ(ClockKindName(ClockKind::kUnknown), "unknown");
}

// Other producers (ExecuTorch's own runtime, the firmware before clock records) write none.
TEST(ClockRecordTest, AFileWithoutARecordHasAnUnknownClock) {
  const ClockRecord back = ReadBack(FileWith(nullptr));
  EXPECT_EQ(back.kind, ClockKind::kUnknown);
  EXPECT_EQ(back.ticks_per_second, 0u);
  EXPECT_FALSE(back.legacy);
}

// boardlab-run before clock records: tick rates as one-second ProfileEvents of "Default".
TEST(ClockRecordTest, AnOlderBoardlabRunsTickRatesStillRead) {
  std::vector<uint8_t> buffer(16 * 1024);
  EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Default");
  w.LogProfileEvent("boardlab::wall_ticks_per_second", -1, -1, 0, 1000000000);
  w.LogProfileEvent("boardlab::delegate_ticks_per_second", -1, -1, 0, 325000000);
  w.BeginRun("Execute");
  auto wall = w.Finish();
  ASSERT_TRUE(wall.ok());
  const ClockRecord back = ReadBack({wall->begin(), wall->end()});
  EXPECT_EQ(back.kind, ClockKind::kHostWall);
  EXPECT_EQ(back.ticks_per_second, 1000000000u);
  EXPECT_EQ(back.delegate_kind, ClockKind::kSimNpuCycles);
  EXPECT_EQ(back.delegate_ticks_per_second, 325000000u);
  EXPECT_TRUE(back.legacy);

  std::vector<uint8_t> buffer2(16 * 1024);
  EtdumpWriter s(buffer2.data(), buffer2.size());
  s.LogProfileEvent("boardlab::sim_cycles_per_second", -1, -1, 0, 325000000);
  auto sim = s.Finish();
  ASSERT_TRUE(sim.ok());
  const ClockRecord sim_back = ReadBack({sim->begin(), sim->end()});
  EXPECT_EQ(sim_back.kind, ClockKind::kSimCycles);
  EXPECT_EQ(sim_back.core_hz, 325000000u);
  EXPECT_EQ(sim_back.delegate_kind, ClockKind::kUnknown);
}

// The record is ordinary ETDump data: DebugEvents whose debug_entry is an Int Value, chain 0,
// instruction unset, and the profile rows do not see them.
TEST(ClockRecordTest, StoredAsEtdumpDebugEvents) {
  ClockRecord clock;
  clock.kind = ClockKind::kSimCycles;
  clock.ticks_per_second = 325000000;
  clock.core_hz = 325000000;
  const std::vector<uint8_t> etdp = FileWith(&clock);
  const ::etdump::ETDump* root = flatbuffers::GetSizePrefixedRoot<::etdump::ETDump>(etdp.data());
  const auto* events = root->run_data()->Get(0)->events();
  ASSERT_EQ(events->size(), 3u);  // load_method, clock, core_hz
  const ::etdump::DebugEvent* d = events->Get(1)->debug_event();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(events->Get(1)->profile_event(), nullptr);
  EXPECT_STREQ(d->name()->c_str(), "boardlab::clock=rt700-sim-cycles");
  EXPECT_EQ(d->chain_index(), 0u);
  EXPECT_EQ(d->instruction_id(), -1);
  EXPECT_EQ(d->delegate_debug_id_int(), -1);
  ASSERT_NE(d->debug_entry(), nullptr);
  EXPECT_EQ(d->debug_entry()->val(), ::etdump::ValueType::Int);
  EXPECT_EQ(d->debug_entry()->int_value()->int_val(), 325000000);
  EXPECT_STREQ(events->Get(2)->debug_event()->name()->c_str(), "boardlab::core_hz");

  Result<EtdumpReader> reader = EtdumpReader::Open({etdp.data(), etdp.size()});
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->NumProfileEvents(), 2u);
}

// flatc decodes the record with the ETDump schema, the way ExecuTorch's serialize.py does.
TEST(ClockRecordTest, FlatcDecodesIt) {
  if (std::system("command -v flatc > /dev/null 2>&1") != 0) GTEST_SKIP() << "flatc not on PATH";
  ClockRecord clock;
  clock.kind = ClockKind::kQemuIcount;
  clock.ticks_per_second = 20000000;
  clock.icount_shift = 0;
  const std::vector<uint8_t> etdp = FileWith(&clock);
  const std::string schema = boardlab::testing::RepoDir() + "/runtime/schema/etdump.fbs";
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/clock.etdp";
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(etdp.data()), static_cast<std::streamsize>(etdp.size()));
  const std::string cmd = "cd " + dir +
                          " && flatc --json --size-prefixed --strict-json --defaults-json "
                          "--raw-binary " +
                          schema + " -- " + file;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir + "/clock.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  const auto& events = j["run_data"][0]["events"];
  ASSERT_EQ(events.size(), 3u);  // load_method, clock, icount shift
  const auto& d = events[1]["debug_event"];
  EXPECT_EQ(d["name"], "boardlab::clock=qemu-icount");
  EXPECT_EQ(d["instruction_id"], -1);
  EXPECT_EQ(d["debug_entry"]["val"], "Int");
  EXPECT_EQ(d["debug_entry"]["int_value"]["int_val"], 20000000);
  EXPECT_EQ(events[2]["debug_event"]["name"], "boardlab::icount_shift");
  EXPECT_EQ(events[2]["debug_event"]["debug_entry"]["int_value"]["int_val"], 0);
}

}  // namespace
}  // namespace boardlab::runtime::etdump
