// server/background_sha256.h and the large-blob path of CheckedBlobWriter::Take(): chunks
// written on the caller's thread and hashed on a second one, errors and all, with nothing left
// behind by an upload that fails or is abandoned.

#include "server/background_sha256.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "server/file_blob_store.h"

namespace boardlab::server {
namespace {

namespace fs = std::filesystem;

class LargeBlobWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("large_blob_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    auto store = FileBlobStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    blobs_ = *std::move(store);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<BlobWriter> Start(const v1::Digest& digest) {
    auto writer = blobs_->StartWrite(digest);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return writer.ok() ? *std::move(writer) : nullptr;
  }
  // Feeds `bytes` in `piece`-sized chunks with Take(); the first error, if any.
  static absl::Status Feed(BlobWriter& writer, const std::string& bytes, size_t piece) {
    for (size_t offset = 0; offset < bytes.size(); offset += piece) {
      std::string chunk = bytes.substr(offset, piece);
      if (absl::Status ok = writer.Take(chunk); !ok.ok()) return ok;
    }
    return absl::OkStatus();
  }
  int TempFiles() const {
    int n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_ / "tmp")) ++n;
    return n;
  }

  static std::string Pattern(size_t size) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131) ^ (i >> 9));
    return bytes;
  }

  fs::path dir_;
  std::unique_ptr<FileBlobStore> blobs_;
};

TEST_F(LargeBlobWriterTest, StoresTheBlobInOrder) {
  const std::string bytes = Pattern(3 << 20);
  const v1::Digest digest = api::DigestOf(bytes);
  auto writer = Start(digest);
  ASSERT_TRUE(Feed(*writer, bytes, 100'000).ok());
  ASSERT_TRUE(writer->Commit().ok());
  auto stored = blobs_->Read(digest);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(*stored == bytes);
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(LargeBlobWriterTest, TakenAndAppendedBytesMix) {
  const std::string bytes = Pattern(5 << 20);
  const v1::Digest digest = api::DigestOf(bytes);
  auto writer = Start(digest);
  for (size_t offset = 0, i = 0; offset < bytes.size(); offset += 300'000, ++i) {
    std::string chunk = bytes.substr(offset, 300'000);
    ASSERT_TRUE((i % 2 == 0 ? writer->Take(chunk) : writer->Append(chunk)).ok());
  }
  ASSERT_TRUE(writer->Commit().ok());
  auto stored = blobs_->Read(digest);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(*stored == bytes);
}

TEST(BackgroundSha256Test, HashesLikeOneThreadAndHandsBackSpareBuffers) {
  std::string bytes(3 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + (i >> 11));
  BackgroundSha256 hash;
  bool reused = false;
  for (size_t offset = 0; offset < bytes.size(); offset += 4096) {
    std::string chunk = bytes.substr(offset, 4096);
    hash.Update(chunk);
    EXPECT_TRUE(chunk.empty());
    reused = reused || chunk.capacity() >= 4096;
  }
  EXPECT_EQ(hash.FinishHex(), api::Sha256Hex(bytes));
  EXPECT_TRUE(reused) << "no hashed chunk's buffer came back for the next one";
}

TEST(BackgroundSha256Test, OfNothingIsTheEmptyHash) {
  BackgroundSha256 hash;
  EXPECT_EQ(hash.FinishHex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(BackgroundSha256Test, DestroyedMidwayStopsCleanly) {
  BackgroundSha256 hash;
  for (int i = 0; i < 8; ++i) {
    std::string chunk(1 << 20, static_cast<char>(i));
    hash.Update(chunk);
  }
}  // no FinishHex(): the destructor drops what is queued and joins

TEST_F(LargeBlobWriterTest, CorruptBytesFailAtCommitAndLeaveNothing) {
  const std::string bytes = Pattern(2 << 20);  // above 1 MiB: hashed in the background
  std::string corrupt = bytes;
  corrupt[1234567] ^= 1;
  const v1::Digest digest = api::DigestOf(bytes);
  auto writer = Start(digest);
  ASSERT_TRUE(Feed(*writer, corrupt, 65536).ok());
  absl::Status committed = writer->Commit();
  EXPECT_EQ(committed.code(), absl::StatusCode::kInvalidArgument) << committed;
  EXPECT_NE(committed.message().find("corrupt"), std::string::npos) << committed;
  writer.reset();
  EXPECT_FALSE(blobs_->Has(digest));
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(LargeBlobWriterTest, BytesBeyondTheAnnouncedSizeStopTheUpload) {
  const std::string bytes = Pattern(2 << 20);
  v1::Digest digest = api::DigestOf(bytes);
  digest.set_size_bytes((1 << 20) + 1000);
  auto writer = Start(digest);
  absl::Status fed = Feed(*writer, bytes, 4096);
  absl::Status committed = writer->Commit();
  EXPECT_EQ(fed.code(), absl::StatusCode::kResourceExhausted) << fed;
  EXPECT_NE(committed.code(), absl::StatusCode::kOk);
  writer.reset();
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(LargeBlobWriterTest, AnAbandonedUploadLeavesNoTrace) {
  const std::string bytes = Pattern(2 << 20);
  const v1::Digest digest = api::DigestOf(bytes);
  auto writer = Start(digest);
  ASSERT_TRUE(Feed(*writer, bytes.substr(0, 1 << 20), 65536).ok());
  writer.reset();  // a cancelled stream: no Commit()
  EXPECT_FALSE(blobs_->Has(digest));
  EXPECT_EQ(TempFiles(), 0);
}

}  // namespace
}  // namespace boardlab::server
