#include "server/web/http_server.h"

#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace boardlab::server::web {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using boost::system::error_code;

// Requests are small (a page's URL, a sign-in form); anything bigger is not for these pages.
constexpr uint32_t kHeaderLimit = 16 << 10;
constexpr uint64_t kBodyLimit = 16 << 10;
// A connection that sends nothing for this long is closed (keep-alive idle, slow senders).
constexpr auto kReadTimeout = std::chrono::seconds(30);
// Long enough for a large file on a slow link.
constexpr auto kWriteTimeout = std::chrono::minutes(10);
// Connections beyond this are closed at once, so that idle keep-alives cannot pile up.
constexpr int kMaxConnections = 256;
// What a closing connection reads and drops at most (Drain).
constexpr size_t kDrainLimit = 1 << 20;

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

HttpRequest ToRequest(const http::request<http::string_body>& message, bool secure) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  for (const auto& field : message) {
    request.headers[absl::AsciiStrToLower(std::string(field.name_string()))] =
        std::string(field.value());
  }
  request.body = message.body();
  request.secure = secure;
  return request;
}

template <class Body>
void SetHeaders(http::response<Body>& message, const HttpResponse& response, bool keep_alive) {
  message.set(http::field::server, "boardlab");
  message.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message.insert(name, value);
  message.keep_alive(keep_alive);
}

// One connection: reads requests one after the other, answers each through the handler, and
// closes on the client's request, an error or a timeout. Its handlers run on one strand.
template <class Stream>
class Connection : public std::enable_shared_from_this<Connection<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Connection(Stream stream, const HttpServer::Handler& handler, std::atomic<int>& open)
      : stream_(std::move(stream)), handler_(handler), open_(open) {}
  ~Connection() { --open_; }

  void Start() {
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(kReadTimeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](error_code ec) {
                                if (!ec) self->Read();
                              });
    } else {
      Read();
    }
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(kBodyLimit);
    beast::get_lowest_layer(stream_).expires_after(kReadTimeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(error_code ec) {
    if (ec == http::error::body_limit) return Refuse(413, "the request body is too large");
    if (ec == http::error::header_limit) return Refuse(431, "the request headers are too large");
    if (ec && ec.category() == http::make_error_code(http::error::bad_target).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      return Refuse(400, absl::StrCat("malformed HTTP request: ", ec.message()));
    }
    if (ec) return Close();
    const http::request<http::string_body>& message = parser_->get();
    HttpResponse response = handler_(ToRequest(message, kTls));
    Respond(response, message.version(), message.keep_alive());
  }

  void Refuse(int status, const std::string& why) {
    HttpResponse response;
    response.status = status;
    response.content_type = "text/plain; charset=utf-8";
    response.body = why + "\n";
    Respond(response, 11, /*keep_alive=*/false);
  }

  void Respond(const HttpResponse& response, unsigned version, bool keep_alive) {
    const auto status = static_cast<http::status>(response.status);
    if (!response.file_path.empty()) {
      http::file_body::value_type file;
      error_code ec;
      file.open(response.file_path.c_str(), beast::file_mode::scan, ec);
      if (!ec) {
        auto message = std::make_shared<http::response<http::file_body>>(status, version);
        SetHeaders(*message, response, keep_alive);
        message->body() = std::move(file);
        message->prepare_payload();
        return Write(message);
      }
      HttpResponse failed;
      failed.status = 500;
      failed.content_type = "text/plain; charset=utf-8";
      failed.body = "the file cannot be read\n";
      return Respond(failed, version, /*keep_alive=*/false);
    }
    auto message = std::make_shared<http::response<http::string_body>>(status, version);
    SetHeaders(*message, response, keep_alive);
    message->body() = response.body;
    message->prepare_payload();
    Write(message);
  }

  template <class Message>
  void Write(const std::shared_ptr<Message>& message) {
    beast::get_lowest_layer(stream_).expires_after(kWriteTimeout);
    http::async_write(stream_, *message,
                      [self = this->shared_from_this(), message](error_code ec, size_t) {
                        if (ec || !message->keep_alive()) return self->Close();
                        self->Read();
                      });
  }

  void Close() {
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
      stream_.async_shutdown([self = this->shared_from_this()](error_code) {});
    } else {
      error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      Drain();
    }
  }

  // Reads what the client still sends after the answer (the rest of a refused request) before
  // the socket closes: closing with unread bytes would reset the connection, and the client
  // could lose the answer to the reset.
  void Drain() {
    if (drained_ > kDrainLimit) return;
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(2));
    stream_.async_read_some(net::buffer(drain_buffer_),
                            [self = this->shared_from_this()](error_code ec, size_t n) {
                              self->drained_ += n;
                              if (!ec) self->Drain();
                            });
  }

  Stream stream_;
  const HttpServer::Handler& handler_;
  std::atomic<int>& open_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::array<char, 4096> drain_buffer_;
  size_t drained_ = 0;
};

class HttpServerImpl : public HttpServer {
 public:
  HttpServerImpl(Handler handler, std::optional<ssl::context> tls, int threads)
      : handler_(std::move(handler)), tls_(std::move(tls)), io_(threads), acceptor_(io_) {}

  ~HttpServerImpl() override {
    io_.stop();
    for (std::thread& thread : threads_) thread.join();
  }

  absl::Status Listen(const std::string& listen, int threads) {
    absl::StatusOr<tcp::endpoint> endpoint = Resolve(listen);
    if (!endpoint.ok()) return endpoint.status();
    error_code ec;
    acceptor_.open(endpoint->protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(*endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("web pages: cannot listen on ", listen, ": ", ec.message()));
    }
    port_ = acceptor_.local_endpoint().port();
    Accept();
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { io_.run(); });
    return absl::OkStatus();
  }

  int port() const override { return port_; }
  const char* scheme() const override { return tls_ ? "https" : "http"; }

 private:
  absl::StatusOr<tcp::endpoint> Resolve(const std::string& listen) {
    const size_t colon = listen.rfind(':');
    int port = -1;
    if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
        port < 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("web pages: '", listen, "' is not host:port (e.g. 127.0.0.1:9480)"));
    }
    std::string host = listen.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    error_code ec;
    tcp::resolver resolver(io_);
    auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
    if (ec || results.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("web pages: cannot resolve '", host,
                                                     "': ", ec ? ec.message() : "no address"));
    }
    return results.begin()->endpoint();
  }

  void Accept() {
    acceptor_.async_accept(net::make_strand(io_), [this](error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted) return;
      if (!ec && open_.load() < kMaxConnections) Serve(std::move(socket));
      Accept();
    });
  }

  void Serve(tcp::socket socket) {
    ++open_;
    beast::tcp_stream stream(std::move(socket));
    if (tls_) {
      std::make_shared<Connection<TlsStream>>(TlsStream(std::move(stream), *tls_), handler_, open_)
          ->Start();
    } else {
      std::make_shared<Connection<beast::tcp_stream>>(std::move(stream), handler_, open_)->Start();
    }
  }

  // Destroyed after io_, whose pending handlers hold connections that use them.
  std::atomic<int> open_{0};
  Handler handler_;
  std::optional<ssl::context> tls_;
  net::io_context io_;
  tcp::acceptor acceptor_;
  std::vector<std::thread> threads_;
  int port_ = 0;
};

absl::StatusOr<ssl::context> TlsContext(const HttpServerOptions& options) {
  ssl::context context(ssl::context::tls_server);
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                      ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  error_code ec;
  context.use_certificate_chain_file(options.tls_cert, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("web pages: reading the certificate '",
                                                   options.tls_cert, "': ", ec.message()));
  }
  context.use_private_key_file(options.tls_key, ssl::context::pem, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("web pages: reading the key '", options.tls_key, "': ", ec.message()));
  }
  return context;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options,
                                                              Handler handler) {
  std::optional<ssl::context> tls;
  if (!options.tls_cert.empty() || !options.tls_key.empty()) {
    absl::StatusOr<ssl::context> context = TlsContext(options);
    if (!context.ok()) return context.status();
    tls.emplace(*std::move(context));
  }
  const int threads = std::max(options.threads, 1);
  auto server = std::make_unique<HttpServerImpl>(std::move(handler), std::move(tls), threads);
  if (absl::Status ok = server->Listen(options.listen, threads); !ok.ok()) return ok;
  return server;
}

}  // namespace boardlab::server::web
