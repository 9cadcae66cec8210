// `ssmtune tune --shard I/N` and `--gpus` as a user runs them without a GPU:
// malformed values are usage errors (exit 2) before anything else, a shard
// says which shapes it keeps before the driver is needed, and --gpu with
// --gpus is refused.
#include <catch2/catch.hpp>
#include <fstream>

#include "cache/db_fixtures.h"
#include "support/run_command.h"

namespace ssmtune {
namespace {

using testing::run_command;
const std::string kBin = SSMTUNE_BINARY;

std::string write_shapes(const testing::TempDir& dir) {
  std::string path = dir.file("shapes.txt");
  std::ofstream(path) << "# five shapes, one twice\n"
                      << "fwd:b1.d8.l16.n4.g1.fp32.vB.vC\n"
                      << "fwd:b1.d8.l32.n4.g1.fp32.vB.vC\n"
                      << "fwd:b1.d8.l64.n4.g1.fp32.vB.vC\n"
                      << "fwd:b1.d8.l16.n4.g1.fp32.vB.vC\n"
                      << "fwd:b2.d8.l16.n4.g1.fp32.vB.vC\n"
                      << "bwd:b1.d8.l16.n4.g1.fp32.vB.vC\n";
  return path;
}

TEST_CASE("tune --shard refuses malformed shards with a usage error", "[cli][shard]") {
  testing::TempDir dir;
  const std::string shapes = write_shapes(dir);
  for (const char* bad : {"8/8", "1/0", "x/8", "3", "-1/8", "0x1/8"}) {
    INFO(bad);
    auto r = run_command(kBin + " tune --shapes " + shapes + " --shard " + bad + " --db " +
                         dir.file("t.db"));
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("--shard") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("t.db")));
  auto help = run_command(kBin + " tune --help");
  CHECK(help.out.find("--shard") != std::string::npos);
  CHECK(help.out.find("0-based") != std::string::npos);
  CHECK(help.out.find("--gpus") != std::string::npos);
}

TEST_CASE("tune --shard keeps every N-th distinct shape before it needs a GPU", "[cli][shard]") {
  testing::TempDir dir;
  const std::string shapes = write_shapes(dir);
  // Five distinct keys over three shards: 2, 2 and 1.
  int kept = 0;
  for (const char* shard : {"0/3", "1/3", "2/3"}) {
    auto r = run_command(kBin + " tune --shapes " + shapes + " --shard " + shard + " --db " +
                         dir.file("t.db"));
    INFO(r.out);
    CHECK((r.exit_code == 6 || r.exit_code == 0));  // no driver here; a GPU machine tunes
    const std::string head = std::string("shard ") + shard + ": ";
    const size_t at = r.out.find(head);
    REQUIRE(at != std::string::npos);
    kept += std::stoi(r.out.substr(at + head.size()));
    CHECK(r.out.find(" of 5 shapes", at) != std::string::npos);
  }
  CHECK(kept == 5);
  auto empty =
      run_command(kBin + " tune --shapes " + shapes + " --shard 7/8 --db " + dir.file("t.db"));
  CHECK(empty.out.find("shard 7/8: 0 of 5 shapes: nothing to tune") != std::string::npos);
}

TEST_CASE("tune --gpus cannot be combined with --gpu, and a bad list is refused", "[cli][gpus]") {
  testing::TempDir dir;
  auto both = run_command(kBin + " tune --gpus all --gpu 0 --db " + dir.file("t.db"));
  CHECK(both.exit_code == 2);
  CHECK(both.out.find("excludes") != std::string::npos);
  // Without a driver the list cannot be checked against the devices: no GPU.
  auto r = run_command(kBin + " tune --gpus 0,0 --db " + dir.file("t.db"));
  CHECK((r.exit_code == 6 || r.exit_code == 2));
}

TEST_CASE("tune refuses a malformed database list before anything else", "[cli][layers]") {
  testing::TempDir dir;
  auto r = run_command(kBin + " tune --db " + dir.file("a.db") + "::" + dir.file("b.db"));
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("empty path") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune
