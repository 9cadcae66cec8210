// Exact, nearest, default.
#include "runtime/selector.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "cache/keys.h"
#include "tuner/fwd_plan.h"
#include "tuner/heuristics.h"

namespace ssmtune {

const char* to_string(SelectRule r) {
  switch (r) {
    case SelectRule::kExact:
      return "exact";
    case SelectRule::kNearest:
      return "nearest";
    case SelectRule::kDefault:
      return "default";
  }
  return "?";
}

double problem_distance(const Problem& a, const Problem& b) {
  auto d = [](int64_t x, int64_t y) {
    const double l = std::log2(static_cast<double>(x)) - std::log2(static_cast<double>(y));
    return l * l;
  };
  return std::sqrt(d(a.batch, b.batch) + d(a.dim, b.dim) + d(a.seqlen, b.seqlen) +
                   d(a.dstate, b.dstate));
}

Result<ConfigChoice> choose_config(cache::TuningDb* db, const jit::DeviceInfo& device,
                                   const Versions& versions, const Problem& p) {
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  const size_t smem = device.max_shared_per_block;
  std::string note;
  if (db != nullptr) {
    SSMTUNE_ASSIGN_OR_RETURN(auto exact, db->best(device.uuid, p.key(), versions));
    if (exact && !exact->stale) {
      auto c = KernelConfig::from_key(exact->config_key);
      if (c && check_config(p, *c, smem)) {
        ConfigChoice ch;
        ch.config = *c;
        ch.rule = SelectRule::kExact;
        ch.source_problem = exact->problem_key;
        ch.source_ms = exact->median_ms;
        ch.reason = "exact: tuned for this problem on this GPU (" + exact->config_key + ", " +
                    std::to_string(exact->median_ms) + " ms; " + exact->rule + ")";
        return ch;
      }
    }
    const std::string key = cache::qualified_key(p.key());
    SSMTUNE_ASSIGN_OR_RETURN(auto all, db->list_best(versions, device.uuid, family_of_key(key)));
    const std::string family = p.family_key();
    double best_d = std::numeric_limits<double>::infinity();
    std::optional<ConfigChoice> nearest;
    int skipped_stale = 0, skipped_illegal = 0;
    for (const auto& b : all) {
      if (b.stale) {
        ++skipped_stale;
        continue;
      }
      auto q = Problem::from_key(cache::key_body(b.problem_key));
      if (!q || q->family_key() != family || q->groups != p.groups) continue;
      auto c = KernelConfig::from_key(b.config_key);
      if (!c || !check_config(p, *c, smem)) {
        ++skipped_illegal;
        continue;
      }
      const double dist = problem_distance(p, *q);
      if (dist < best_d) {
        best_d = dist;
        ConfigChoice ch;
        ch.config = *c;
        ch.rule = SelectRule::kNearest;
        ch.source_problem = b.problem_key;
        ch.source_ms = b.median_ms;
        ch.distance = dist;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f", dist);
        ch.reason = "nearest: " + b.config_key + " tuned for " + b.problem_key +
                    " (log2 distance " + buf + "), legal for this shape";
        nearest = ch;
      }
    }
    if (nearest) return *nearest;
    if (skipped_stale || skipped_illegal)
      note = " (ignored: " + std::to_string(skipped_stale) + " stale entries, " +
             std::to_string(skipped_illegal) + " configs not legal for this shape)";
  }
  const DefaultChoice d = heuristic_default(p, device.sm_count, smem);
  ConfigChoice ch;
  ch.config = d.config;
  ch.rule = SelectRule::kDefault;
  ch.reason = "default: nothing usable tuned for this family on this GPU" + note + "; " + d.reason;
  return ch;
}

}  // namespace ssmtune
