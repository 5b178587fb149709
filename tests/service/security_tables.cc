#include "tests/service/security_tables.h"

#include <fstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/support/test_paths.h"

namespace boardlab::testing::service {

absl::StatusOr<DocTable> ReadSecurityTable(const std::string& first_heading) {
  const std::string path = RepoDir() + "/docs/security.md";
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<std::string> columns;  // empty outside the table
  DocTable table;
  for (std::string line; std::getline(in, line);) {
    if (!absl::StartsWith(line, "|")) {
      columns.clear();  // a table ends at its first line that is no row
      continue;
    }
    if (absl::StartsWith(line, "|-")) continue;  // the line under the headings
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    // "| a | b |" splits into "", " a ", " b ", "".
    if (cells.size() < 3) continue;
    cells = std::vector<std::string>(cells.begin() + 1, cells.end() - 1);
    for (auto& cell : cells) cell = std::string(absl::StripAsciiWhitespace(cell));
    if (cells[0] == first_heading) {
      columns = cells;
      continue;
    }
    if (columns.empty() || cells.size() != columns.size()) continue;
    for (size_t i = 1; i < cells.size(); ++i) table[cells[0]][columns[i]] = cells[i];
  }
  if (table.empty()) {
    return absl::NotFoundError(absl::StrCat("no table headed '", first_heading, "' in ", path));
  }
  return table;
}

}  // namespace boardlab::testing::service
