#pragma once

// Runs a command line the way a user's shell would, for tests of the command-line tools.

#include <string>

namespace boardlab::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when the command could not be started or was killed by a signal
  std::string output;  // stdout, and stderr when asked
};

/// Runs `command` with /bin/sh and collects its output.
CommandResult RunCommand(const std::string& command, bool with_stderr = true);

}  // namespace boardlab::testing
