#pragma once

// The HTTP(S) listener of the web pages: Boost.Beast parses and writes HTTP/1.1 (keep-alive, size
// limits, timeouts) and Boost.Asio's OpenSSL streams carry TLS when the server has a certificate;
// each request becomes an HttpRequest for a handler (WebApp::Handle) and its HttpResponse goes
// back, a file streamed from disk when the response names one. A few threads serve all
// connections; the handler is called on them, so it must be thread-safe.
//
//   auto server = HttpServer::Start({.listen = "127.0.0.1:0"}, [&](const HttpRequest& r) {
//     return app.Handle(r);
//   });
//   int port = (*server)->port();   // the server stops when destroyed

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/web/http_message.h"

namespace boardlab::server::web {

struct HttpServerOptions {
  // Initialized, so that designated initializers may leave them out without a warning.
  std::string listen = "";    // host:port ([::1]:port for IPv6); port 0 picks a free one
  std::string tls_cert = "";  // PEM certificate chain and key; both empty = plain HTTP
  std::string tls_key = "";
  int threads = 2;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  /// Binds, listens and starts serving. Errors: InvalidArgument (a malformed address, a
  /// certificate or key that cannot be read), Unavailable (the address cannot be bound).
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options,
                                                           Handler handler);
  /// Stops accepting, ends open connections and joins the threads.
  virtual ~HttpServer() = default;

  /// The port it listens on.
  virtual int port() const = 0;
  /// "http" or "https".
  virtual const char* scheme() const = 0;
};

}  // namespace boardlab::server::web
