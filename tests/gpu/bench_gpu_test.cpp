// `ssmtune bench` on the GPU: it times the family the options name (the
// backward with its own config keys, the forward's default; the backward
// also from saved states), checked against fp64 first, and says which
// output is closest to its budget.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/run_command.h"

namespace ssmtune {
namespace {

nlohmann::json bench_rows(const std::string& args) {
  const std::string cmd =
      std::string(SSMTUNE_BINARY) + " bench " + args + " --target-ms 5 --seed 7 --format json";
  auto r = testing::run_command(cmd, false);
  INFO(cmd << "\n" << r.out);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);  // stdout only: the table
}

void check_timed(const nlohmann::json& row) {
  INFO(row.dump());
  CHECK(row["status"] == "ok");
  CHECK(row["median_ms"].get<double>() > 0);
  CHECK(row["floor_ms"].get<double>() > 0);
  CHECK(row["x_floor"].get<double>() >= 1.0);
  CHECK(row["verdict"] != "outside");
  CHECK(row["verdict"] != "defect");
  CHECK(row["registers"].get<int>() > 0);
}

TEST_CASE("ssmtune bench times backward configs by their keys and the forward default",
          "[gpu][tuner]") {
  const std::string shape =
      "--batch 2 --dim 96 --seqlen 333 --dstate 8 --dtype bf16 --with-d --with-z --softplus";
  auto bwd = bench_rows("--family bwd " + shape +
                        " --config seq.K16.D32.fp32.t128.s4.fast mp.K8.D32.fp32.t128.s4.fast.S4");
  REQUIRE(bwd.size() == 2);
  CHECK(bwd[0]["config"] == "seq.K16.D32.fp32.t128.s4.fast");
  CHECK(bwd[1]["config"] == "mp.K8.D32.fp32.t128.s4.fast.S4");
  const std::set<std::string> grads = {"du", "ddelta", "dA", "dB", "dC", "dD", "dz"};
  for (const auto& row : bwd) {
    check_timed(row);
    CHECK(grads.count(row["worst_output"].get<std::string>()) == 1);
  }
  // No config: the family's built-in default, one row.
  auto def = bench_rows("--family bwd " + shape);
  REQUIRE(def.size() == 1);
  check_timed(def[0]);
  auto fwd = bench_rows(shape);
  REQUIRE(fwd.size() == 1);
  check_timed(fwd[0]);
  CHECK(fwd[0]["worst_output"] == "out");
  // As training runs it: from the states its forward saved (here, those its
  // first launch computed), still inside fp64's budgets; the fp64 config
  // takes none and recomputes.
  auto saved = bench_rows("--family bwd --saved-states " + shape +
                          " --config seq.K16.D32.fp32.t128.s4.fast mp.K8.D32.fp32.t128.s4.fast.S4"
                          " seq.K16.D32.fp64.t128.s4.accurate");
  REQUIRE(saved.size() == 3);
  for (const auto& row : saved) check_timed(row);
}

}  // namespace
}  // namespace ssmtune
