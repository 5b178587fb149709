#include "tests/support/process.h"

#include <sys/wait.h>

#include <cstdio>

namespace boardlab::testing {

CommandResult RunCommand(const std::string& command, bool with_stderr) {
  CommandResult r;
  FILE* pipe = popen((command + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) r.output.append(buffer, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace boardlab::testing
