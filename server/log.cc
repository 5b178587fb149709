#include "server/log.h"

#include <cstdio>
#include <mutex>

#include "nlohmann/json.hpp"
#include "server/clock.h"

namespace boardlab::server {
namespace {

std::FILE* g_output = stderr;

void Log(const char* level, const std::string& message, std::initializer_list<LogField> fields) {
  nlohmann::json line = {{"ts_ms", NowMs()}, {"level", level}, {"msg", message}};
  for (const auto& [key, value] : fields) line[key] = value;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (g_output != nullptr) fprintf(g_output, "%s\n", text.c_str());
}

}  // namespace

void LogInfo(const std::string& message, std::initializer_list<LogField> fields) {
  Log("info", message, fields);
}

void LogWarning(const std::string& message, std::initializer_list<LogField> fields) {
  Log("warning", message, fields);
}

void LogError(const std::string& message, std::initializer_list<LogField> fields) {
  Log("error", message, fields);
}

void SetLogOutput(std::FILE* output) { g_output = output; }

}  // namespace boardlab::server
