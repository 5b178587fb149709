#pragma once

// Access to the read-only shared folder (../shared next to the repository) that holds the real
// int8 models and golden outputs. Tests must not assume it exists: CI machines without it skip.
//
// Usage:
//   std::optional<std::string> path = SharedModelPath("mlperf-tiny/kws_dscnn_int8.tflite");
//   if (!path) GTEST_SKIP() << "shared models folder absent: " << SharedModelsDir();
//   std::vector<uint8_t> bytes = ReadFile(*path);

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace boardlab::testing {

/// The shared models folder (BOARDLAB_SHARED_DIR/models), whether or not it exists.
std::string SharedModelsDir();

/// Full path of `relative` inside the shared models folder; nullopt when the file is absent.
std::optional<std::string> SharedModelPath(std::string_view relative);

/// The whole file; an empty vector when it cannot be read (callers check the size).
std::vector<uint8_t> ReadFile(const std::string& path);

/// Writes `bytes` to `path`; false on failure.
bool WriteFile(const std::string& path, const std::vector<uint8_t>& bytes);

/// `given` when not empty, else the full paths of the real models present in the shared folder
/// (what the benchmark programs run when given no model).
std::vector<std::string> ModelsOrSharedDefaults(std::vector<std::string> given);

/// The six real models in the shared folder, as paths relative to SharedModelsDir().
inline constexpr std::string_view kRealModels[] = {
    "mlperf-tiny/vww_96_int8.tflite",       "mlperf-tiny/resnet8_int8.tflite",
    "mlperf-tiny/kws_dscnn_int8.tflite",    "mlperf-tiny/ad_fcae_int8.tflite",
    "tflite-micro/hello_world_int8.tflite", "pytorch-export/mobilenet_v2_int8_1x3x224x224.tflite",
};

}  // namespace boardlab::testing
