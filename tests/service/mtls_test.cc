// A TLS server with tls.client_ca (as deploy/config/server.yaml ships it): clients authenticate
// by token with or without a certificate, agents need a certificate signed by the CA, and a
// certificate from another CA is refused in the handshake. Certificates come from the openssl
// command line, made fresh in the test's directory.

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"
#include "tests/service/harness.h"
#include "tests/support/free_port.h"

namespace boardlab::testing::service {
namespace {

using ::testing::HasSubstr;

constexpr char kClientToken[] = "ci-token-5f1e";
constexpr char kAgentToken[] = "agent-token-77b2";
constexpr char kAdminToken[] = "admin-token-31d4";

// A CA, and certificates it signs, made with the openssl command line in `dir`.
class Pki {
 public:
  explicit Pki(std::string dir) : dir_(std::move(dir)) {}

  ::testing::AssertionResult MakeCa(const std::string& name) {
    return Run(absl::StrCat("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=", name,
                            " -keyout ", Path(name, "key"), " -out ", Path(name, "crt")));
  }

  /// A certificate for `name` signed by `ca`; `san` adds a subject alternative name
  /// ("IP:127.0.0.1", "DNS:boardlab-server").
  ::testing::AssertionResult MakeSigned(const std::string& name, const std::string& ca,
                                        const std::string& san = "") {
    const std::string ext = Path(name, "ext");
    if (!san.empty()) std::ofstream(ext) << "subjectAltName=" << san << "\n";
    if (auto ok = Run(absl::StrCat("openssl req -newkey rsa:2048 -nodes -subj /CN=", name,
                                   " -keyout ", Path(name, "key"), " -out ", Path(name, "csr")));
        !ok) {
      return ok;
    }
    return Run(absl::StrCat("openssl x509 -req -days 2 -in ", Path(name, "csr"), " -CA ",
                            Path(ca, "crt"), " -CAkey ", Path(ca, "key"), " -CAcreateserial -out ",
                            Path(name, "crt"), san.empty() ? "" : absl::StrCat(" -extfile ", ext)));
  }

  std::string Path(const std::string& name, const std::string& ext) const {
    return absl::StrCat(dir_, "/", name, ".", ext);
  }

 private:
  ::testing::AssertionResult Run(const std::string& command) {
    const std::string quiet = absl::StrCat(command, " >", dir_, "/openssl.log 2>&1");
    if (std::system(quiet.c_str()) != 0) {
      return ::testing::AssertionFailure() << "failed: " << command;
    }
    return ::testing::AssertionSuccess();
  }

  std::string dir_;
};

std::string ServerConfig(const Pki& pki) {
  return absl::StrCat("tls:\n  cert: ", pki.Path("server", "crt"),
                      "\n  key: ", pki.Path("server", "key"),
                      "\n  client_ca: ", pki.Path("ca", "crt"), "\n",
                      TokensYaml({{kClientToken, "ci", "client"},
                                  {kAgentToken, "lab", "agent"},
                                  {kAdminToken, "lab", "admin"}}));
}

class MtlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pki_.MakeCa("ca"));
    ASSERT_TRUE(pki_.MakeSigned("server", "ca", "IP:127.0.0.1"));
    ASSERT_TRUE(pki_.MakeSigned("agent", "ca"));
    ASSERT_TRUE(pki_.MakeSigned("person", "ca"));
    ASSERT_TRUE(pki_.MakeCa("rogue-ca"));
    ASSERT_TRUE(pki_.MakeSigned("rogue", "rogue-ca"));
    ASSERT_TRUE(
        lab_.StartServer({.config_yaml = ServerConfig(pki_), .tls_ca = pki_.Path("ca", "crt")}));
    lab_.SetApiToken(kAdminToken);
  }

  // A channel to the server as `name` (its certificate), or without one when `name` is empty.
  std::shared_ptr<grpc::Channel> ChannelAs(const std::string& name) {
    api::ChannelOptions options;
    options.address = lab_.address();
    options.tls_ca_file = pki_.Path("ca", "crt");
    if (!name.empty()) {
      options.tls_cert_file = pki_.Path(name, "crt");
      options.tls_key_file = pki_.Path(name, "key");
    }
    auto channel = api::MakeChannel(options);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return channel.ok() ? *channel : nullptr;
  }

  std::string AgentConfig() {
    std::string yaml =
        absl::StrCat("token: ", kAgentToken, "\ntls_ca_file: ", pki_.Path("ca", "crt"),
                     "\ntls_cert_file: ", pki_.Path("agent", "crt"),
                     "\ntls_key_file: ", pki_.Path("agent", "key"), "\n");
    absl::StrAppend(&yaml, "boards:\n  - id: m-sim-0\n    type: imxrt700-sim\n    driver: sim\n");
    return yaml;
  }

  // Starts agent "m" (its certificate, one sim board) and runs a job on it through the client.
  void RunAJobOnARealAgent() {
    const std::string model = lab_.WriteFile("fc.tflite", FastModel());
    ASSERT_TRUE(lab_.StartAgentWithConfig("m", AgentConfig(), 1));
    ClientResult r =
        lab_.RunClient({"--tls-ca", pki_.Path("ca", "crt"), "submit", model, "--board-type",
                        "imxrt700-sim", "--expect-reference", "--wait", "--json"},
                       std::chrono::seconds(90), kClientToken);
    ASSERT_EQ(r.exit_code, 0) << r;
    absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
    EXPECT_EQ(job->board_id(), "m-sim-0");
  }

  ServiceLab lab_;
  Pki pki_{lab_.dir()};
};

grpc::StatusCode ConnectAgent(const std::shared_ptr<grpc::Channel>& channel, std::string* why) {
  auto agents = v1::AgentService::NewStub(channel);
  grpc::ClientContext context;
  api::AddBearerToken(context, kAgentToken);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto stream = agents->Connect(&context);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id("probe");
  stream->Write(hello);
  v1::ServerMessage answer;
  if (stream->Read(&answer) && answer.has_welcome()) {
    context.TryCancel();
    stream->Finish();
    return grpc::StatusCode::OK;
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  *why = status.error_message();
  return status.error_code();
}

grpc::StatusCode FindMissingAsAgent(const std::shared_ptr<grpc::Channel>& channel,
                                    std::string* why) {
  auto artifacts = v1::ArtifactService::NewStub(channel);
  grpc::ClientContext context;
  api::AddBearerToken(context, kAgentToken);
  v1::FindMissingRequest request;
  *request.add_digests() = api::DigestOf("x");
  v1::FindMissingResponse response;
  grpc::Status status = artifacts->FindMissing(&context, request, &response);
  *why = status.error_message();
  return status.error_code();
}

TEST_F(MtlsTest, ClientsUseTokensAgentsNeedACertificateOfTheCa) {
  // The client, by token over TLS, with and without a certificate of its own.
  const std::string ca = pki_.Path("ca", "crt");
  ClientResult r =
      lab_.RunClient({"--tls-ca", ca, "boards"}, std::chrono::seconds(60), kClientToken);
  EXPECT_EQ(r.exit_code, 0) << r;
  r = lab_.RunClient({"--tls-ca", ca, "--tls-cert", pki_.Path("person", "crt"), "--tls-key",
                      pki_.Path("person", "key"), "boards"},
                     std::chrono::seconds(60), kClientToken);
  EXPECT_EQ(r.exit_code, 0) << r;
  r = lab_.RunClient(
      {"--tls-cert", pki_.Path("person", "crt"), "--tls-key", pki_.Path("person", "key"), "boards"},
      std::chrono::seconds(60), kClientToken);
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("--tls-cert needs --tls-ca")) << r;
  // A certificate of another CA does not get through the handshake.
  r = lab_.RunClient({"--tls-ca", ca, "--tls-cert", pki_.Path("rogue", "crt"), "--tls-key",
                      pki_.Path("rogue", "key"), "boards"},
                     std::chrono::seconds(60), kClientToken);
  EXPECT_EQ(r.exit_code, 5) << r;

  // The web pages use the server's certificate too: HTTPS only
  // (tests/server/web/http_server_test.cc checks a verified handshake), so plain HTTP gets no page.
  EXPECT_EQ(lab_.web_url(), absl::StrCat("https://127.0.0.1:", lab_.web_port(), "/"));
  absl::StatusOr<HttpAnswer> plain = HttpFetch(lab_.web_port(), {.path = "/login"});
  EXPECT_TRUE(!plain.ok() || plain->status != 200) << plain->body;

  // The agent token: refused without a certificate, for its stream and for blobs.
  std::string why;
  EXPECT_EQ(ConnectAgent(ChannelAs(""), &why), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(why, HasSubstr("agents must present a client certificate"));
  EXPECT_EQ(FindMissingAsAgent(ChannelAs(""), &why), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(FindMissingAsAgent(ChannelAs("agent"), &why), grpc::StatusCode::OK) << why;
  EXPECT_EQ(ConnectAgent(ChannelAs("agent"), &why), grpc::StatusCode::OK) << why;

  // A real agent with its certificate runs jobs.
  RunAJobOnARealAgent();
}

// Replicas over TLS: the agent and the client are given an address list whose first replica is
// down. TLS checks the certificate against the first entry's host (all replicas present one
// certificate); the agent's first-that-answers and the client's round robin reach the live one.
// (A DNS name with several addresses is gRPC's own resolver and not tested here: this machine's
// names resolve to one address each, and /etc/hosts is not the tests' to edit.)
TEST_F(MtlsTest, AgentAndClientUseATlsAddressListWhoseFirstReplicaIsDown) {
  const std::string down = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
  lab_.SetServerAddressForProcesses(down + "," + lab_.address());
  RunAJobOnARealAgent();
  // The name checked is the first entry's: 127.0.0.2 is not in the certificate, so the live
  // replica's handshake fails (exit 5, unreachable).
  lab_.SetServerAddressForProcesses("127.0.0.2:" + down.substr(down.rfind(':') + 1) + "," +
                                    lab_.address());
  ClientResult unnamed = lab_.RunClient({"--tls-ca", pki_.Path("ca", "crt"), "health"});
  EXPECT_EQ(unnamed.exit_code, 5) << unnamed;
}

// `boardlab health` as deploy/k8s's probes run it: inside the server's pod it dials 127.0.0.1,
// which the server's certificate does not name, and verifies the name the certificate carries.
TEST(TlsHealthTest, ProbeVerifiesTheCertificatesNameWhenDiallingAnAddress) {
  ServiceLab lab;
  Pki pki(lab.dir());
  ASSERT_TRUE(pki.MakeCa("ca"));
  ASSERT_TRUE(pki.MakeSigned("server", "ca", "DNS:boardlab-server"));
  ASSERT_TRUE(lab.StartServer({.config_yaml = ServerConfig(pki), .tls_ca = pki.Path("ca", "crt")}));
  const std::string ca = pki.Path("ca", "crt");

  ClientResult named =
      lab.RunClient({"--tls-ca", ca, "--tls-server-name", "boardlab-server", "health"});
  EXPECT_EQ(named.exit_code, 0) << named;
  EXPECT_THAT(named.out, HasSubstr("the server is SERVING")) << named;

  // Without the name the handshake fails (127.0.0.1 is not in the certificate): unreachable.
  ClientResult unnamed = lab.RunClient({"--tls-ca", ca, "health"});
  EXPECT_EQ(unnamed.exit_code, 5) << unnamed;
  ClientResult wrong =
      lab.RunClient({"--tls-ca", ca, "--tls-server-name", "someone-else", "health"});
  EXPECT_EQ(wrong.exit_code, 5) << wrong;
  ClientResult plaintext_name = lab.RunClient({"--tls-server-name", "boardlab-server", "health"});
  EXPECT_EQ(plaintext_name.exit_code, 2) << plaintext_name;
  EXPECT_THAT(plaintext_name.err, HasSubstr("--tls-server-name needs --tls-ca"));
}

}  // namespace
}  // namespace boardlab::testing::service
