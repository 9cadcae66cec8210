// `ssmtune tune --gpus 0` on one GPU over a layered database: a shape list
// spread over the (one) GPU's queue, a line per finished shape naming the
// GPU, a shape the read-only shared layer already holds is not tuned again,
// new results go to the local database only (the shared file is unchanged),
// and `ssmtune explain` names the layer each choice came from.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "cache/tuning_db.h"
#include "support/run_command.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {
namespace {

namespace fs = std::filesystem;

std::string key_of(int64_t batch, int64_t seqlen) {
  FwdProblem p;
  p.batch = batch;
  p.dim = 64;
  p.seqlen = seqlen;
  p.dstate = 4;
  return p.key();
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_CASE("tune --gpus 0 tunes a shape list into the local layer of a database list",
          "[gpu][tuner]") {
  const fs::path dir = fs::temp_directory_path() / "ssmtune_tune_gpus_gpu_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string bin = SSMTUNE_BINARY;
  const std::string local = (dir / "local.db").string(), shared = (dir / "shared.db").string();
  const std::string a = key_of(2, 256), b = key_of(2, 512), c = key_of(1, 256);

  // The shared database already holds shape a (tuned by "another machine").
  const std::string first =
      bin + " tune --problem " + a + " --db " + shared + " --time-limit 5 --format json";
  auto pre = testing::run_command(first, false);
  INFO(first << "\n" << pre.out);
  REQUIRE(pre.exit_code == 0);
  const std::string shared_best = nlohmann::json::parse(pre.out)[0]["best"].get<std::string>();
  const std::string shared_bytes = slurp(shared);

  const fs::path shapes = dir / "shapes.txt";
  std::ofstream(shapes) << a << "\n" << b << "\n" << c << "\n";
  const fs::path err = dir / "stderr.txt";
  const std::string cmd = bin + " tune --shapes " + shapes.string() + " --gpus 0 --db " + local +
                          ":" + shared + " --time-limit 5 --format json 2> " + err.string();
  auto r = testing::run_command(cmd, false);
  const std::string log = slurp(err);
  INFO(cmd << "\n" << r.out << "\n" << log);
  REQUIRE(r.exit_code == 0);
  auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 3);
  const std::vector<std::string> keys{a, b, c};
  for (size_t i = 0; i < 3; ++i) {
    CHECK(rows[i]["problem"] == keys[i]);
    CHECK(rows[i]["gpu"] == 0);
    CHECK(log.find("[gpu 0] " + keys[i] + " done in") != std::string::npos);
  }
  // a: already tuned in the shared layer, nothing measured.
  CHECK(rows[0]["configs"].is_null());
  CHECK(rows[0]["best"] == shared_best);
  CHECK(log.find("already tuned") != std::string::npos);
  // b and c: tuned, into the local database.
  CHECK(rows[1]["timed"].get<int>() > 0);
  CHECK(rows[2]["timed"].get<int>() > 0);
  CHECK(slurp(shared) == shared_bytes);
  {
    auto db = cache::TuningDb::open(local, cache::OpenMode::kReadOnly);
    REQUIRE(db.is_ok());
    auto best = db->list_best(Versions{});
    REQUIRE(best.is_ok());
    std::set<std::string> tuned;
    for (const auto& e : *best) tuned.insert(e.problem_key);
    CHECK(tuned == std::set<std::string>{b, c});
  }

  // explain names the layer.
  auto ea = testing::run_command(bin + " explain --problem " + a + " --db " + local + ":" + shared,
                                 false);
  INFO(ea.out);
  REQUIRE(ea.exit_code == 0);
  CHECK(ea.out.find("rule: exact\n") != std::string::npos);
  CHECK(ea.out.find("database: " + shared + " (shared)") != std::string::npos);
  auto eb = testing::run_command(bin + " explain --problem " + b + " --db " + local + ":" + shared,
                                 false);
  INFO(eb.out);
  REQUIRE(eb.exit_code == 0);
  CHECK(eb.out.find("rule: exact\n") != std::string::npos);
  CHECK(eb.out.find("database: " + local + " (local)") != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ssmtune
