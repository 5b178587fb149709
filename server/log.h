#pragma once

// Structured logs: one JSON object per line on stderr ({"ts":..., "level":..., "msg":..., ...}),
// so that journald, Loki or jq can filter them by field.

#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

namespace boardlab::server {

using LogField = std::pair<const char*, std::string>;

void LogInfo(const std::string& message, std::initializer_list<LogField> fields = {});
void LogWarning(const std::string& message, std::initializer_list<LogField> fields = {});
void LogError(const std::string& message, std::initializer_list<LogField> fields = {});

/// Where the lines go: stderr by default; nullptr drops them (the request fuzzer). Call before
/// any thread logs.
void SetLogOutput(std::FILE* output);

}  // namespace boardlab::server
