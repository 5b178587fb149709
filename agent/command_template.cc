#include "agent/command_template.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace boardlab::agent {
namespace {

bool IsPlaceholder(const std::string& name) {
  return std::any_of(std::begin(kCommandPlaceholders), std::end(kCommandPlaceholders),
                     [&](const char* known) { return name == known; });
}

}  // namespace

absl::Status CheckCommandTemplate(const std::string& command) {
  for (size_t i = 0; i < command.size(); ++i) {
    if (command[i] == '}') {
      return absl::InvalidArgumentError(absl::StrCat("a '}' without its '{' at character ", i + 1));
    }
    if (command[i] != '{') continue;
    const size_t end = command.find('}', i);
    if (end == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("a '{' without its '}' at character ", i + 1));
    }
    const std::string name = command.substr(i + 1, end - i - 1);
    if (!IsPlaceholder(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown placeholder {", name, "} (known: {elf} {hex} {bin} {board} {port} {model})"));
    }
    i = end;
  }
  return absl::OkStatus();
}

bool UsesPlaceholder(const std::string& command, const std::string& name) {
  return command.find(absl::StrCat("{", name, "}")) != std::string::npos;
}

std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string ExpandCommandTemplate(const std::string& command,
                                  const std::map<std::string, std::string>& values) {
  std::string out;
  for (size_t i = 0; i < command.size(); ++i) {
    const size_t end = command[i] == '{' ? command.find('}', i) : std::string::npos;
    if (end == std::string::npos) {
      out += command[i];
      continue;
    }
    const auto value = values.find(command.substr(i + 1, end - i - 1));
    out += ShellQuote(value == values.end() ? "" : value->second);
    i = end;
  }
  return out;
}

}  // namespace boardlab::agent
