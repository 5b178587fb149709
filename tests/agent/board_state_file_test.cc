// agent/board_state_file.h: the per-board state that survives an agent restart.

#include "agent/board_state_file.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/agent/agent_test_support.h"

namespace boardlab::agent {
namespace {

class BoardStateFileTest : public ::testing::Test {
 protected:
  std::string Path() const { return BoardStatePath(dir_ / "state", "evk-0"); }
  void Write(const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(Path()).parent_path());
    std::ofstream(Path()) << text;
  }
  testing::ScratchDir dir_;
};

TEST_F(BoardStateFileTest, MissingFileIsABoardNeverSeen) {
  EXPECT_EQ(Path(), dir_ / "state/boards/evk-0.json");
  const absl::StatusOr<BoardState> state = LoadBoardState(Path());
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, BoardState{});
}

TEST_F(BoardStateFileTest, SavedStateReadsBackAndReplacesTheOldOne) {
  BoardState state;
  state.learnt_build_id = "1a2b3c";
  state.quarantined = true;
  state.quarantine_reason = "no answer on tcp:127.0.0.1:1 after connecting again";
  ASSERT_TRUE(SaveBoardState(Path(), state).ok());
  absl::StatusOr<BoardState> back = LoadBoardState(Path());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, state);

  state.quarantined = false;
  state.quarantine_reason.clear();
  ASSERT_TRUE(SaveBoardState(Path(), state).ok());
  back = LoadBoardState(Path());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, state);
  EXPECT_FALSE(std::filesystem::exists(Path() + ".tmp"));  // renamed into place
}

TEST_F(BoardStateFileTest, DocumentsItDoesNotKnowAreRefusedWithTheFileAndWhatToDo) {
  const struct {
    const char* text;
    const char* why;
  } cases[] = {
      {"not json", "not a JSON object"},
      {"[1, 2]", "not a JSON object"},
      {"{\"learnt_build_id\": \"x\"}", "unknown version (this agent reads version 1)"},
      {"{\"version\": 2}", "unknown version (this agent reads version 1)"},
      {"{\"version\": 1, \"quarantined\": 1}", "unknown key or wrong type: 'quarantined'"},
      {"{\"version\": 1, \"quarantine\": true}", "unknown key or wrong type: 'quarantine'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    Write(c.text);
    const absl::StatusOr<BoardState> state = LoadBoardState(Path());
    ASSERT_FALSE(state.ok());
    EXPECT_EQ(state.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_EQ(state.status().message(),
              absl::StrCat("Reading board state '", Path(), "': ", c.why,
                           " (move the file away: the agent then knows nothing of the board and "
                           "probes it afresh)"));
  }
}

TEST_F(BoardStateFileTest, UnwritableDirectoryIsAnErrorNamingThePath) {
  Write("");  // the state directory's "boards" is then a file's parent; make it a file instead
  std::filesystem::remove_all(dir_ / "state/boards");
  std::ofstream(dir_ / "state/boards") << "a file, not a directory";
  const absl::Status s = SaveBoardState(Path(), BoardState{});
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find(absl::StrCat("Writing board state '", Path(), "': ")),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace boardlab::agent
