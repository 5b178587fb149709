#include "tests/support/postgres_server.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "tests/support/process.h"

namespace boardlab::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kServerUser = "nobody";

// BOARDLAB_POSTGRES_BIN, else the newest /usr/lib/postgresql/<version>/bin with an initdb.
std::string FindBinDir() {
  if (const char* bin = std::getenv("BOARDLAB_POSTGRES_BIN")) return bin;
  std::string best;
  int best_version = -1;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", error)) {
    const std::string name = entry.path().filename().string();
    const int version = std::atoi(name.c_str());
    if (version > best_version && fs::exists(entry.path() / "bin" / "initdb")) {
      best_version = version;
      best = (entry.path() / "bin").string();
    }
  }
  return best;
}

std::string RandomPassword() {
  std::random_device random;
  std::string password;
  for (int i = 0; i < 24; ++i) password += "0123456789abcdef"[random() % 16];
  return password;
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

using Connection = std::unique_ptr<PGconn, void (*)(PGconn*)>;

absl::StatusOr<Connection> ConnectTo(const std::string& uri, const std::string& password) {
  const char* keywords[] = {"dbname", "password", nullptr};
  const char* values[] = {uri.c_str(), password.c_str(), nullptr};
  Connection connection(PQconnectdbParams(keywords, values, 1), PQfinish);
  if (PQstatus(connection.get()) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat("connecting to the test server: ", PQerrorMessage(connection.get())));
  }
  return connection;
}

}  // namespace

absl::StatusOr<PostgresServer*> PostgresServer::Shared() {
  static std::once_flag once;
  static std::unique_ptr<PostgresServer> server;
  static absl::Status failure;
  std::call_once(once, [] {
    auto started = Start();
    if (started.ok()) {
      server = *std::move(started);
    } else {
      failure = started.status();
    }
  });
  if (server == nullptr) return failure;
  return server.get();
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(const std::string& settings) {
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  if (absl::Status ok = server->Init(settings); !ok.ok()) return ok;
  return server;
}

absl::Status PostgresServer::Init(const std::string& settings) {
  bin_dir_ = FindBinDir();
  if (bin_dir_.empty() || !fs::exists(bin_dir_ + "/initdb")) {
    return absl::FailedPreconditionError(
        absl::StrCat("PostgreSQL is not installed (no initdb in ",
                     bin_dir_.empty() ? "/usr/lib/postgresql/*/bin" : bin_dir_,
                     "; Debian package postgresql, or set BOARDLAB_POSTGRES_BIN)"));
  }
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (geteuid() == 0) {
    // initdb and postgres refuse to run as root.
    const passwd* user = getpwnam(kServerUser);
    if (user == nullptr || RunCommand("command -v runuser").exit_code != 0) {
      return absl::FailedPreconditionError(
          "the tests run as root and there is no user 'nobody' or no runuser to start "
          "PostgreSQL as (initdb refuses root)");
    }
    run_as_ = absl::StrCat("runuser -u ", kServerUser, " -- ");
    uid = user->pw_uid;
    gid = user->pw_gid;
  }
  // A short path: the socket path must fit in sockaddr_un.
  char pattern[] = "/tmp/boardlab-pg-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return absl::UnavailableError("cannot create a directory");
  dir_ = pattern;
  password_ = RandomPassword();
  password_file_ = dir_ + "/password";
  std::ofstream(password_file_) << password_ << "\n";
  if (chown(dir_.c_str(), uid, gid) != 0 || chown(password_file_.c_str(), uid, gid) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot hand ", dir_, " to ", kServerUser));
  }
  if (absl::Status ok = RunAsServerUser(
          absl::StrCat(bin_dir_, "/initdb -D ", dir_, "/data -U boardlab --auth=scram-sha-256 ",
                       "--pwfile=", password_file_, " --no-sync -E UTF8 --locale=C"),
          dir_ + "/initdb.log");
      !ok.ok()) {
    return ok;
  }
  // No TCP listener, only the socket in dir_; durability is not what these tests check (-F).
  absl::Status ok = RunAsServerUser(
      absl::StrCat(bin_dir_, "/pg_ctl -D ", dir_, "/data -l ", dir_, "/server.log -w -t 60 ",
                   "-o '-k ", dir_, " -c listen_addresses= -F ", settings, "' start"),
      dir_ + "/pg_ctl.log");
  started_ = ok.ok();
  return ok;
}

absl::Status PostgresServer::RunAsServerUser(const std::string& command, const std::string& log) {
  CommandResult result = RunCommand(run_as_ + command + " > " + log + " 2>&1");
  if (result.exit_code == 0) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(
      "'", command, "' failed:\n", Tail(log),
      fs::exists(dir_ + "/server.log") ? "\nserver.log:\n" + Tail(dir_ + "/server.log") : ""));
}

PostgresServer::~PostgresServer() {
  if (started_) {
    RunAsServerUser(absl::StrCat(bin_dir_, "/pg_ctl -D ", dir_, "/data -m immediate stop"),
                    "/dev/null")
        .IgnoreError();
  }
  std::error_code error;
  if (!dir_.empty()) fs::remove_all(dir_, error);
}

absl::StatusOr<std::string> PostgresServer::CreateDatabase() {
  std::string name;
  {
    std::lock_guard lock(mutex_);
    name = absl::StrCat("test_", getpid(), "_", ++databases_);
  }
  const std::string admin = absl::StrCat("postgresql:///postgres?host=", dir_, "&user=boardlab");
  if (absl::Status ok = Execute(admin, "CREATE DATABASE " + name); !ok.ok()) return ok;
  return absl::StrCat("postgresql:///", name, "?host=", dir_, "&user=boardlab");
}

PostgresServer::Session::~Session() { PQfinish(connection_); }

absl::Status PostgresServer::Session::Execute(const std::string& sql) {
  return Query(sql).status();
}

absl::StatusOr<std::string> PostgresServer::Session::Query(const std::string& sql) {
  auto rows = QueryRows(sql);
  if (!rows.ok()) return rows.status();
  if (rows->empty() || rows->front().empty()) return "";
  return rows->front().front();
}

absl::StatusOr<std::vector<std::vector<std::string>>> PostgresServer::Session::QueryRows(
    const std::string& sql) {
  std::unique_ptr<PGresult, void (*)(PGresult*)> result(PQexec(connection_, sql.c_str()), PQclear);
  const ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return absl::InternalError(absl::StrCat("'", sql, "': ", PQresultErrorMessage(result.get())));
  }
  std::vector<std::vector<std::string>> rows(static_cast<size_t>(PQntuples(result.get())));
  for (int row = 0; row < PQntuples(result.get()); ++row) {
    for (int column = 0; column < PQnfields(result.get()); ++column) {
      rows[static_cast<size_t>(row)].emplace_back(PQgetvalue(result.get(), row, column));
    }
  }
  return rows;
}

absl::StatusOr<std::unique_ptr<PostgresServer::Session>> PostgresServer::Connect(
    const std::string& uri) {
  auto connection = ConnectTo(uri, password_);
  if (!connection.ok()) return connection.status();
  return std::unique_ptr<Session>(new Session(connection->release()));
}

absl::Status PostgresServer::Execute(const std::string& uri, const std::string& sql) {
  auto connection = ConnectTo(uri, password_);
  if (!connection.ok()) return connection.status();
  std::unique_ptr<PGresult, void (*)(PGresult*)> result(PQexec(connection->get(), sql.c_str()),
                                                        PQclear);
  const ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return absl::InternalError(absl::StrCat("'", sql, "': ", PQresultErrorMessage(result.get())));
  }
  return absl::OkStatus();
}

}  // namespace boardlab::testing
