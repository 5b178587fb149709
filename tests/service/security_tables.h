#pragma once

// The tables of docs/security.md that tests check against a live server, read from the file so
// that the documentation is what the server does: the RPC authorization table (its heading
// "RPC") and the web pages' table ("Page").

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace boardlab::testing::service {

/// row (the first cell) -> column heading -> cell.
using DocTable = std::map<std::string, std::map<std::string, std::string>>;

/// The rows of the Markdown table in docs/security.md whose first heading is `first_heading`:
/// "| first_heading | column | ... |", up to the first line that is not a table row. Cells are
/// trimmed. Errors: NotFound when the file or the table is missing.
absl::StatusOr<DocTable> ReadSecurityTable(const std::string& first_heading);

}  // namespace boardlab::testing::service
