#pragma once

// An HTTP request and response as the web pages see them, apart from the HTTP library
// (server/web/http_server.h turns Boost.Beast's messages into these and back), so that the pages
// are tested without a socket.

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace boardlab::server::web {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string target;                          // path and query, e.g. "/jobs?state=done"
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  bool secure = false;  // came over TLS

  /// The header's value, "" when absent.
  std::string Header(const std::string& lower_case_name) const {
    auto it = headers.find(lower_case_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
  std::string body;
  std::string file_path;  // when not empty: the body is this file's bytes (large downloads)
};

}  // namespace boardlab::server::web
