// The ssmtune command as a user runs it: help, errors, outputs.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cache/db_fixtures.h"
#include "jit/driver.h"
#include "support/run_command.h"

namespace ssmtune {
namespace {

using testing::run_command;
const std::string kBin = SSMTUNE_BINARY;

TEST_CASE("ssmtune --help lists the subcommands", "[cli]") {
  auto r = run_command(kBin + " --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("devices") != std::string::npos);
  CHECK(r.out.find("compile") != std::string::npos);
  for (const char* sub : {"devices", "compile"}) {
    auto h = run_command(kBin + " " + sub + " --help");
    INFO(sub << ": " << h.out);
    CHECK(h.exit_code == 0);
    CHECK(h.out.find("--format") != std::string::npos);
  }
}

TEST_CASE("ssmtune with no or unknown subcommand fails with a message", "[cli]") {
  auto r = run_command(kBin);
  CHECK(r.exit_code != 0);
  auto u = run_command(kBin + " frobnicate");
  CHECK(u.exit_code != 0);
  CHECK(u.out.find("frobnicate") != std::string::npos);
}

TEST_CASE("ssmtune devices lists GPUs or says there is no driver", "[cli]") {
  auto r = run_command(kBin + " devices --format json");
  if (jit::Driver::get().is_ok()) {
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j.is_array());
    REQUIRE_FALSE(j.empty());
    CHECK(j[0]["uuid"].get<std::string>().rfind("GPU-", 0) == 0);
  } else {
    CHECK(r.exit_code == 6);  // no GPU
    CHECK(r.out.find("no CUDA driver found") != std::string::npos);
    // One clear line, not a crash dump.
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  }
}

TEST_CASE("ssmtune compile prints a resource report without a GPU", "[cli]") {
  // The forward's every algorithm by default; the backward's default config by family.
  auto r = run_command(kBin + " compile --arch sm_80 --family bwd --dstate 4 --format json", false);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() >= 2);  // the backward kernels and their finalize
  for (const auto& row : j) {
    CHECK(row["registers"].get<int>() > 0);
    CHECK(row["spill_stores"].get<int>() == 0);
    CHECK(row["program_compile_s"].get<double>() > 0);
  }
  auto csv = run_command(
      kBin + " compile --per-program 1 --family bwd --dstate 4 --dtype bf16 --format csv", false);
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("program,instantiation,registers", 0) == 0);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') >= 3);
}

TEST_CASE("ssmtune compile --family fwd compiles every algorithm for a problem", "[cli]") {
  auto r = run_command(kBin + " compile --family fwd --dstate 4 --dtype bf16 --format json", false);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  // 8 algorithms x 2 accumulations (multipass and split: 3 kernels) + reference.
  REQUIRE(j.size() == 25);
  for (const auto& row : j) {
    INFO(row.dump());
    CHECK(row["registers"].get<int>() > 0);
    CHECK(row["instantiation"].get<std::string>().find("ssmtune_kernels::ssm_fwd_") == 0);
  }
  auto bad = run_command(kBin + " compile --family fwd --dstate 0");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("dstate") != std::string::npos);
}

TEST_CASE("ssmtune compile --config compiles one config and writes its cubin", "[cli]") {
  testing::TempDir dir;
  const std::string key = "sequential.K64.D32.fp32.t256.i2.s8.fast";
  auto r = run_command(kBin + " compile --family fwd --dtype bf16 --format json --config " + key +
                           " --cubin-dir " + dir.path(),
                       false);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 1);
  const std::string inst = j[0]["instantiation"].get<std::string>();
  CHECK(inst.find("ssm_fwd_sequential<") != std::string::npos);
  CHECK(inst.find("__nv_bfloat16, float, 16, 64, 32, 256, 2, 8,") != std::string::npos);
  CHECK(j[0]["registers"].get<int>() > 0);
  const std::string cubin = testing::read_file(dir.file("fwd_0.cubin"));
  REQUIRE(cubin.size() > 4);
  CHECK(cubin.compare(0, 4,
                      "\x7f"
                      "ELF") == 0);

  auto bad = run_command(kBin + " compile --family fwd --config sequential.K64");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("bad kernel config key") != std::string::npos);
  auto illegal = run_command(kBin + " compile --family fwd --config " +
                             std::string("sequential.K64.D32.fp32.t256.i3.s8.fast"));
  CHECK(illegal.exit_code == 2);
  CHECK(illegal.out.find("chunks in flight") != std::string::npos);
  // The forward is the default family; another family's config key is refused.
  auto fwd_default = run_command(kBin + " compile --format json --config " + key, false);
  CHECK(fwd_default.exit_code == 0);
  auto other = run_command(kBin + " compile --family bwd --config " + key);
  CHECK(other.exit_code == 2);
  CHECK(other.out.find("bad backward config key") != std::string::npos);
  auto nodir = run_command(kBin + " compile --family fwd --config " + key + " --cubin-dir " +
                           dir.file("missing"));
  CHECK(nodir.exit_code == 4);  // not found, before compiling anything
  CHECK(nodir.out.find("No such file or directory") != std::string::npos);
}

TEST_CASE("ssmtune compile rejects bad input", "[cli]") {
  auto a = run_command(kBin + " compile --arch 90");
  CHECK(a.exit_code == 2);
  CHECK(a.out.find("sm_XX") != std::string::npos);
  auto f = run_command(kBin + " compile --family nope");
  CHECK(f.exit_code == 2);
  CHECK(f.out.find("unknown kernel family 'nope'") != std::string::npos);
  auto fmt = run_command(kBin + " compile --format xml");
  CHECK(fmt.exit_code == 2);
  CHECK(fmt.out.find("unknown format 'xml'") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune

namespace ssmtune {
namespace {

using testing::run_command;

TEST_CASE("tune, bench and check: help, bad input and no driver", "[cli]") {
  const std::string bin = SSMTUNE_BINARY;
  for (const char* sub : {"tune", "bench", "check"}) {
    auto h = run_command(bin + " " + sub + " --help");
    INFO(sub << ": " << h.out);
    CHECK(h.exit_code == 0);
    CHECK(h.out.find("--dstate") != std::string::npos);
    CHECK(h.out.find("--constant-bc") != std::string::npos);
    auto bad = run_command(bin + " " + sub + " --seqlen 0");
    CHECK(bad.exit_code == 2);
    CHECK(bad.out.find("seqlen must be >= 1") != std::string::npos);
    auto dt = run_command(bin + " " + sub + " --dtype fp8");
    CHECK(dt.exit_code == 2);
    CHECK(dt.out.find("fp8") != std::string::npos);
  }
  auto s = run_command(bin + " tune --strategy annealing");
  CHECK(s.exit_code == 2);
  CHECK(s.out.find("unknown strategy 'annealing'") != std::string::npos);
  auto missing = run_command(bin + " tune --shapes /nonexistent/shapes.txt");
  CHECK(missing.exit_code != 0);
  CHECK(missing.out.find("cannot read shapes file") != std::string::npos);
  auto cfg = run_command(bin + " bench --config not.a.key");
  CHECK(cfg.exit_code == 2);
  CHECK(cfg.out.find("bad kernel config key") != std::string::npos);
  // bench times any family: its keys are the family's, --algo is the forward's.
  auto bwd_cfg =
      run_command(bin + " bench --family bwd --config pipelined.K32.D32.fp32.t128.i3.s4.fast");
  CHECK(bwd_cfg.exit_code == 2);
  CHECK(bwd_cfg.out.find("bad backward config key") != std::string::npos);
  auto bwd_algo = run_command(bin + " bench --family bwd --algo pipelined");
  CHECK(bwd_algo.exit_code == 2);
  CHECK(bwd_algo.out.find("the bwd family takes --config keys") != std::string::npos);
  auto fwd_states = run_command(bin + " bench --saved-states");
  CHECK(fwd_states.exit_code == 2);
  CHECK(fwd_states.out.find("the fwd family has no saved states") != std::string::npos);
  if (!jit::Driver::get().is_ok()) {
    // A directory of this test's own: runs in parallel never share the file.
    testing::TempDir dir;
    const std::string db = dir.file("nodriver.db");
    auto t = run_command(bin + " tune --batch 1 --dim 8 --seqlen 16 --dstate 4 --db " + db);
    CHECK(t.exit_code == 6);
    CHECK(t.out.find("no CUDA driver found") != std::string::npos);
    CHECK(std::count(t.out.begin(), t.out.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(db));  // nothing created
    // A backward problem key parses (the keys are checked before the GPU is looked for).
    auto bk = run_command(bin + " bench --problem bwd:b2.d64.l100.n4.g1.fp32.vB.vC --config " +
                          "seq.K16.D32.fp32.t128.s4.fast");
    CHECK(bk.exit_code == 6);
    CHECK(bk.out.find("no CUDA driver found") != std::string::npos);
    auto bs = run_command(bin + " bench --family bwd --saved-states --batch 1 --dim 8");
    CHECK(bs.exit_code == 6);  // the flag is the backward's: accepted, then no driver
    auto c = run_command(bin + " check");
    CHECK(c.exit_code == 6);
    CHECK(c.out.find("no CUDA driver found") != std::string::npos);
  }
}

TEST_CASE("tune --shapes rejects a malformed line with its number", "[cli]") {
  testing::TempDir dir;
  const std::string path = dir.file("shapes.txt");
  testing::write_file(path, "# a model's shapes\nb8.d1536.l2048.n16.g1.fp32.vB.vC\nb8.dX.l1.n1\n");
  auto r = run_command(std::string(SSMTUNE_BINARY) + " tune --shapes " + path);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find(path + ":3") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune
