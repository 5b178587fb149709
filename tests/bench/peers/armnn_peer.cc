#include "tests/bench/peers/armnn_peer.h"

#include <armnn/ArmNN.hpp>
#include <armnnTfLiteParser/ITfLiteParser.hpp>
#include <chrono>
#include <exception>

namespace boardlab::bench {
namespace {

struct Loaded {
  armnn::IRuntimePtr runtime{nullptr, &armnn::IRuntime::Destroy};
  armnn::NetworkId network = 0;
  armnnTfLiteParser::BindingPointInfo input;
  armnnTfLiteParser::BindingPointInfo output;
};

void Load(const std::string& model_path, Loaded& loaded) {
  armnnTfLiteParser::ITfLiteParserPtr parser = armnnTfLiteParser::ITfLiteParser::Create();
  armnn::INetworkPtr network = parser->CreateNetworkFromBinaryFile(model_path.c_str());
  const std::vector<std::string> inputs = parser->GetSubgraphInputTensorNames(0);
  const std::vector<std::string> outputs = parser->GetSubgraphOutputTensorNames(0);
  loaded.input = parser->GetNetworkInputBindingInfo(0, inputs.at(0));
  loaded.output = parser->GetNetworkOutputBindingInfo(0, outputs.at(0));
  loaded.runtime = armnn::IRuntime::Create(armnn::IRuntime::CreationOptions());
  armnn::IOptimizedNetworkPtr optimized =
      armnn::Optimize(*network, {armnn::Compute::CpuRef}, loaded.runtime->GetDeviceSpec());
  std::string message;
  if (loaded.runtime->LoadNetwork(loaded.network, std::move(optimized), message) !=
      armnn::Status::Success) {
    throw armnn::Exception("LoadNetwork failed: " + message);
  }
}

}  // namespace

PeerRun RunArmnnCpuRef(const std::string& model_path, const std::vector<uint8_t>& input,
                       double min_seconds) {
  PeerRun run;
  // ArmNN reports errors with exceptions: this is the third-party boundary where they stop.
  try {
    Loaded loaded;
    Load(model_path, loaded);
    if (loaded.input.second.GetNumBytes() != input.size()) {
      run.error = "input is " + std::to_string(loaded.input.second.GetNumBytes()) + " bytes";
      return run;
    }
    run.output.resize(loaded.output.second.GetNumBytes());
    armnn::InputTensors inputs{
        {loaded.input.first, armnn::ConstTensor(loaded.input.second, input.data())}};
    armnn::OutputTensors outputs{
        {loaded.output.first, armnn::Tensor(loaded.output.second, run.output.data())}};
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
      if (loaded.runtime->EnqueueWorkload(loaded.network, inputs, outputs) !=
          armnn::Status::Success) {
        run.error = "EnqueueWorkload failed";
        return run;
      }
      ++run.iterations;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (elapsed < min_seconds);
    run.inferences_per_second = run.iterations / elapsed;
    run.ok = true;
  } catch (const std::exception& e) {
    run.error = e.what();
  }
  return run;
}

}  // namespace boardlab::bench
