// boards and board reserve/release/maintenance: BoardService's calls.

#include <iostream>

#include "boardlab/v1/board_service.grpc.pb.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/tables.h"

namespace boardlab::cli {
namespace {

// The board after a change, as JSON or as a one-row table.
int PrintChangedBoard(const v1::Board& board, bool json) {
  if (json) {
    std::cout << MessageJson(board) << "\n";
    return kExitPass;
  }
  google::protobuf::RepeatedPtrField<v1::Board> boards;
  *boards.Add() = board;
  PrintBoardsTable(boards, std::cout);
  return kExitPass;
}

}  // namespace

int RunBoards(const Connection& connection, const std::string& board_type, bool json) {
  std::unique_ptr<v1::BoardService::Stub> stub = v1::BoardService::NewStub(connection.channel);
  v1::ListBoardsRequest request;
  request.set_board_type(board_type);
  v1::ListBoardsResponse response;
  absl::Status status = UnaryCall(connection, [&](grpc::ClientContext& context) {
    return stub->ListBoards(&context, request, &response);
  });
  if (!status.ok()) return FailWithStatus(status, "listing boards", connection.server);
  if (json) {
    std::cout << MessageJson(response) << "\n";
  } else {
    PrintBoardsTable(response.boards(), std::cout);
    std::cout << "\n";
    PrintBoardTypeSummary(response, std::cout);
  }
  return kExitPass;
}

int RunReserve(const Connection& connection, const std::string& board_id, int ttl_seconds,
               const std::string& lease_id, bool json) {
  std::unique_ptr<v1::BoardService::Stub> stub = v1::BoardService::NewStub(connection.channel);
  v1::ReserveRequest request;
  request.set_board_id(board_id);
  request.set_ttl_seconds(ttl_seconds);
  request.set_lease_id(lease_id);
  v1::ReserveResponse response;
  absl::Status status = UnaryCall(connection, [&](grpc::ClientContext& context) {
    return stub->Reserve(&context, request, &response);
  });
  if (!status.ok()) return FailWithStatus(status, "reserving board " + board_id, connection.server);
  if (json) {
    std::cout << MessageJson(response) << "\n";
    return kExitPass;
  }
  std::cout << "lease " << response.lease_id() << " on board " << board_id
            << " (release with: boardlab board release " << board_id << " --lease "
            << response.lease_id() << ")\n";
  return kExitPass;
}

int RunRelease(const Connection& connection, const std::string& board_id,
               const std::string& lease_id, bool json) {
  std::unique_ptr<v1::BoardService::Stub> stub = v1::BoardService::NewStub(connection.channel);
  v1::ReleaseRequest request;
  request.set_board_id(board_id);
  request.set_lease_id(lease_id);
  v1::Board board;
  absl::Status status = UnaryCall(connection, [&](grpc::ClientContext& context) {
    return stub->Release(&context, request, &board);
  });
  if (!status.ok()) return FailWithStatus(status, "releasing board " + board_id, connection.server);
  return PrintChangedBoard(board, json);
}

int RunMaintenance(const Connection& connection, const std::string& board_id, bool on,
                   const std::string& reason, bool json) {
  std::unique_ptr<v1::BoardService::Stub> stub = v1::BoardService::NewStub(connection.channel);
  v1::SetMaintenanceRequest request;
  request.set_board_id(board_id);
  request.set_on(on);
  request.set_reason(reason);
  v1::Board board;
  absl::Status status = UnaryCall(connection, [&](grpc::ClientContext& context) {
    return stub->SetMaintenance(&context, request, &board);
  });
  if (!status.ok()) {
    return FailWithStatus(status, "setting maintenance on board " + board_id, connection.server);
  }
  return PrintChangedBoard(board, json);
}

}  // namespace boardlab::cli
