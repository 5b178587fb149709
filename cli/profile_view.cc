#include "cli/profile_view.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace boardlab::cli {
namespace {

using nlohmann::json;

// Accessors that never throw: a field of the wrong type reads as absent.
double NumberOr(const json& object, const char* key, double fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

std::optional<uint64_t> OptionalCount(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number() || it->get<double>() < 0) return std::nullopt;
  return it->get<uint64_t>();
}

std::string StringOr(const json& object, const char* key, const std::string& fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

absl::StatusOr<ProfileOp> ParseOp(const json& row, size_t index) {
  if (!row.is_object() || !row.contains("op") || !row.contains("us")) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile op ", index, " is not an object with \"op\" and \"us\""));
  }
  ProfileOp op;
  op.instruction = static_cast<int64_t>(NumberOr(row, "instruction", -1));
  op.op = StringOr(row, "op", "?");
  op.npu = StringOr(row, "unit", "CPU") == "NPU";
  op.cycles = OptionalCount(row, "cycles");
  op.us = NumberOr(row, "us", 0);
  op.percent = NumberOr(row, "percent", 0);
  const auto kernels = row.find("npu_kernels");
  if (kernels != row.end() && kernels->is_array()) {
    for (size_t k = 0; k < kernels->size(); ++k) {
      absl::StatusOr<ProfileOp> kernel = ParseOp((*kernels)[k], k);
      if (!kernel.ok()) return kernel.status();
      kernel->instruction = -1;
      op.npu_kernels.push_back(*std::move(kernel));
    }
  }
  return op;
}

}  // namespace

absl::StatusOr<ProfileView> ParseProfileJson(std::string_view text) {
  json document = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return absl::InvalidArgumentError("the profile is not valid JSON");
  // boardlab-run's whole document carries the profile in "profile".
  const json& profile =
      document.is_object() && document.contains("profile") ? document["profile"] : document;
  if (!profile.is_object() || !profile.contains("ops") || !profile["ops"].is_array()) {
    return absl::InvalidArgumentError("the profile has no \"ops\" array");
  }
  ProfileView view;
  view.clock = StringOr(profile, "clock", "");
  view.iterations = static_cast<int64_t>(NumberOr(profile, "iterations", 0));
  view.total_us = NumberOr(profile, "total_us", 0);
  view.total_cycles = OptionalCount(profile, "total_cycles");
  const json& ops = profile["ops"];
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<ProfileOp> op = ParseOp(ops[i], i);
    if (!op.ok()) return op.status();
    view.ops.push_back(*std::move(op));
  }
  return view;
}

}  // namespace boardlab::cli
