// `ssmtune report` and `ssmtune db diff A B` as a user runs them, against
// databases seeded through the C++ API.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "report/report_fixtures.h"
#include "support/run_command.h"

namespace ssmtune {
namespace {

using testing::run_command;
const std::string kBin = SSMTUNE_BINARY;
const std::string kVersions =
    " --driver 13.0 --nvrtc 13.0 --template-hash 0123456789abcdef0123456789abcdef";

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + what.size())) ++n;
  return n;
}

void seed(const std::string& path, uint64_t seed_value) {
  auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
  REQUIRE(db);
  INFO("seed " << seed_value);
  testing::seed_report_db(*db, seed_value);
}

}  // namespace

TEST_CASE("ssmtune report writes the page; options select; errors name the value", "[cli]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db"), out = dir.file("r.html");
  seed(db, 11);
  CHECK(run_command(kBin + " report --help").out.find("--compare") != std::string::npos);
  auto r = run_command(kBin + " report --db " + db + " -o " + out + kVersions);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("wrote " + out + ": 32 plots, 2 GPUs, 3 problems") != std::string::npos);
  CHECK(count(testing::read_file(out), "data-plot=\"scatter\"") == 5);

  auto one = run_command(kBin + " report --db " + db + " -o " + out +
                         " --gpu 'NVIDIA H200' --family fwd --problem " +
                         testing::problem_key(1, DType::kBF16) + kVersions);
  INFO(one.out);
  REQUIRE(one.exit_code == 0);
  CHECK(count(testing::read_file(out), "data-plot=\"scatter\"") == 1);

  auto gpu = run_command(kBin + " report --db " + db + " -o " + out + " --gpu nope");
  CHECK(gpu.exit_code == 2);
  CHECK(gpu.out.find("--gpu 'nope' matches no GPU") != std::string::npos);
  CHECK(gpu.out.find("NVIDIA H200") != std::string::npos);
  auto fam = run_command(kBin + " report --db " + db + " -o " + out + " --family bwd");
  CHECK(fam.exit_code == 2);
  CHECK(fam.out.find("no problem of that family (fwd)") != std::string::npos);
  auto prob = run_command(kBin + " report --db " + db + " -o " + out + " --problem b1");
  CHECK(prob.exit_code == 2);
  CHECK(run_command(kBin + " report --db " + dir.file("missing.db")).exit_code != 0);
  auto bad_out = run_command(kBin + " report --db " + db + " -o " + dir.file("no/such/dir.html"));
  CHECK(bad_out.exit_code == 7);  // I/O error
  CHECK(bad_out.out.find("cannot write") != std::string::npos);
  // Never over the database itself.
  auto self = run_command(kBin + " report --db " + db + " -o " + db);
  CHECK(self.exit_code == 2);
  CHECK(self.out.find("refusing to write over") != std::string::npos);
  CHECK(run_command(kBin + " db list --db " + db).exit_code == 0);
}

TEST_CASE("ssmtune report --bench and --compare", "[cli]") {
  testing::TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), out = dir.file("r.html");
  seed(a, 11);
  seed(b, 12);  // other random times: some problems change config
  const std::string bench = dir.file("bench.json");
  testing::write_file(bench, R"({"meta": {"device": "NVIDIA H200", "full": false},
    "shapes": [{"shape": {"batch": 2, "dim": 48, "seqlen": 17, "dstate": 16, "dtype": "fp32"},
                "contenders": {"mamba_ssm": {"status": "ok", "timing": {"median_ms": 3.0}}}}]})");
  auto r = run_command(kBin + " report --db " + a + " -o " + out + " --bench " + bench +
                       " --compare " + b + kVersions);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const std::string html = testing::read_file(out);
  CHECK(html.find("data-table=\"compare\"") != std::string::npos);
  CHECK(count(html, "<tr data-change=") == 5);
  // The bench shape has no D or z: it matches none of the seeded problems.
  CHECK(count(html, "data-series=\"mamba\"") == 0);
  testing::write_file(bench, "{}");
  auto bad = run_command(kBin + " report --db " + a + " -o " + out + " --bench " + bench);
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("not bench/compare.py output") != std::string::npos);
}

TEST_CASE("ssmtune db diff A B compares per GPU name and problem", "[cli]") {
  testing::TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db");
  seed(a, 11);
  seed(b, 11);
  auto same = run_command(kBin + " db diff --format json " + a + " " + b + kVersions, false);
  REQUIRE(same.exit_code == 0);
  auto rows = nlohmann::json::parse(same.out);
  REQUIRE(rows.size() == 5);
  for (const auto& r : rows) {
    CHECK(r["change"] == "same");
    CHECK(r["ratio_b_over_a"] == 1.0);
  }
  // B from a third database with only the first GPU and one problem more.
  const std::string c = dir.file("c.db");
  {
    auto db = cache::TuningDb::open(c, cache::OpenMode::kReadWrite);
    REQUIRE(db);
    REQUIRE(db->upsert_device(testing::sample_device(0)));
    auto m = testing::sample_measurement(testing::sample_device(0).uuid, testing::problem_key(7),
                                         testing::config_key(0), 1.0);
    REQUIRE(db->add_measurement(m));
    BestEntry e{"fwd", m.device_uuid,   m.problem_key, m.config_key, 1.0,        0,
                1e-6,  m.template_hash, 13000,         "13.0",       1700000000, "only one"};
    REQUIRE(db->set_best(e));
  }
  auto t = run_command(kBin + " db diff --db " + a + " " + c + kVersions, false);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("0 changed config, 0 same, 1 added in B, 5 removed in B") != std::string::npos);
  CHECK(run_command(kBin + " db diff " + a + " " + b + " " + c).exit_code == 2);
  CHECK(run_command(kBin + " db diff " + a + " --against " + b).exit_code == 2);
}

}  // namespace ssmtune
