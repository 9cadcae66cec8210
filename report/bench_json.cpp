// compare.py's JSON to BenchEntry values.
#include "report/bench_json.h"

#include <fstream>

#include "tuner/fwd/problem.h"

namespace ssmtune::report {
namespace {

double median_of(const nlohmann::json& contenders, const char* name) {
  if (!contenders.contains(name)) return 0;
  const auto& c = contenders[name];
  if (c.value("status", "") != "ok" || !c.contains("timing") || !c["timing"].is_object()) return 0;
  const auto& t = c["timing"];
  return t.contains("median_ms") && t["median_ms"].is_number() ? t["median_ms"].get<double>() : 0;
}

}  // namespace

Result<std::vector<BenchEntry>> parse_bench_json(const nlohmann::json& j,
                                                 const std::string& source) {
  auto bad = [&source](const std::string& why) {
    return Status::invalid_argument(source + ": not bench/compare.py output: " + why);
  };
  if (!j.is_object() || !j.contains("meta") || !j.contains("shapes") || !j["shapes"].is_array())
    return bad("expected {\"meta\": ..., \"shapes\": [...]}");
  const std::string device = j["meta"].value("device", "");
  const bool full = j["meta"].value("full", false);
  std::vector<BenchEntry> out;
  for (const auto& rec : j["shapes"]) {
    if (!rec.contains("shape") || !rec["shape"].is_object()) return bad("a shape without 'shape'");
    const auto& s = rec["shape"];
    FwdProblem p;
    try {
      p.batch = s.at("batch").get<int64_t>();
      p.dim = s.at("dim").get<int64_t>();
      p.seqlen = s.at("seqlen").get<int64_t>();
      p.dstate = s.at("dstate").get<int64_t>();
      p.groups = s.value("groups", int64_t{1});
      auto dt = parse_dtype(s.at("dtype").get<std::string>());
      if (!dt) return bad(dt.status().message());
      p.dtype = *dt;
    } catch (const nlohmann::json::exception& e) {
      return bad(e.what());
    }
    p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = full;
    BenchEntry e;
    e.device_name = device;
    e.problem_key = p.key();
    e.source = source;
    if (rec.contains("contenders") && rec["contenders"].is_object()) {
      e.mamba_ms = median_of(rec["contenders"], "mamba_ssm");
      e.ssmtune_ms = median_of(rec["contenders"], "ssmtune");
    }
    out.push_back(e);
  }
  return out;
}

Result<std::vector<BenchEntry>> read_bench_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::io_error("cannot read bench JSON '" + path + "'");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return Status::invalid_argument(path + ": not valid JSON");
  return parse_bench_json(j, path);
}

}  // namespace ssmtune::report
