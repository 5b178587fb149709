// The cases of the signal library's filter bank stage (op_cases.h SignalFilterBankCases):
// TFLite Micro's own test vectors, inputs and expected outputs, from signal/micro/kernels
// energy_test.cc, filter_bank_test.cc, filter_bank_square_root_test.cc, filter_bank_log_test.cc,
// pcan_test.cc and filter_bank_spectral_subtraction_test.cc, with the option bytes of the matching
// *_flexbuffers_generated_data.cc (so the importer reads exactly what TFLite Micro's tests feed its
// Init). The TFLite interpreter has no signal ops; TFLite Micro's expected outputs are the
// reference.

#include <cstring>
#include <map>

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using cases::RawBytes;
using compiler::OpType;
using Bytes = std::vector<uint8_t>;

constexpr const char* kNoSignalOps =
    "the TFLite interpreter has no signal library ops; TFLite Micro's test vectors";

// energy_flexbuffers_generated_data.cc: {"end_index": e, "start_index": s}.
Bytes EnergyOptions(uint8_t start, uint8_t end) {
  return {0x73, 0x74, 0x61, 0x72, 0x74, 0x5f,  0x69, 0x6e, 0x64, 0x65, 0x78, 0x00,
          0x65, 0x6e, 0x64, 0x5f, 0x69, 0x6e,  0x64, 0x65, 0x78, 0x00, 0x02, 0x0b,
          0x18, 0x02, 0x01, 0x02, end,  start, 0x04, 0x04, 0x04, 0x24, 0x01};
}

// filter_bank_flexbuffers_generated_data.cc: {"num_channels": n}.
Bytes FilterBankOptions(uint8_t channels) {
  return {0x6e, 0x75, 0x6d, 0x5f, 0x63, 0x68, 0x61,     0x6e, 0x6e, 0x65, 0x6c, 0x73,
          0x00, 0x01, 0x0e, 0x01, 0x01, 0x01, channels, 0x04, 0x02, 0x24, 0x01};
}

// filter_bank_log_flexbuffers_generated_data.cc: {"input_correction_bits": 3,
// "output_scale": 1600} and {"input_correction_bits": 5, "output_scale": 32768}.
const Bytes kLogScale1600Bits3 = {0x6f, 0x75, 0x74, 0x70, 0x75, 0x74, 0x5f, 0x73, 0x63, 0x61, 0x6c,
                                  0x65, 0x00, 0x69, 0x6e, 0x70, 0x75, 0x74, 0x5f, 0x63, 0x6f, 0x72,
                                  0x72, 0x65, 0x63, 0x74, 0x69, 0x6f, 0x6e, 0x5f, 0x62, 0x69, 0x74,
                                  0x73, 0x00, 0x02, 0x17, 0x25, 0x02, 0x00, 0x01, 0x00, 0x02, 0x00,
                                  0x03, 0x00, 0x40, 0x06, 0x05, 0x05, 0x06, 0x25, 0x01};
const Bytes kLogScale32768Bits5 = {0x6f, 0x75, 0x74, 0x70, 0x75, 0x74, 0x5f, 0x73, 0x63, 0x61, 0x6c,
                                   0x65, 0x00, 0x69, 0x6e, 0x70, 0x75, 0x74, 0x5f, 0x63, 0x6f, 0x72,
                                   0x72, 0x65, 0x63, 0x74, 0x69, 0x6f, 0x6e, 0x5f, 0x62, 0x69, 0x74,
                                   0x73, 0x00, 0x02, 0x17, 0x25, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
                                   0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00,
                                   0x00, 0x00, 0x80, 0x00, 0x00, 0x06, 0x06, 0x0a, 0x26, 0x01};

// pcan_flexbuffers_generated_data.cc: {"snr_shift": 6}.
const Bytes kPcanSnrShift6 = {0x73, 0x6e, 0x72, 0x5f, 0x73, 0x68, 0x69, 0x66, 0x74, 0x00,
                              0x01, 0x0b, 0x01, 0x01, 0x01, 0x06, 0x04, 0x02, 0x24, 0x01};

// filter_bank_spectral_subtraction_flexbuffers_generated_data.cc: {"alternate_one_minus_smoothing":
// 15729, "alternate_smoothing": 655, "clamping": 0, "min_signal_remaining": 819, "num_channels":
// n, "one_minus_smoothing": 15729, "smoothing": 655, "smoothing_bits": 0,
// "spectral_subtraction_bits": 14}, every value a 16-bit int.
Bytes SpectralSubtractionOptions(uint8_t channels) {
  Bytes b;
  for (const char* key : {"num_channels", "smoothing", "one_minus_smoothing", "alternate_smoothing",
                          "alternate_one_minus_smoothing", "smoothing_bits", "min_signal_remaining",
                          "clamping", "spectral_subtraction_bits"}) {
    b.insert(b.end(), key, key + std::strlen(key) + 1);  // the keys as the generator wrote them
  }
  const Bytes tail = {0x09,     0x66, 0x7b, 0x26, 0x3c, 0xa9, 0x93, 0x9e, 0x4f, 0x23, 0x09, 0x00,
                      0x01,     0x00, 0x09, 0x00, 0x71, 0x3d, 0x8f, 0x02, 0x00, 0x00, 0x33, 0x03,
                      channels, 0x00, 0x71, 0x3d, 0x8f, 0x02, 0x00, 0x00, 0x0e, 0x00, 0x05, 0x05,
                      0x05,     0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x1b, 0x25, 0x01};
  b.insert(b.end(), tail.begin(), tail.end());
  return b;
}

// ---- energy_test.cc: 8 complex bins 1+2i, 3+4i, ... 15+16i.
const std::vector<int16_t> kEnergyInput = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

struct EnergyVector {
  const char* name;
  uint8_t start, end;
  std::vector<uint32_t> golden;
};
const std::vector<EnergyVector> kEnergy = {
    {"TFLite Micro EnergyTestMiddle", 2, 4, {0, 0, 61, 113, 0, 0, 0, 0}},
    {"TFLite Micro EnergyTestStart", 0, 4, {5, 25, 61, 113, 0, 0, 0, 0}},
    {"TFLite Micro EnergyTestEnd", 4, 8, {0, 0, 0, 0, 181, 265, 365, 481}}};

// ---- filter_bank_test.cc FilterBankTest32Channel.
const std::vector<uint32_t> kBank32Input = {
    65451,      11468838,   4280615122, 4283105055, 30080683,   969970,     1168164,    192770,
    344209,     1811809,    1740724,    586130,     305045,     17981,      169273,     103321,
    85277,      529901,     524660,     116609,     29653,      64345,      13121,      273956,
    593748,     463432,     348169,     77545,      2117,       19277,      13837,      85,
    16322,      1325,       69584,      233930,     253273,     94180,      8642,       104245,
    151937,     231970,     90405,      95849,      106285,     81938,      76226,      103337,
    303250,     337705,     75140,      43874,      33730,      44761,      117608,     57322,
    9945,       19816,      48674,      19465,      15696,      52229,      103738,     102541,
    126421,     133157,     33680,      7738,       45029,      57122,      61605,      60138,
    26170,      41444,      210994,     238338,     74324,      21460,      33125,      3940,
    15481,      7709,       24929,      17714,      170993,     91978,      45965,      214133,
    96832,      1800,       16717,      42341,      87421,      114341,     65161,      26260,
    135077,     245000,     122117,     81188,      107753,     74125,      86432,      91460,
    29648,      2069,       3161,       5002,       784,        1152,       1424,       277,
    452,        2696,       3610,       2120,       2617,       562,        1153,       4610,
    2906,       65,         786450,     4293722107, 0,          393208,     2,          196608,
    65539,      65537,      4294967295, 65537,      4294901762, 65535,      4294770689, 65533,
    131073,     4294901761, 131071,     131071,     65535,      4294901764, 4294967295, 0,
    4294901758, 4294901761, 196607,     4294836224, 131070,     4294901762, 4294901759, 196608,
    4294901761, 131071,     131070,     65538,      0,          4294901761, 65536,      4294836225,
    65536,      4294836225, 4294901757, 65535,      4294901760, 196607,     4294967295, 0,
    131071,     4294901762, 4294836221, 196608,     65536,      1,          131074,     4294770690,
    4294967291, 196611,     4294770687, 262143,     4294901759, 131071,     1,          4294901759,
    196607,     4294705153, 196607,     4294967294, 65536,      1,          4294901759, 65536,
    0,          65536,      65537,      4294901759, 65536,      3,          4294836222, 65534,
    65536,      65538,      4294836225, 4294901760, 4294901761, 4294967293, 0,          65534,
    131070,     65537,      4294901762, 65536,      2,          4294836224, 1,          4294901760,
    0,          4294967294, 131073,     4294901760, 65535,      131073,     4294836224, 65536,
    4294901760, 4294901760, 4294967295, 4294901761, 131071,     4294901760, 131071,     4294836224,
    2,          4294901758, 4294967292, 131073,     0,          65535,      0,          4294901760,
    4294967295, 131073,     4294901764, 4294836223, 4294967295, 65535,      65537,      65533,
    3,          131072,     4294836224, 65537,      1,          4294967293, 196611,     4294901759,
    1};
const std::vector<int16_t> kBank32Weights = {
    1133, 2373, 3712, 1047, 2564, 66,   1740, 3486, 1202, 3079, 919,  2913, 865,  2964, 1015,
    3210, 1352, 3633, 1859, 123,  2520, 856,  3323, 1726, 161,  2722, 1215, 3833, 2382, 956,
    3652, 2276, 923,  3689, 2380, 1093, 3922, 2676, 1448, 239,  3144, 1970, 814,  3770, 2646,
    1538, 445,  3463, 2399, 1349, 313,  3386, 2376, 1379, 394,  3517, 2556, 1607, 668,  3837,
    2920, 2013, 1117, 231,  3450, 2583, 1725, 877,  37,   3302, 2480, 1666, 861,  63,   3369,
    2588, 1813, 1046, 287,  3630, 2885, 2147, 1415, 690,  4067, 3355, 2650, 1950, 1257, 569,
    3984, 3308, 2638, 1973, 1314, 661,  12,   3465, 2827, 2194, 1566, 943,  325,  3808, 3199,
    2595, 1996, 1401, 810,  224,  3738, 3160, 2586, 2017, 1451, 890,  332};
const std::vector<int16_t> kBank32Unweights = {
    2962, 1722, 383,  3048, 1531, 4029, 2355, 609,  2893, 1016, 3176, 1182, 3230, 1131, 3080,
    885,  2743, 462,  2236, 3972, 1575, 3239, 772,  2369, 3934, 1373, 2880, 262,  1713, 3139,
    443,  1819, 3172, 406,  1715, 3002, 173,  1419, 2647, 3856, 951,  2125, 3281, 325,  1449,
    2557, 3650, 632,  1696, 2746, 3782, 709,  1719, 2716, 3701, 578,  1539, 2488, 3427, 258,
    1175, 2082, 2978, 3864, 645,  1512, 2370, 3218, 4058, 793,  1615, 2429, 3234, 4032, 726,
    1507, 2282, 3049, 3808, 465,  1210, 1948, 2680, 3405, 28,   740,  1445, 2145, 2838, 3526,
    111,  787,  1457, 2122, 2781, 3434, 4083, 630,  1268, 1901, 2529, 3152, 3770, 287,  896,
    1500, 2099, 2694, 3285, 3871, 357,  935,  1509, 2078, 2644, 3205, 3763};
const std::vector<int16_t> kBank32FrequencyStarts = {5,  6,  7,  9,  11, 12, 14, 16, 18,  20,  22,
                                                     25, 27, 30, 32, 35, 38, 41, 45, 48,  52,  56,
                                                     60, 64, 69, 74, 79, 84, 89, 95, 102, 108, 115};
const std::vector<int16_t> kBank32WeightStarts = {0,  1,  2,  4,  6,  7,  9,  11, 13, 15,  17,
                                                  20, 22, 25, 27, 30, 33, 36, 40, 43, 47,  51,
                                                  55, 59, 64, 69, 74, 79, 84, 90, 97, 103, 110};
const std::vector<int16_t> kBank32Widths = {1, 1, 2, 2, 1, 2, 2, 2, 2, 2, 3, 2, 3, 2, 3, 3, 3,
                                            4, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6, 7, 6, 7, 7};
const std::vector<uint64_t> kBank32Golden = {
    5645104312, 3087527471, 5883346002, 10807122775, 2465336182, 853935004,  1206905130, 3485828019,
    1134726750, 832725041,  4442875878, 2122064365,  178483220,  151483681,  1742660113, 1309124116,
    1954305288, 1323857378, 2750861165, 1340947482,  792522630,  669257768,  1659699572, 940652856,
    1957080469, 1034203505, 1541805928, 1710818326,  2432875876, 2254716277, 275382345,  57293224};

// ---- filter_bank_test.cc FilterBankTest16Channel.
const std::vector<uint32_t> kBank16Input = {
    645050, 4644,  3653,  24262, 56660, 43260, 50584, 57902, 31702, 5401,  45555, 34852, 8518,
    43556,  13358, 19350, 40221, 18017, 27284, 64491, 60099, 17863, 11001, 29076, 32666, 65268,
    50947,  28694, 32377, 30014, 25607, 22547, 45086, 10654, 46797, 8622,  47348, 43085, 5747,
    51544,  50364, 6208,  20696, 59782, 14429, 60125, 37079, 32673, 63457, 60142, 34042, 11280,
    1874,   33734, 62118, 13766, 54398, 47818, 50976, 46930, 25906, 59441, 25958, 59136, 1756,
    18652,  29213, 13379, 51845, 1207,  55626, 27108, 43771, 35236, 3374,  40959, 47707, 41540,
    34282,  27094, 36329, 13593, 65257, 47006, 46857, 1114,  37106, 18738, 25969, 15461, 2842,
    36470,  32489, 61622, 23613, 29624, 32820, 30438, 9543,  6767,  23037, 52896, 12059, 32264,
    11575,  42400, 43344, 27511, 16712, 6877,  4910,  50047, 61569, 57237, 48558, 2310,  22192,
    7874,   46141, 64056, 61997, 7298,  31372, 25316, 683,   58940, 18755, 17898, 19196};
const std::vector<int16_t> kBank16Weights = {
    -2210, 1711, 3237, 1247, 2507, 61,   1019, 899,  206,  146,  2849, 2756, 1260, 1280, 1951,
    213,   617,  2047, 211,  347,  2821, 3747, 150,  1924, 3962, 942,  1430, 2678, 993,  308,
    3364,  2491, 954,  1308, 879,  3950, 1,    3556, 3628, 2104, 78,   1298, 1080, 342,  1337,
    1639,  2352, 829,  1358, 2498, 1647, 2507, 3816, 3767, 3735, 1155, 2221, 2196, 1160};
const std::vector<int16_t> kBank16Unweights = {
    408,  3574, 1880, 2561, 2011, 3394, 1019, 445,  3901, 343,  1874, 3846, 3566, 1830, 327,
    111,  623,  1037, 2803, 1947, 1518, 661,  3239, 2351, 1257, 269,  1574, 3431, 3972, 2487,
    2181, 1458, 552,  717,  679,  1031, 1738, 1782, 128,  2242, 353,  1460, 3305, 1424, 3813,
    2895, 164,  272,  3886, 3135, 141,  747,  3233, 1478, 2612, 3837, 3271, 73,   1746};
const std::vector<int16_t> kBank16FrequencyStarts = {5,  6,  7,  9,  11, 12, 14, 16, 18,
                                                     20, 22, 25, 27, 30, 32, 35, 33};
const std::vector<int16_t> kBank16WeightStarts = {0,  1,  2,  4,  6,  7,  9,  11, 13,
                                                  15, 17, 20, 22, 25, 27, 30, 33};
const std::vector<int16_t> kBank16Widths = {1, 1, 2, 2, 1, 2, 2, 2, 2, 2, 3, 2, 3, 2, 3, 3, 3};
const std::vector<uint64_t> kBank16Golden = {
    104199304, 407748384, 206363744, 200989269, 52144406,  230780884, 174394190, 379684049,
    94840835,  57788823,  531528204, 318265707, 263149795, 188110467, 501443259, 200747781};

struct FilterBankVector {
  const char* name;
  const std::vector<uint32_t>* input;
  const std::vector<int16_t>*weights, *unweights, *frequency_starts, *weight_starts, *widths;
  const std::vector<uint64_t>* golden;
};
const std::vector<FilterBankVector> kFilterBank = {
    {"TFLite Micro FilterBankTest32Channel", &kBank32Input, &kBank32Weights, &kBank32Unweights,
     &kBank32FrequencyStarts, &kBank32WeightStarts, &kBank32Widths, &kBank32Golden},
    {"TFLite Micro FilterBankTest16Channel", &kBank16Input, &kBank16Weights, &kBank16Unweights,
     &kBank16FrequencyStarts, &kBank16WeightStarts, &kBank16Widths, &kBank16Golden}};

// ---- filter_bank_square_root_test.cc.
struct SquareRootVector {
  const char* name;
  std::vector<uint64_t> input;
  int32_t scale_bits;
  std::vector<uint32_t> golden;
};
const std::vector<SquareRootVector> kSquareRoot = {
    {"TFLite Micro FilterBankSquareRoot32Channel",
     {10528000193, 28362909357, 47577133750, 8466055850, 5842710800, 2350911449, 2989811430,
      2646718839,  515262774,   276394561,   469831522,  55815334,   28232446,   11591835,
      40329249,    67658028,    183446654,   323189165,  117473797,  41339272,   25846050,
      12428673,    18670978,    22521722,    78477733,   54207503,   25150296,   43098592,
      28211625,    15736687,    20990296,    17907031},
     7,
     {801, 1315, 1704, 718, 597, 378, 427, 401, 177, 129, 169, 58, 41, 26, 49, 64,
      105, 140,  84,   50,  39,  27,  33,  37,  69,  57,  39,  51, 41, 30, 35, 33}},
    {"TFLite Micro FilterBankSquareRoot16Channel",
     {13051415151, 14932650877, 18954728418, 8730126017, 6529665275, 12952546517, 10314975609,
      8919697835, 8053663348, 17231208421, 7366899760, 1372112200, 19953434807, 17012385332,
      4710443222, 17765594053},
     5,
     {3570, 3818, 4302, 2919, 2525, 3556, 3173, 2951, 2804, 4102, 2682, 1157, 4414, 4076, 2144,
      4165}}};

// ---- filter_bank_log_test.cc.
struct LogVector {
  const char* name;
  std::vector<uint32_t> input;
  const Bytes* options;
  std::vector<int16_t> golden;
};
const std::vector<LogVector> kLog = {
    {"TFLite Micro FilterBankLogTest32Channel",
     {29, 21, 29, 40, 19, 11, 13, 23, 13, 11, 25, 17, 5,  4,  46, 14,
      17, 14, 20, 14, 10, 10, 15, 11, 17, 12, 15, 16, 19, 18, 6,  2},
     &kLogScale1600Bits3,
     {8715, 8198, 8715, 9229, 8038, 7164, 7431, 8344, 7431, 7164, 8477,
      7860, 5902, 5545, 9453, 7550, 7860, 7550, 8120, 7550, 7011, 7011,
      7660, 7164, 7860, 7303, 7660, 7763, 8038, 7952, 6194, 4436}},
    {"TFLite Micro FilterBankLogTest16Channel",
     {48, 20, 19, 24, 35, 47, 23, 30, 31, 10, 48, 21, 46, 14, 18, 27},
     &kLogScale32768Bits5,
     {32767, 15121, 13440, 21095, 32767, 32767, 19701, 28407, 29482, 32767, 32767, 16720, 32767,
      3434, 11669, 24955}}};

// ---- pcan_test.cc Mix1Ref1Case.
const std::vector<uint32_t> kPcanInput = {286, 298, 305, 291, 290, 279, 273, 257, 250, 240,
                                          240, 233, 234, 230, 221, 205, 183, 159, 156, 188,
                                          239, 298, 345, 374, 380, 369, 359, 364, 372, 354,
                                          302, 243, 194, 135, 64,  72,  171, 245, 277, 304};
const std::vector<uint32_t> kPcanNoise = {
    7310, 18308, 7796, 17878, 7413, 17141, 6978, 15789, 6390, 14745, 6135, 14314, 5981, 14130,
    5649, 12594, 4677, 9768,  3987, 11550, 6109, 18308, 8819, 22977, 9713, 22670, 9176, 22363,
    9509, 21748, 7719, 14929, 4959, 8294,  1636, 4423,  4371, 15052, 7080, 18677};
const std::vector<int16_t> kPcanGainLut = {
    32636, 32633,  32630, -6,    0,    -21589, 32624, -12,   0,    -21589, 32612, -23,
    -2,    -21589, 32587, -48,   0,    -21589, 32539, -96,   0,    -21589, 32443, -190,
    0,     -21589, 32253, -378,  4,    -21589, 31879, -739,  18,   -21589, 31158, -1409,
    62,    -21589, 29811, -2567, 202,  -21589, 27446, -4301, 562,  -21589, 23707, -6265,
    1230,  -21589, 18672, -7458, 1952, -21589, 13166, -7030, 2212, -21589, 8348,  -5342,
    1868,  -21589, 4874,  -3459, 1282, -21589, 2697,  -2025, 774,  -21589, 1446,  -1120,
    436,   -21589, 762,   -596,  232,  -21589, 398,   -313,  122,  -21589, 207,   -164,
    64,    -21589, 107,   -85,   34,   -21589, 56,    -45,   18,   -21589, 29,    -22,
    8,     -21589, 15,    -13,   6,    -21589, 8,     -8,    4,    -21589, 4,     -2,
    0,     -21589, 2,     -3,    2,    -21589, 1,     0,     0,    -21589, 1,     -3,
    2,     -21589, 0,     0,     0};
const std::vector<uint32_t> kPcanGolden = {1301, 836, 1354, 827, 1312, 811, 1263, 779, 1192, 753,
                                           1160, 743, 1140, 738, 1096, 698, 956,  607, 845,  667,
                                           1157, 836, 1461, 912, 1546, 908, 1496, 904, 1527, 895,
                                           1346, 758, 999,  548, 378,  344, 908,  761, 1274, 843};

int32_t Size(const auto& v) { return static_cast<int32_t>(v.size()); }

void AddFilterBank(CaseWriter& w, const FilterBankVector& v) {
  const int in = w.Values({Size(*v.input)}, TflType::kUint32, *v.input);
  std::vector<int32_t> operands = {in};
  for (const std::vector<int16_t>* table :
       {v.weights, v.unweights, v.frequency_starts, v.weight_starts, v.widths}) {
    operands.push_back(w.Const16({Size(*table)}, *table, {}));
  }
  const int out = w.Output({Size(*v.golden)}, TflType::kUint64);
  w.CustomOp(OpType::kSignalFilterBank, operands, {out},
             FilterBankOptions(static_cast<uint8_t>(v.golden->size())));
}

void AddPcan(CaseWriter& w) {
  const int in = w.Values({Size(kPcanInput)}, TflType::kUint32, kPcanInput);
  const int noise = w.Values({Size(kPcanNoise)}, TflType::kUint32, kPcanNoise);
  const int lut = w.Const16({Size(kPcanGainLut)}, kPcanGainLut, {});
  const int out = w.Output({Size(kPcanGolden)}, TflType::kUint32);
  w.CustomOp(OpType::kSignalPcan, {in, noise, lut}, {out}, kPcanSnrShift6);
}

// ---- filter_bank_spectral_subtraction_test.cc: one inference from a zero noise estimate; the
// output and the noise estimate.
struct SpectralSubtractionVector {
  const char* name;
  std::vector<uint32_t> input, output, noise;
};
const std::vector<SpectralSubtractionVector> kSpectralSubtraction = {
    {"TFLite Micro FilterBankSpectralSubtractionTest32Channel",
     {322, 308, 210, 212, 181, 251, 403, 259, 65, 48, 76, 48, 50, 46,  53,  52,
      112, 191, 136, 59,  70,  51,  39,  64,  33, 44, 41, 49, 74, 107, 262, 479},
     {310, 296, 202, 204, 174, 241, 387, 249, 63, 47, 73, 47, 49, 45,  51,  50,
      108, 184, 131, 57,  68,  49,  38,  62,  32, 43, 40, 48, 72, 103, 252, 460},
     {12, 12, 8, 8, 7, 10, 16, 10, 2, 1, 3, 1, 1, 1, 2,  2,
      4,  7,  5, 2, 2, 2,  1,  2,  1, 1, 1, 1, 2, 4, 10, 19}},
    {"TFLite Micro FilterBankSpectralSubtractionTest16Channel",
     {393, 213, 408, 1, 361, 385, 386, 326, 170, 368, 368, 305, 152, 322, 213, 319},
     {378, 205, 392, 1, 347, 370, 371, 313, 164, 354, 354, 293, 146, 310, 205, 307},
     {15, 8, 16, 0, 14, 15, 15, 13, 6, 14, 14, 12, 6, 12, 8, 12}}};

void AddSpectralSubtraction(CaseWriter& w, const SpectralSubtractionVector& v) {
  const int32_t n = Size(v.input);
  const int in = w.Values({n}, TflType::kUint32, v.input);
  w.CustomOp(OpType::kSignalSpectralSubtraction, {in},
             {w.Output({n}, TflType::kUint32), w.Output({n}, TflType::kUint32)},
             SpectralSubtractionOptions(static_cast<uint8_t>(n)));
}

// Every case's expected outputs, by case name.
std::map<std::string, std::vector<Bytes>>& Goldens() {
  static std::map<std::string, std::vector<Bytes>> goldens;
  return goldens;
}

void Add(CaseList& l, OpType type, const std::string& name, cases::Body body,
         std::vector<Bytes> goldens) {
  l.Add(type, name, std::move(body), kNoSignalOps);
  Goldens()[l.cases.back().name] = std::move(goldens);
}

void Add(CaseList& l, OpType type, const std::string& name, cases::Body body, Bytes golden) {
  Add(l, type, name, std::move(body), std::vector<Bytes>{std::move(golden)});
}

}  // namespace

const std::vector<OpCase>& SignalFilterBankCases() {
  static const std::vector<OpCase> cases = [] {
    CaseList l;
    for (const EnergyVector& v : kEnergy) {
      Add(
          l, OpType::kSignalEnergy, v.name,
          [&v](CaseWriter& w) {
            const int in = w.Int16Values({16}, {}, kEnergyInput);
            w.CustomOp(OpType::kSignalEnergy, {in}, {w.Output({8}, TflType::kUint32)},
                       EnergyOptions(v.start, v.end));
          },
          RawBytes(v.golden));
    }
    for (const FilterBankVector& v : kFilterBank) {
      Add(
          l, OpType::kSignalFilterBank, v.name, [&v](CaseWriter& w) { AddFilterBank(w, v); },
          RawBytes(*v.golden));
    }
    for (const SquareRootVector& v : kSquareRoot) {
      Add(
          l, OpType::kSignalFilterBankSquareRoot, v.name,
          [&v](CaseWriter& w) {
            const int in = w.Values({Size(v.input)}, TflType::kUint64, v.input);
            const int bits = w.Int32({}, {v.scale_bits});
            w.CustomOp(OpType::kSignalFilterBankSquareRoot, {in, bits},
                       {w.Output({Size(v.golden)}, TflType::kUint32)}, {});
          },
          RawBytes(v.golden));
    }
    for (const LogVector& v : kLog) {
      Add(
          l, OpType::kSignalFilterBankLog, v.name,
          [&v](CaseWriter& w) {
            const int in = w.Values({Size(v.input)}, TflType::kUint32, v.input);
            w.CustomOp(OpType::kSignalFilterBankLog, {in},
                       {w.Output({Size(v.golden)}, TflType::kInt16)}, *v.options);
          },
          RawBytes(v.golden));
    }
    Add(l, OpType::kSignalPcan, "TFLite Micro Mix1Ref1Case", AddPcan, RawBytes(kPcanGolden));
    for (const SpectralSubtractionVector& v : kSpectralSubtraction) {
      Add(
          l, OpType::kSignalSpectralSubtraction, v.name,
          [&v](CaseWriter& w) { AddSpectralSubtraction(w, v); },
          std::vector<Bytes>{RawBytes(v.output), RawBytes(v.noise)});
    }
    return l.cases;
  }();
  return cases;
}

std::vector<uint8_t> SpectralSubtractionOptions(int32_t channels,
                                                const std::map<std::string, int64_t>& changed,
                                                const std::string& removed) {
  std::map<std::string, int64_t> keys = {{"num_channels", channels},
                                         {"smoothing", 655},
                                         {"one_minus_smoothing", 15729},
                                         {"alternate_smoothing", 655},
                                         {"alternate_one_minus_smoothing", 15729},
                                         {"min_signal_remaining", 819},
                                         {"smoothing_bits", 0},
                                         {"spectral_subtraction_bits", 14},
                                         {"clamping", 0}};
  for (const auto& [key, value] : changed) keys[key] = value;
  keys.erase(removed);
  return IntMapFlexbuffer({keys.begin(), keys.end()});
}

std::vector<Bytes> SignalFilterBankGolden(const std::string& name) {
  SignalFilterBankCases();  // fills the goldens
  const auto it = Goldens().find(name);
  return it == Goldens().end() ? std::vector<Bytes>{} : it->second;
}

}  // namespace boardlab::testing
