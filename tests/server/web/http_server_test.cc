// server/web/http_server.h over real sockets: requests reach the handler and answers come back
// (keep-alive, files), limits and malformed requests get their status, bad addresses fail to
// start, and with a certificate it speaks TLS that a client verifies.

#include "server/web/http_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/free_port.h"

namespace boardlab::server::web {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string TestDir() {
  const std::string dir =
      (std::filesystem::path(::testing::TempDir()) /
       absl::StrCat("http_server_", ::getpid(), "_",
                    ::testing::UnitTest::GetInstance()->current_test_info()->name()))
          .string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Sends `bytes` on one connection to 127.0.0.1:`port` and reads until the server closes it.
std::string Exchange(int port, const std::string& bytes) {
  const int fd = boardlab::testing::ConnectLoopback(port, /*timeout_seconds=*/10);
  if (fd < 0) return "connect failed";
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) answer.append(buffer, n);
  ::close(fd);
  return answer;
}

// Answers with what it was asked, and records the requests.
class Echo {
 public:
  HttpResponse operator()(const HttpRequest& request) {
    std::lock_guard lock(mutex_);
    requests_.push_back(request);
    HttpResponse response;
    response.status = request.target == "/missing" ? 404 : 200;
    response.content_type = "text/plain";
    response.headers.push_back({"X-Test", "yes"});
    response.body = absl::StrCat(request.method, " ", request.target, " body=", request.body,
                                 " cookie=", request.Header("cookie"),
                                 " secure=", request.secure ? "yes" : "no");
    if (request.target == "/file") {
      response.body.clear();
      response.file_path = file_path_;
    }
    return response;
  }
  std::vector<HttpRequest> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  std::string file_path_;

 private:
  std::mutex mutex_;
  std::vector<HttpRequest> requests_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(const HttpServerOptions& options = {.listen = "127.0.0.1:0"}) {
    auto server = HttpServer::Start(options, [this](const HttpRequest& r) { return echo_(r); });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  Echo echo_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, RequestsReachTheHandlerAndKeepAliveServesSeveral) {
  Start();
  EXPECT_STREQ(server_->scheme(), "http");
  const std::string answer =
      Exchange(server_->port(),
               "GET /jobs?state=done HTTP/1.1\r\nHost: x\r\nCookie: a=1\r\n\r\n"
               "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\nConnection: close\r\n\r\n"
               "token=t");
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, HasSubstr("X-Test: yes\r\n"));
  EXPECT_THAT(answer, HasSubstr("Content-Type: text/plain\r\n"));
  EXPECT_THAT(answer, HasSubstr("GET /jobs?state=done body= cookie=a=1 secure=no"));
  EXPECT_THAT(answer, HasSubstr("POST /login body=token=t cookie= secure=no"));
  ASSERT_EQ(echo_.requests().size(), 2u);
  EXPECT_EQ(echo_.requests()[0].Header("host"), "x");
}

TEST_F(HttpServerTest, StatusCodesAndFilesGoBack) {
  const std::string dir = TestDir();
  echo_.file_path_ = dir + "/blob";
  std::ofstream(echo_.file_path_) << std::string(100000, 'z');
  Start();
  EXPECT_THAT(Exchange(server_->port(), "GET /missing HTTP/1.0\r\n\r\n"),
              StartsWith("HTTP/1.0 404 Not Found\r\n"));
  const std::string file = Exchange(server_->port(), "GET /file HTTP/1.0\r\n\r\n");
  EXPECT_THAT(file, HasSubstr("Content-Length: 100000\r\n"));
  EXPECT_THAT(file, HasSubstr("\r\n\r\n" + std::string(100000, 'z')));
  echo_.file_path_ = dir + "/gone";
  EXPECT_THAT(Exchange(server_->port(), "GET /file HTTP/1.0\r\n\r\n"),
              StartsWith("HTTP/1.0 500 Internal Server Error\r\n"));
}

TEST_F(HttpServerTest, OversizedAndMalformedRequestsAreRefusedWithoutReachingTheHandler) {
  Start();
  const std::string big = std::string(20000, 'a');
  EXPECT_THAT(Exchange(server_->port(), absl::StrCat("POST /login HTTP/1.1\r\nContent-Length: ",
                                                     big.size(), "\r\n\r\n", big)),
              StartsWith("HTTP/1.1 413 Payload Too Large\r\n"));
  EXPECT_THAT(Exchange(server_->port(), "POST /login HTTP/1.1\r\nContent-Length: 999999\r\n\r\n"),
              StartsWith("HTTP/1.1 413 Payload Too Large\r\n"));
  EXPECT_THAT(Exchange(server_->port(), absl::StrCat("GET /", big, " HTTP/1.1\r\n\r\n")),
              StartsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
  EXPECT_THAT(Exchange(server_->port(), "HELLO THERE\r\n\r\n"),
              StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_TRUE(echo_.requests().empty());
}

TEST_F(HttpServerTest, BadAddressesFailToStartWithTheirReason) {
  Start();
  auto taken = HttpServer::Start({.listen = absl::StrCat("127.0.0.1:", server_->port())},
                                 [](const HttpRequest&) { return HttpResponse(); });
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(taken.status().message()), HasSubstr("cannot listen on 127.0.0.1:"));
  for (const char* bad : {"127.0.0.1", "127.0.0.1:http", "no.such.host.invalid:0"}) {
    auto server =
        HttpServer::Start({.listen = bad}, [](const HttpRequest&) { return HttpResponse(); });
    ASSERT_FALSE(server.ok()) << bad;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  auto no_cert = HttpServer::Start(
      {.listen = "127.0.0.1:0", .tls_cert = "/nonexistent.crt", .tls_key = "/nonexistent.key"},
      [](const HttpRequest&) { return HttpResponse(); });
  ASSERT_FALSE(no_cert.ok());
  EXPECT_THAT(std::string(no_cert.status().message()),
              HasSubstr("reading the certificate '/nonexistent.crt'"));
}

// GET `target` over TLS, verifying the server's certificate against `ca_file`; the body, or the
// step that failed.
std::string HttpsGet(int port, const std::string& ca_file, const std::string& target) {
  namespace net = boost::asio;
  namespace http = boost::beast::http;
  net::io_context io;
  net::ssl::context context(net::ssl::context::tls_client);
  boost::system::error_code ec;
  context.load_verify_file(ca_file, ec);
  if (ec) return "loading the CA: " + ec.message();
  context.set_verify_mode(net::ssl::verify_peer);
  net::ssl::stream<net::ip::tcp::socket> stream(io, context);
  stream.next_layer().connect({net::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)},
                              ec);
  if (!ec) stream.handshake(net::ssl::stream_base::client, ec);
  if (ec) return "TLS handshake: " + ec.message();
  http::request<http::empty_body> request(http::verb::get, target, 11);
  request.set(http::field::host, "127.0.0.1");
  http::write(stream, request, ec);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  if (!ec) http::read(stream, buffer, response, ec);
  if (ec) return "HTTP exchange: " + ec.message();
  return response.body();
}

TEST_F(HttpServerTest, WithACertificateItSpeaksVerifiedTls) {
  const std::string dir = TestDir();
  const std::string command = absl::StrCat(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 -keyout ",
      dir, "/web.key -out ", dir, "/web.crt >", dir, "/openssl.log 2>&1");
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  Start({.listen = "127.0.0.1:0", .tls_cert = dir + "/web.crt", .tls_key = dir + "/web.key"});
  EXPECT_STREQ(server_->scheme(), "https");
  EXPECT_EQ(HttpsGet(server_->port(), dir + "/web.crt", "/boards"),
            "GET /boards body= cookie= secure=yes");
  // Plain HTTP on the TLS port gets no page.
  EXPECT_THAT(Exchange(server_->port(), "GET /boards HTTP/1.0\r\n\r\n"),
              ::testing::Not(HasSubstr("GET /boards body=")));
}

}  // namespace
}  // namespace boardlab::server::web
