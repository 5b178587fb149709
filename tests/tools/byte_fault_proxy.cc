// byte_fault_proxy: a TCP proxy that damages the bytes it relays, for testing the board link
// over a bad line. It listens on one address and, for each client, connects to the target and
// relays both ways, corrupting (one bit flipped), dropping and duplicating bytes at the given
// rates per byte, from a seeded generator (the same seed damages the same byte positions).
//
//   byte_fault_proxy --listen 127.0.0.1:7000 --connect 127.0.0.1:6100
//                    --corrupt 0.0001 --drop 0.0001 --duplicate 0.0001 --seed 1
//
// Prints "listening on HOST:PORT" once it accepts, and, when a client leaves, the faults it
// made in each direction. One client at a time; it ends on SIGTERM or SIGINT.

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace {

struct Rates {
  double corrupt = 0;
  double drop = 0;
  double duplicate = 0;
};

// One direction's damage and its counts.
class Damage {
 public:
  Damage(const Rates& rates, uint32_t seed) : rates_(rates), random_(seed) {}

  std::vector<uint8_t> Apply(const uint8_t* data, size_t size) {
    std::vector<uint8_t> out;
    out.reserve(size + size / 100 + 1);
    for (size_t i = 0; i < size; ++i) {
      uint8_t b = data[i];
      if (rates_.drop > 0 && uniform_(random_) < rates_.drop) {
        ++dropped_;
        continue;
      }
      if (rates_.corrupt > 0 && uniform_(random_) < rates_.corrupt) {
        b ^= static_cast<uint8_t>(1u << (random_() % 8));
        ++corrupted_;
      }
      out.push_back(b);
      if (rates_.duplicate > 0 && uniform_(random_) < rates_.duplicate) {
        out.push_back(b);
        ++duplicated_;
      }
    }
    bytes_ += size;
    return out;
  }

  std::string Summary() const {
    return std::to_string(bytes_) + " bytes, " + std::to_string(corrupted_) + " corrupted, " +
           std::to_string(dropped_) + " dropped, " + std::to_string(duplicated_) + " duplicated";
  }

 private:
  Rates rates_;
  std::mt19937 random_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  uint64_t bytes_ = 0, corrupted_ = 0, dropped_ = 0, duplicated_ = 0;
};

volatile sig_atomic_t g_stop = 0;
extern "C" void OnStop(int) { g_stop = 1; }

bool SplitAddress(const std::string& address, std::string* host, std::string* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  return true;
}

int Socket(const std::string& address, bool listen, std::string* error) {
  std::string host, port;
  if (!SplitAddress(address, &host, &port)) {
    *error = "'" + address + "' is not HOST:PORT";
    return -1;
  }
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = listen ? AI_PASSIVE : 0;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    *error = address + ": " + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int one = 1;
    bool ok;
    if (listen) {
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      ok = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1) == 0;
    } else {
      ok = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    if (!ok) {
      *error = address + ": " + std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

bool WriteAll(int fd, const std::vector<uint8_t>& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

// Relays between the client and the target until one side closes or a stop is asked.
void Relay(int client, int target, Damage& to_target, Damage& to_client) {
  uint8_t buffer[8192];
  while (!g_stop) {
    pollfd fds[2] = {{client, POLLIN, 0}, {target, POLLIN, 0}};
    const int ready = ::poll(fds, 2, 200);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return;
    for (int i = 0; i < 2; ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n <= 0) return;
      Damage& damage = i == 0 ? to_target : to_client;
      if (!WriteAll(i == 0 ? target : client, damage.Apply(buffer, static_cast<size_t>(n)))) return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"byte_fault_proxy: relay TCP bytes, damaging them at set rates"};
  std::string listen_address, target_address;
  Rates rates;
  uint32_t seed = 1;
  app.add_option("--listen", listen_address, "HOST:PORT to accept clients on")->required();
  app.add_option("--connect", target_address, "HOST:PORT to relay each client to")->required();
  app.add_option("--corrupt", rates.corrupt, "probability per byte of a flipped bit")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--drop", rates.drop, "probability per byte of losing it")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--duplicate", rates.duplicate, "probability per byte of sending it twice")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", seed, "seed of the damage");
  CLI11_PARSE(app, argc, argv);

  struct sigaction action = {};
  action.sa_handler = OnStop;
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);

  std::string error;
  const int listener = Socket(listen_address, /*listen=*/true, &error);
  if (listener < 0) {
    std::fprintf(stderr, "byte_fault_proxy: cannot listen on %s\n", error.c_str());
    return 2;
  }
  std::printf("listening on %s\n", listen_address.c_str());
  std::fflush(stdout);
  for (uint32_t connection = 0; !g_stop;) {
    pollfd p = {listener, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int target = Socket(target_address, /*listen=*/false, &error);
    if (target < 0) {
      std::fprintf(stderr, "byte_fault_proxy: cannot connect to %s\n", error.c_str());
      ::close(client);
      continue;
    }
    // Each connection gets its own, still reproducible, damage.
    Damage to_target(rates, seed + 2 * connection), to_client(rates, seed + 2 * connection + 1);
    Relay(client, target, to_target, to_client);
    ::close(client);
    ::close(target);
    std::printf("connection %u closed: to the target %s; to the client %s\n", connection,
                to_target.Summary().c_str(), to_client.Summary().c_str());
    std::fflush(stdout);
    ++connection;
  }
  ::close(listener);
  return 0;
}
