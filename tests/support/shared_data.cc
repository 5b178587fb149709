#include "tests/support/shared_data.h"

#include <filesystem>
#include <fstream>
#include <iterator>

namespace boardlab::testing {

std::string SharedModelsDir() { return std::string(BOARDLAB_SHARED_DIR) + "/models"; }

std::optional<std::string> SharedModelPath(std::string_view relative) {
  std::string path = SharedModelsDir() + "/" + std::string(relative);
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  return path;
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

std::vector<std::string> ModelsOrSharedDefaults(std::vector<std::string> given) {
  if (!given.empty()) return given;
  for (std::string_view m : kRealModels) {
    if (std::optional<std::string> path = SharedModelPath(m)) given.push_back(*path);
  }
  return given;
}

}  // namespace boardlab::testing
