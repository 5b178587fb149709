// `boardlab health`: gRPC health checking (grpc.health.v1.Health/Check) of a server, for probes
// (deploy/k8s: Kubernetes' own gRPC probe cannot speak TLS) and for people checking a lab.

#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace boardlab::cli {

// A probe must answer within its own timeout (deploy/k8s gives it 3 to 5 s), so a server that
// does not answer at once is as good as down.
constexpr std::chrono::seconds kHealthDeadline{3};

int RunHealth(const Connection& connection, const std::string& service) {
  std::unique_ptr<grpc::health::v1::Health::Stub> stub =
      grpc::health::v1::Health::NewStub(connection.channel);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  PrepareContext(context, connection, kHealthDeadline);
  const absl::Status status = api::FromGrpcStatus(stub->Check(&context, request, &response));
  const std::string what = service.empty() ? "the server" : "service " + service;
  if (!status.ok()) {
    // NOT_FOUND is the protocol's answer for a service the server does not know.
    return FailWithStatus(status, "checking the health of " + what, connection.server);
  }
  const std::string state =
      grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
  std::cout << connection.server << ": " << what << " is " << state << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? kExitPass
                                                                             : kExitInfra;
}

}  // namespace boardlab::cli
