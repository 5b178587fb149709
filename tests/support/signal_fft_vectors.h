#pragma once

// TFLite Micro's 512-point real FFT test vectors (signal/testdata/fft_test_data.cc), the numbers
// only: inputs and the expected outputs its fft_test.cc compares with.

#include <cstdint>
#include <vector>

namespace boardlab::testing {

/// RfftTestSize512Int16: 512 samples, and the 257 bins TFLite Micro expects (within 3; its
/// portable build's, the HiFi one has its own table). The same bins are IrfftTestLength512Int16's
/// input.
extern const std::vector<int16_t> kRfftInt16Length512Input;
extern const std::vector<int16_t> kRfftInt16Length512Golden;
/// IrfftTestLength512Int16's expected samples (tolerance 0).
extern const std::vector<int16_t> kIrfftInt16Length512Golden;

/// RfftTestSize512Int32 (tolerance 0).
extern const std::vector<int32_t> kRfftInt32Length512Input;
extern const std::vector<int32_t> kRfftInt32Length512Golden;

/// IrfftTestLength512Int32 (tolerance 0).
extern const std::vector<int32_t> kIrfftInt32Length512Input;
extern const std::vector<int32_t> kIrfftInt32Length512Golden;

/// RfftTestSize512Float: 512 samples and the 257 bins TFLite Micro expects (within 1e-5; printed
/// with 9 significant digits, so each is one float exactly).
extern const std::vector<float> kRfftFloatLength512Input;
extern const std::vector<float> kRfftFloatLength512Golden;

/// IrfftTestLength512Float: 257 bins and the 512 samples TFLite Micro expects (within 1e-6;
/// the samples printed with 8 decimals, but for 5 with 9 or 10).
extern const std::vector<float> kIrfftFloatLength512Input;
extern const std::vector<float> kIrfftFloatLength512Golden;

}  // namespace boardlab::testing
