#pragma once

// The `boardlab` command line: CLI11 wiring of the global options and every command, and the
// dispatch to the command implementations (submit.h, watch.h, commands.h). main() only calls
// RunBoardlab; tests call it with their own argv.

namespace boardlab::cli {

/// Parses `argv` and runs the command. Returns the process exit code (docs/client.md): usage
/// errors print "boardlab: <what>; see ... --help" on stderr and return 2; --help prints the
/// help on stdout and returns 0.
int RunBoardlab(int argc, const char* const* argv);

}  // namespace boardlab::cli
