// `boardlab health`: gRPC health checking of a live server, the command deploy/k8s's startup,
// readiness and liveness probes run (the TLS case is in mtls_test.cc).

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"

namespace boardlab::testing::service {
namespace {

using ::testing::HasSubstr;

TEST(HealthTest, ServingServerIsExitZeroAndADeadOneExitFive) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ClientResult serving = lab.RunClient({"health"});
  EXPECT_EQ(serving.exit_code, 0) << serving;
  EXPECT_THAT(serving.out, HasSubstr(": the server is SERVING")) << serving;

  lab.KillServer();
  ClientResult dead = lab.RunClient({"health"});
  EXPECT_EQ(dead.exit_code, 5) << dead;
  EXPECT_THAT(dead.err, HasSubstr("checking the health of the server")) << dead;
}

TEST(HealthTest, ServiceTheServerDoesNotKnowIsRefused) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ClientResult unknown = lab.RunClient({"health", "--service", "no.such.Service"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown;
  EXPECT_THAT(unknown.err, HasSubstr("service no.such.Service")) << unknown;
}

}  // namespace
}  // namespace boardlab::testing::service
