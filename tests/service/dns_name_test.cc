// Agents and clients given one DNS name with several addresses (docs/operations.md, "A DNS name
// for the replicas"): the name is served by a throwaway dnsmasq on a free UDP port of 127.0.0.1
// (no /etc/hosts edit), asked through gRPC's dns://DNS-SERVER/NAME:PORT target. The name lists
// first 127.0.0.2, where no server runs (a socket that hangs up on every connection, so that the
// test sees who dialled it), then 127.0.0.1, the live server: the agent and the client reach the
// live one. Skipped with the reason where dnsmasq (Debian's dnsmasq-base) is not installed.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"
#include "tests/support/child_process.h"

namespace boardlab::testing::service {
namespace {

using std::chrono::seconds;

constexpr char kName[] = "replicas.boardlab.test";

std::string FindDnsmasq() {
  for (const char* path : {"/usr/sbin/dnsmasq", "/sbin/dnsmasq", "/usr/bin/dnsmasq"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "";
}

sockaddr_in Ipv4(const std::string& ip, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &address.sin_addr);
  return address;
}

// A UDP port of 127.0.0.1 nothing is bound to right now (the kernel's pick).
int FreeUdpPort() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in address = Ipv4("127.0.0.1", 0);
  socklen_t length = sizeof(address);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

// A TCP port that accepts every connection and closes it at once: no gRPC server, but the test
// can count who dialled it.
class HangUpListener {
 public:
  HangUpListener(const std::string& ip, int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int on = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    sockaddr_in address = Ipv4(ip, port);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(fd_, 16) != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    thread_ = std::thread([this] {
      for (int connection; (connection = ::accept(fd_, nullptr, nullptr)) >= 0;) {
        ++connections_;
        ::close(connection);
      }
    });
  }
  ~HangUpListener() {
    if (fd_ < 0) return;
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  bool listening() const { return fd_ >= 0; }
  int connections() const { return connections_; }

 private:
  int fd_ = -1;
  std::atomic<int> connections_{0};
  std::thread thread_;
};

// dnsmasq answering for the names of `hosts_file` only (no upstream, no /etc/hosts), in the
// foreground on 127.0.0.1:port(), logging its queries to `log`.
class DnsServer {
 public:
  // Errors: Unavailable with dnsmasq's log when it did not start (three ports tried).
  static absl::StatusOr<std::unique_ptr<DnsServer>> Start(const std::string& dnsmasq,
                                                          const std::string& hosts_file,
                                                          const std::string& log) {
    std::string why;
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto server = std::unique_ptr<DnsServer>(new DnsServer());
      server->port_ = FreeUdpPort();
      std::filesystem::remove(log);
      std::vector<std::string> argv = {
          dnsmasq, "--no-daemon", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
          // Its own domain: AAAA gets "no such record", not REFUSED.
          "--local=/boardlab.test/", "--addn-hosts=" + hosts_file, "--listen-address=127.0.0.1",
          "--bind-interfaces", absl::StrCat("--port=", server->port_),
          "--pid-file=", "--log-queries", "--log-facility=-"};
      // As root it would switch to nobody, who may not read the test's directory.
      if (::getuid() == 0) argv.push_back("--user=root");
      auto process = Process::Start(argv, log, log);
      if (!process.ok()) return process.status();
      server->process_ = *std::move(process);
      // Serving once it has read the hosts file; it exits when it cannot bind the port.
      const bool ready = WaitFor(
          [&] {
            return !server->process_->Running() ||
                   ReadLog(log).find("read " + hosts_file) != std::string::npos;
          },
          seconds(30), "dnsmasq to read its hosts file");
      if (ready && server->process_->Running()) return server;
      why = ReadLog(log);
    }
    return absl::UnavailableError(absl::StrCat("dnsmasq did not start: ", why));
  }
  int port() const { return port_; }

  static std::string ReadLog(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  DnsServer() = default;
  int port_ = -1;
  std::unique_ptr<Process> process_;
};

TEST(DnsNameTest, AgentAndClientReachTheLiveAddressOfANameWithTwo) {
  const std::string dnsmasq = FindDnsmasq();
  if (dnsmasq.empty()) {
    GTEST_SKIP() << "DNS name test skipped: dnsmasq is not installed (Debian package "
                    "dnsmasq-base, deploy/install-deps.sh)";
  }
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());  // on 127.0.0.1 only
  const std::string port = lab.address().substr(lab.address().rfind(':') + 1);
  HangUpListener dead("127.0.0.2", std::stoi(port));
  ASSERT_TRUE(dead.listening()) << "127.0.0.2:" << port << " is taken";
  const std::string hosts =
      lab.WriteFile("dns-hosts", absl::StrCat("127.0.0.2 ", kName, "\n127.0.0.1 ", kName, "\n"));
  const std::string dns_log = lab.Path("dnsmasq.log");
  auto dns = DnsServer::Start(dnsmasq, hosts, dns_log);
  ASSERT_TRUE(dns.ok()) << dns.status();
  lab.SetServerAddressForProcesses(
      absl::StrCat("dns://127.0.0.1:", (*dns)->port(), "/", kName, ":", port));

  // The agent takes the first address that answers, in the order of the DNS answer (the file's
  // in dnsmasq's first answer; it rotates them from the second on).
  ASSERT_TRUE(lab.StartAgent("a", 1));
  EXPECT_GT(dead.connections(), 0) << "the agent never dialled the name's first address";
  const int before_client = dead.connections();
  const std::string model = lab.WriteFile("fc.tflite", FastModel());
  ClientResult submitted = lab.RunClient({"submit", model, "--wait", "--json"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted;
  absl::StatusOr<v1::Job> job = ParseJobJson(submitted.out);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
  EXPECT_EQ(job->board_id(), "a-sim-0");
  // The client (round robin over the name's addresses) dialled both, too.
  EXPECT_GT(dead.connections(), before_client) << "the client never dialled the first address";
  const std::string queries = DnsServer::ReadLog(dns_log);
  EXPECT_NE(queries.find(absl::StrCat("query[A] ", kName)), std::string::npos) << queries;
}

}  // namespace
}  // namespace boardlab::testing::service
