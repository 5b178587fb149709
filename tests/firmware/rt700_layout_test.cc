// The rt700 firmware's memory layout, read from the linked ELF (boardlab-firmware-rt700.elf):
// every allocated section lies in the region the RT700 memory map gives for it, independently of
// the linker script (firmware/rt700.ld), so a wrong script fails here rather than on a board.
//
// The map (shared/reference/neutron-rt700.md sections 1-2; Zephyr nxp_rt7xx_cm33_cpu0.dtsi):
// 7.5 MB SRAM seen at 0x00000000 on the code bus and 0x20000000 on the data bus (Non-secure
// aliases), its first 96 KB the boot ROM's; NXP's eIQ demos put data at 0x20100000 (3 MB), the
// NPU weight-prefetch scratch in non-cacheable SRAM at 0x20400000 (1.25 MB) and a large model in
// XSPI0 flash at 0x28200000 (XSPI0's Non-secure window: 128 MB at 0x28000000).

#include <elf.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kSramBytes = 0x780000;
constexpr uint32_t kCodeAlias = 0x00000000;
constexpr uint32_t kDataAlias = 0x20000000;
constexpr uint32_t kBootRomBytes = 0x18000;
constexpr uint32_t kSdkDataStart = 0x20100000;
constexpr uint32_t kSdkNcacheStart = 0x20400000;
constexpr uint32_t kSdkNcacheBytes = 0x140000;
constexpr uint32_t kSdkModelAddress = 0x28200000;
constexpr uint32_t kXspi0Start = 0x28000000;
constexpr uint32_t kXspi0Bytes = 128u << 20;
// The converter's minimum SRAM scratch for MobileNet v1 1.0 224 with weight prefetch (the
// reference's largest demo): the non-cacheable window must hold it.
constexpr uint32_t kMobilenetScratchBytes = 1082368;

struct Range {
  uint32_t begin;
  uint32_t end;  // one past
  bool Holds(uint32_t address, uint32_t size) const {
    return address >= begin && size <= end - address && address <= end;
  }
};

constexpr Range kCodeRegion{kCodeAlias + kBootRomBytes, kCodeAlias + (kSdkDataStart - kDataAlias)};
constexpr Range kDataRegion{kSdkDataStart, kSdkNcacheStart};
constexpr Range kNcacheRegion{kSdkNcacheStart, kSdkNcacheStart + kSdkNcacheBytes};
constexpr Range kBulkRegion{kSdkNcacheStart + kSdkNcacheBytes, kDataAlias + kSramBytes};
constexpr Range kXspi0Region{kXspi0Start, kXspi0Start + kXspi0Bytes};

struct Section {
  std::string name;
  uint32_t address;
  uint32_t size;
  uint32_t flags;
  uint32_t type;
};

struct Elf {
  uint32_t entry = 0;
  std::vector<Section> sections;
  std::vector<Elf32_Phdr> segments;
};

// Reads a little-endian 32-bit Arm ELF's section and program headers; an empty Elf and a test
// failure when the file is not one.
Elf ReadElf(const std::string& path) {
  Elf elf;
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  Elf32_Ehdr header{};
  if (bytes.size() < sizeof(header)) {
    ADD_FAILURE() << path << " is missing or too short";
    return elf;
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS32 ||
      header.e_machine != EM_ARM) {
    ADD_FAILURE() << path << " is not a 32-bit Arm ELF";
    return elf;
  }
  const auto at = [&](size_t offset, size_t size) {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  };
  std::vector<Elf32_Shdr> shdrs(header.e_shnum);
  if (!at(header.e_shoff, size_t{header.e_shnum} * sizeof(Elf32_Shdr)) ||
      header.e_shstrndx >= header.e_shnum) {
    ADD_FAILURE() << path << ": section headers out of the file";
    return elf;
  }
  std::memcpy(shdrs.data(), bytes.data() + header.e_shoff, shdrs.size() * sizeof(Elf32_Shdr));
  const Elf32_Shdr& names = shdrs[header.e_shstrndx];
  for (const Elf32_Shdr& s : shdrs) {
    if (!at(names.sh_offset, names.sh_size) || s.sh_name >= names.sh_size) continue;
    const char* name = bytes.data() + names.sh_offset + s.sh_name;
    elf.sections.push_back({std::string(name, strnlen(name, names.sh_size - s.sh_name)), s.sh_addr,
                            s.sh_size, s.sh_flags, s.sh_type});
  }
  elf.segments.resize(header.e_phnum);
  if (!at(header.e_phoff, size_t{header.e_phnum} * sizeof(Elf32_Phdr))) {
    ADD_FAILURE() << path << ": program headers out of the file";
    return elf;
  }
  std::memcpy(elf.segments.data(), bytes.data() + header.e_phoff,
              elf.segments.size() * sizeof(Elf32_Phdr));
  elf.entry = header.e_entry;
  return elf;
}

// Where the memory map puts each allocated section of the firmware; nullptr for a section the
// map has no place for.
const Range* ExpectedRegion(const std::string& name) {
  static const std::vector<std::pair<std::string, const Range*>> kMap = {
      {".vectors", &kCodeRegion},    {".text", &kCodeRegion},
      {".rodata", &kCodeRegion},     {".ARM.extab", &kCodeRegion},
      {".ARM.exidx", &kCodeRegion},  {".preinit_array", &kCodeRegion},
      {".init_array", &kCodeRegion}, {".fini_array", &kCodeRegion},
      {".data", &kDataRegion},       {".bss", &kDataRegion},
      {".ncache", &kNcacheRegion},   {".bulk", &kBulkRegion},
      {".noinit", &kBulkRegion},     {".xspi_model", &kXspi0Region},
  };
  for (const auto& [section, range] : kMap) {
    if (section == name) return range;
  }
  return nullptr;
}

// The offset into SRAM of an address in either alias.
uint32_t SramOffset(uint32_t address) {
  return address >= kDataAlias ? address - kDataAlias : address - kCodeAlias;
}

class Rt700LayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    elf_ = ReadElf(BOARDLAB_FIRMWARE_RT700_ELF);
    ASSERT_FALSE(elf_.sections.empty());
  }
  const Section* Find(const std::string& name) const {
    for (const Section& s : elf_.sections) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
  Elf elf_;
};

TEST_F(Rt700LayoutTest, EveryAllocatedSectionLandsInItsRegion) {
  int allocated = 0;
  for (const Section& s : elf_.sections) {
    if ((s.flags & SHF_ALLOC) == 0 || s.size == 0) continue;
    ++allocated;
    const Range* region = ExpectedRegion(s.name);
    ASSERT_NE(region, nullptr) << "allocated section " << s.name << " has no place in the map";
    EXPECT_TRUE(region->Holds(s.address, s.size))
        << s.name << " at 0x" << std::hex << s.address << " + 0x" << s.size << " is outside [0x"
        << region->begin << ", 0x" << region->end << ")";
  }
  EXPECT_GE(allocated, 10);
}

TEST_F(Rt700LayoutTest, ModelSlotIsWhereNxpDemosPutTheModel) {
  const Section* model = Find(".xspi_model");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->address, kSdkModelAddress);
  // A reservation: the flash tool writes the model, the firmware image carries none of it.
  EXPECT_EQ(model->type, static_cast<uint32_t>(SHT_NOBITS));
}

TEST_F(Rt700LayoutTest, NonCacheableScratchHoldsTheLargestDemoPrefetchWindow) {
  const Section* scratch = Find(".ncache");
  ASSERT_NE(scratch, nullptr);
  EXPECT_EQ(scratch->address, kSdkNcacheStart);
  EXPECT_GE(scratch->size, kMobilenetScratchBytes);
}

TEST_F(Rt700LayoutTest, VectorTableOpensTheCodeAndEntryIsInText) {
  const Section* vectors = Find(".vectors");
  const Section* text = Find(".text");
  ASSERT_NE(vectors, nullptr);
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(vectors->address, kCodeRegion.begin);
  EXPECT_EQ(vectors->address % 1024, 0u) << "VTOR needs the table aligned to its size";
  EXPECT_GE(vectors->size, 16u * 4u + 43u * 4u) << "the WWDT0 warning vector (IRQ 42) is missing";
  const uint32_t entry = elf_.entry & ~1u;  // Thumb bit
  EXPECT_TRUE(entry >= text->address && entry < text->address + text->size)
      << "entry 0x" << std::hex << entry;
}

TEST_F(Rt700LayoutTest, SramSectionsDoNotOverlapAcrossTheTwoAliases) {
  std::vector<Section> sram;
  for (const Section& s : elf_.sections) {
    const bool in_sram =
        s.address < kSramBytes || (s.address >= kDataAlias && s.address < kDataAlias + kSramBytes);
    if ((s.flags & SHF_ALLOC) != 0 && s.size > 0 && in_sram) sram.push_back(s);
  }
  for (size_t i = 0; i < sram.size(); ++i) {
    for (size_t j = i + 1; j < sram.size(); ++j) {
      const uint32_t a = SramOffset(sram[i].address);
      const uint32_t b = SramOffset(sram[j].address);
      EXPECT_TRUE(a + sram[i].size <= b || b + sram[j].size <= a)
          << sram[i].name << " and " << sram[j].name << " share SRAM";
    }
  }
}

TEST_F(Rt700LayoutTest, LoadedBytesComeFromTheCodeRegion) {
  // Everything a debugger or flash tool writes (PT_LOAD with file bytes) is loaded from the code
  // region: .data's initial values travel there and are copied by the start-up code.
  int loads = 0;
  for (const Elf32_Phdr& p : elf_.segments) {
    if (p.p_type != PT_LOAD || p.p_filesz == 0) continue;
    ++loads;
    EXPECT_TRUE(kCodeRegion.Holds(p.p_paddr, p.p_filesz))
        << "segment loaded at 0x" << std::hex << p.p_paddr << " + 0x" << p.p_filesz;
  }
  EXPECT_GE(loads, 1);
}

}  // namespace
