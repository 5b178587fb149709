// boardlab: the client of the boardlab service. Submits int8 TFLite models for compilation and
// an on-board test, follows jobs, lists jobs and boards, fetches artifacts (docs/client.md).
//
// Exit codes: 0 PASS (or success), 1 FAIL, 2 usage or bad request (also INVALID_REQUEST),
// 3 COMPILE_ERROR, 4 RUN_ERROR,
// 5 INFRA_ERROR / QUEUE_TIMEOUT / server unreachable, 6 CANCELLED.

#include "cli/app.h"

int main(int argc, char** argv) { return boardlab::cli::RunBoardlab(argc, argv); }
