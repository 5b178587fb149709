#pragma once

// The command templates of a `serial` board (flash, reset, power cycle; docs/boards.md): a shell
// command with placeholders that the agent fills in before running it with /bin/sh -c.
//
//   absl::Status ok = CheckCommandTemplate("pyocd flash -t mimxrt700 {hex}");
//   std::string cmd = ExpandCommandTemplate("pyocd flash -t mimxrt700 {hex}",
//                                           {{"hex", "/var/lib/fw/rt700.hex"}});
//   // pyocd flash -t mimxrt700 '/var/lib/fw/rt700.hex'

#include <map>
#include <string>

#include "absl/status/status.h"

namespace boardlab::agent {

/// The placeholders a template may use, in the order docs/boards.md lists them.
/// `model` (the artifact file) only in `model_flash`.
inline constexpr const char* kCommandPlaceholders[] = {"elf",   "hex",  "bin",
                                                       "board", "port", "model"};

/// OK when every `{name}` in `command` is a known placeholder and every brace is part of one.
/// Errors: InvalidArgument naming the offending text.
absl::Status CheckCommandTemplate(const std::string& command);

/// Whether `command` contains `{name}`.
bool UsesPlaceholder(const std::string& command, const std::string& name);

/// `command` with each `{name}` replaced by values.at(name), single-quoted for the shell (a
/// placeholder without a value becomes ''). Call CheckCommandTemplate first.
std::string ExpandCommandTemplate(const std::string& command,
                                  const std::map<std::string, std::string>& values);

/// `text` as one shell word: in single quotes, with embedded quotes escaped.
std::string ShellQuote(const std::string& text);

}  // namespace boardlab::agent
