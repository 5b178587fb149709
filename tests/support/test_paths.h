#pragma once

// Where the binaries and the repository are, for tests that run them as users do. The build
// bakes the paths in; an environment variable of the same name overrides each (BOARDLAB_COMPILE,
// BOARDLAB_RUN, BOARDLAB_REPO).

#include <string>

namespace boardlab::testing {

std::string CompilerBinary();  // boardlab-compile
std::string RunBinary();       // boardlab-run; empty when the build has none
std::string RepoDir();         // the repository root

}  // namespace boardlab::testing
