#include "runtime/cli/input_spec.h"

#include <fstream>
#include <iterator>

#include "runtime/core/random_bytes.h"

namespace boardlab::run {

bool ReadInputSpec(const std::string& spec, size_t index, size_t size, const std::string& tensor,
                   std::vector<uint8_t>* out, std::string* error) {
  if (spec.rfind("random:", 0) == 0) {
    uint64_t seed = 0;
    try {
      seed = std::stoull(spec.substr(7));
    } catch (const std::exception&) {
      *error = "input " + std::to_string(index) + ": bad seed in '" + spec + "'";
      return false;
    }
    out->resize(size);
    runtime::FillRandomBytes(seed, out->data(), size);
    return true;
  }
  std::ifstream in(spec, std::ios::binary);
  if (!in) {
    *error = "reading input file '" + spec + "': cannot open it";
    return false;
  }
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (out->size() != size) {
    *error = "input " + std::to_string(index) + " '" + spec + "' has " +
             std::to_string(out->size()) + " bytes, the tensor " + tensor +
             (tensor.empty() ? "" : " ") + "takes " + std::to_string(size);
    return false;
  }
  return true;
}

}  // namespace boardlab::run
