#include "runtime/cli/xml_chars.h"

#include <cstddef>

namespace boardlab::run {
namespace {

// The length of the character XmlChars keeps at text[i], else 0.
size_t XmlCharLength(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = at(0);
  if (lead < 0x80) return lead >= 0x20 || lead == '\t' || lead == '\n' || lead == '\r' ? 1 : 0;
  const size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                        : lead >= 0xE0 && lead <= 0xEF ? 3
                        : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                       : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((at(k) & 0xC0) != 0x80) return 0;
  }
  const unsigned char second = at(1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second >= 0xA0) ||
      (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second >= 0x90)) {
    return 0;  // overlong, surrogate or beyond U+10FFFF
  }
  if (lead == 0xEF && second == 0xBF && at(2) >= 0xBE) return 0;  // U+FFFE, U+FFFF
  return length;
}

}  // namespace

std::vector<std::string_view> XmlChars(std::string_view text) {
  std::vector<std::string_view> chars;
  chars.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = XmlCharLength(text, i);
    chars.push_back(length == 0 ? std::string_view("?") : text.substr(i, length));
    i += length == 0 ? 1 : length;
  }
  return chars;
}

std::string EscapedXmlChars(const std::vector<std::string_view>& chars, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < chars.size(); ++i) {
    const std::string_view c = chars[i];
    if (c == "&") {
      out += "&amp;";
    } else if (c == "<") {
      out += "&lt;";
    } else if (c == ">") {
      out += "&gt;";
    } else if (c == "\"") {
      out += "&quot;";
    } else if (c == "'") {
      out += "&#39;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace boardlab::run
