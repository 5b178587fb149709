#pragma once

// What every board of boardlab-run (--board qemu, --board serial) takes from the command line: the
// artifact, its inputs and expected outputs, and where the results go. Each board's options
// extend it (qemu_board.h, serial_board.h).

#include <string>
#include <vector>

#include "runtime/cli/run_cases.h"

namespace boardlab::run {

struct BoardRunOptions {
  std::string artifact;
  std::vector<std::string> inputs;    // FILE or random:SEED; missing ones become random:<index>
  std::vector<std::string> expected;  // expected raw bytes of output i
  double atol = 0;
  int iterations = 1;
  std::string etdump;            // ETDump file to write (empty: none)
  std::string outputs_dir;       // DIR/output<i>.bin (empty: none)
  double timeout_seconds = 300;  // qemu: the firmware is killed after this long; serial: from
                                 // RUN to RESULT
  // Many cases on one load (--inputs / --cases, checked against the model): then `inputs` and
  // `expected` are unused, outputs go to outputs_dir/NAME/, and case_results (when set) gets
  // the per-case verdicts as JSON (run_cases.h CaseResultsJson).
  std::vector<CaseFiles> cases;
  std::string case_results;
};

}  // namespace boardlab::run
