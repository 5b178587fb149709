#include "tests/support/test_paths.h"

#include <cstdlib>

namespace boardlab::testing {
namespace {

std::string FromEnvironmentOr(const char* name, const char* built_in) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : built_in;
}

}  // namespace

std::string CompilerBinary() {
  return FromEnvironmentOr("BOARDLAB_COMPILE", BOARDLAB_COMPILE_PATH);
}
std::string RunBinary() { return FromEnvironmentOr("BOARDLAB_RUN", BOARDLAB_RUN_PATH); }
std::string RepoDir() { return FromEnvironmentOr("BOARDLAB_REPO", BOARDLAB_REPO_DIR); }

}  // namespace boardlab::testing
