// Family-independent helpers of the seam: floors, input distributions, the
// program of a config, and lookups in the registry.
#include "tuner/family.h"

#include <algorithm>

namespace ssmtune {

Floors floors_for(double bytes, double exps, const jit::DeviceInfo& device, double copy_gbs) {
  Floors f;
  f.bytes = bytes;
  f.exps = exps;
  f.bytes_ms = bytes / (copy_gbs * 1e9) * 1e3;
  const double exp_rate = 16.0 * device.sm_count * device.sm_clock_khz * 1e3;
  f.exp_ms = exp_rate > 0 ? exps / exp_rate * 1e3 : 0;
  return f;
}

const char* to_string(InputDistribution d) {
  switch (d) {
    case InputDistribution::kMamba:
      return "mamba";
    case InputDistribution::kSlowDecay:
      return "slow-decay";
    case InputDistribution::kLarge:
      return "large";
  }
  return "?";
}

Result<InputDistribution> parse_distribution(const std::string& s) {
  for (InputDistribution d :
       {InputDistribution::kMamba, InputDistribution::kSlowDecay, InputDistribution::kLarge})
    if (s == to_string(d)) return d;
  return Status::invalid_argument("unknown distribution '" + s +
                                  "' (expected mamba, slow-decay or large)");
}

Result<jit::ProgramSpec> program_for(const KernelFamily& family, const FamilyProblem& problem,
                                     const std::string& config, const jit::DeviceInfo& device) {
  SSMTUNE_ASSIGN_OR_RETURN(auto inst, family.instantiations(problem, config, device));
  return jit::make_programs(inst, 0, device.arch(), std::string("ssm_") + family.name()).at(0);
}

const KernelFamily* find_family(const std::string& name) {
  for (const KernelFamily* f : all_families())
    if (name == f->name()) return f;
  return nullptr;
}

Result<const KernelFamily*> family_of_problem(const std::string& problem_key) {
  const auto colon = problem_key.find(':');
  const std::string name = colon == std::string::npos ? "fwd" : problem_key.substr(0, colon);
  if (const KernelFamily* f = find_family(name)) return f;
  std::string known;
  for (const KernelFamily* f : all_families())
    known += std::string(known.empty() ? "" : ", ") + f->name();
  return Status::invalid_argument("problem key '" + problem_key + "': unknown kernel family '" +
                                  name + "' (known: " + known + ")");
}

Result<ParsedProblem> parse_any_problem(const std::string& problem_key) {
  SSMTUNE_ASSIGN_OR_RETURN(const KernelFamily* f, family_of_problem(problem_key));
  SSMTUNE_ASSIGN_OR_RETURN(auto p, f->parse_problem(problem_key));
  return ParsedProblem{f, std::move(p)};
}

std::vector<std::string> default_first_look(const std::vector<std::string>& candidates,
                                            const std::string& first) {
  std::vector<std::string> out;
  if (std::find(candidates.begin(), candidates.end(), first) != candidates.end())
    out.push_back(first);
  for (const auto& c : candidates)
    if (c != first) out.push_back(c);
  return out;
}

std::string spill_reason(const std::vector<jit::KernelImage>& kernels, int tolerated_bytes) {
  for (const auto& k : kernels) {
    const auto& r = k.resources;
    if (r.spill_store_bytes + r.spill_load_bytes > tolerated_bytes)
      return "spills " + std::to_string(r.spill_store_bytes) + " B stores / " +
             std::to_string(r.spill_load_bytes) + " B loads (" + r.to_string() + ")";
  }
  return {};
}

SpaceEntry space_entry(const std::string& config, bool fp64, const SpaceOptions& options) {
  SpaceEntry e{config, false, ""};
  if (fp64 && !options.include_fp64) {
    e.pruned = true;
    e.reason = "fp64 accumulation left out";
  }
  return e;
}

}  // namespace ssmtune
