#include "server/web/html.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/cli/xml_chars.h"

namespace boardlab::server::web {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

absl::StatusOr<std::string> Decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+' && plus_is_space) {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      const int high = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      const int low = high >= 0 ? HexValue(text[i + 2]) : -1;
      if (low < 0) {
        return absl::InvalidArgumentError(absl::StrCat("malformed URL encoding at character ",
                                                       i + 1, ": '%' needs two hex digits"));
      }
      out += static_cast<char>(high * 16 + low);
      i += 2;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> PercentDecode(std::string_view text) {
  return Decode(text, /*plus_is_space=*/false);
}

std::string HtmlEscape(std::string_view text) {
  // Escaped as the SVG timeline escapes its text, so that the inline picture and the HTML around
  // it agree on what a value shows.
  const std::vector<std::string_view> chars = run::XmlChars(text);
  return run::EscapedXmlChars(chars, chars.size());
}

std::string UrlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

absl::StatusOr<FormFields> ParseForm(std::string_view text) {
  FormFields fields;
  const std::vector<std::string> pairs = absl::StrSplit(std::string(text), '&', absl::SkipEmpty());
  for (const std::string& pair : pairs) {
    const size_t equals = pair.find('=');
    absl::StatusOr<std::string> name = Decode(pair.substr(0, equals), /*plus_is_space=*/true);
    if (!name.ok()) return name.status();
    absl::StatusOr<std::string> value =
        Decode(equals == std::string::npos ? std::string() : pair.substr(equals + 1),
               /*plus_is_space=*/true);
    if (!value.ok()) return value.status();
    fields[*name] = *value;
  }
  return fields;
}

}  // namespace boardlab::server::web
