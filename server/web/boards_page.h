#pragma once

// The boards page (/boards): every board with its state, what holds it (the job it runs or the
// tenant that reserved it, until when), its health (failures in a row, quarantine or maintenance
// reason), how many jobs it ran and its last infrastructure failure; above the table, each board
// type's boards by state and its queued jobs.
//
//   std::string body = BoardsPageBody({lab.ListBoards(""), lab.QueuedJobs(""), NowMs()});

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "boardlab/v1/board_service.pb.h"

namespace boardlab::server::web {

struct BoardsPageData {
  std::vector<v1::Board> boards;
  std::map<std::string, int> queued_jobs;  // by board type
  int64_t now_ms = 0;
};

/// The page's body (for PageDocument).
std::string BoardsPageBody(const BoardsPageData& data);

}  // namespace boardlab::server::web
