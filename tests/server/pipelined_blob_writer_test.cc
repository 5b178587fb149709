// server/pipelined_blob_writer.h: chunks hashed and written on a second thread, errors and
// all, with nothing left behind by an upload that fails or is abandoned.

#include "server/pipelined_blob_writer.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "server/file_blob_store.h"

namespace boardlab::server {
namespace {

namespace fs = std::filesystem;

class PipelinedBlobWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("pipelined_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    auto store = FileBlobStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    blobs_ = *std::move(store);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<PipelinedBlobWriter> Start(const v1::Digest& digest) {
    auto writer = blobs_->StartWrite(digest);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return std::make_unique<PipelinedBlobWriter>(*std::move(writer));
  }
  // Feeds `bytes` in `piece`-sized chunks; the first error, if any.
  static absl::Status Feed(PipelinedBlobWriter& pipeline, const std::string& bytes, size_t piece) {
    for (size_t offset = 0; offset < bytes.size(); offset += piece) {
      std::string chunk = bytes.substr(offset, piece);
      if (absl::Status ok = pipeline.Append(chunk); !ok.ok()) return ok;
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

TEST_F(PipelinedBlobWriterTest, StoresTheBlobInOrder) {
  const std::string bytes = Pattern(3 << 20);
  const v1::Digest digest = api::DigestOf(bytes);
  auto pipeline = Start(digest);
  ASSERT_TRUE(Feed(*pipeline, bytes, 100'000).ok());
  ASSERT_TRUE(pipeline->Commit().ok());
  auto stored = blobs_->Read(digest);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(*stored == bytes);
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(PipelinedBlobWriterTest, HandsBackASpareBufferOnceOneIsFree) {
  const std::string bytes = Pattern(64 << 10);
  auto pipeline = Start(api::DigestOf(bytes));
  bool reused = false;
  for (size_t offset = 0; offset < bytes.size(); offset += 4096) {
    std::string chunk = bytes.substr(offset, 4096);
    ASSERT_TRUE(pipeline->Append(chunk).ok());
    reused = reused || chunk.capacity() >= 4096;
    EXPECT_TRUE(chunk.empty());
  }
  EXPECT_TRUE(reused) << "no written chunk's buffer came back for the next one";
  EXPECT_TRUE(pipeline->Commit().ok());
}

TEST_F(PipelinedBlobWriterTest, CorruptBytesFailAtCommitAndLeaveNothing) {
  const std::string bytes = Pattern(1 << 20);
  std::string corrupt = bytes;
  corrupt[12345] ^= 1;
  const v1::Digest digest = api::DigestOf(bytes);
  auto pipeline = Start(digest);
  ASSERT_TRUE(Feed(*pipeline, corrupt, 65536).ok());
  absl::Status committed = pipeline->Commit();
  EXPECT_EQ(committed.code(), absl::StatusCode::kInvalidArgument) << committed;
  EXPECT_NE(committed.message().find("corrupt"), std::string::npos) << committed;
  pipeline.reset();
  EXPECT_FALSE(blobs_->Has(digest));
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(PipelinedBlobWriterTest, BytesBeyondTheAnnouncedSizeStopTheUpload) {
  const std::string bytes = Pattern(1 << 20);
  v1::Digest digest = api::DigestOf(bytes);
  digest.set_size_bytes(1000);
  auto pipeline = Start(digest);
  absl::Status fed = Feed(*pipeline, bytes, 4096);
  absl::Status committed = pipeline->Commit();
  // The worker meets the error one chunk or two after it was handed over; Append reports it
  // from then on, and Commit at the latest.
  EXPECT_EQ(committed.code(), absl::StatusCode::kResourceExhausted) << committed;
  EXPECT_TRUE(fed.ok() || fed.code() == absl::StatusCode::kResourceExhausted) << fed;
  pipeline.reset();
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(PipelinedBlobWriterTest, AnAbandonedUploadLeavesNoTrace) {
  const std::string bytes = Pattern(2 << 20);
  const v1::Digest digest = api::DigestOf(bytes);
  auto pipeline = Start(digest);
  ASSERT_TRUE(Feed(*pipeline, bytes.substr(0, 1 << 20), 65536).ok());
  pipeline.reset();  // a cancelled stream: no Commit()
  EXPECT_FALSE(blobs_->Has(digest));
  EXPECT_EQ(TempFiles(), 0);
}

}  // namespace
}  // namespace boardlab::server
