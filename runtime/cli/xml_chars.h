#pragma once

// Text from boards, logs and models made safe for XML 1.0 documents (the JUnit report, the SVG
// timeline): such text may hold any bytes, and the documents must still parse.

#include <string>
#include <string_view>
#include <vector>

namespace boardlab::run {

/// The characters of `text`, each as its UTF-8 bytes (views into `text`); a byte that starts no
/// character XML 1.0 allows (a stray continuation byte, an overlong form, a surrogate,
/// U+FFFE/U+FFFF, a control character other than tab, newline and carriage return) becomes
/// "?". Not escaped: '<' and '&' stay for the writer to escape.
std::vector<std::string_view> XmlChars(std::string_view text);

/// The first `count` of `chars` (from XmlChars) with &, <, >, " and ' as character references:
/// text for elements and for attribute values in either quotes, in XML and in HTML.
std::string EscapedXmlChars(const std::vector<std::string_view>& chars, size_t count);

}  // namespace boardlab::run
