// Exact, exact-class, nearest, default, over one database or a stack of them.
#include "runtime/selector.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>

#include "tuner/bwd/family.h"
#include "tuner/fwd/family.h"
#include "tuner/step/family.h"

namespace ssmtune {

const char* to_string(SelectRule r) {
  switch (r) {
    case SelectRule::kExact:
      return "exact";
    case SelectRule::kExactClass:
      return "exact-class";
    case SelectRule::kNearest:
      return "nearest";
    case SelectRule::kDefault:
      return "default";
  }
  return "?";
}

double problem_distance(const FwdProblem& a, const FwdProblem& b) {
  return fwd_problem_distance(a, b);
}

namespace {

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", ms);
  return buf;
}

}  // namespace

Result<FamilyChoice> choose_family_config(const std::vector<cache::DbLayer>& layers,
                                          const KernelFamily& family, const FamilyProblem& p,
                                          const jit::DeviceInfo& device, const Versions& versions) {
  std::string note;
  // With several layers, a reason names the database its entry came from.
  auto from = [&layers](const cache::DbLayer& l) {
    if (layers.size() < 2) return std::string();
    return std::string(" [from the ") + (l.shared ? "shared" : "local") + " database " +
           l.db->path() + "]";
  };
  auto sourced = [](FamilyChoice ch, const cache::DbLayer& l) {
    ch.source_db = l.db->path();
    ch.source_shared = l.shared;
    return ch;
  };
  if (!layers.empty()) {
    const std::string cls = device_class(device_record(device));
    // Exact on this GPU, local first, then each shared layer.
    for (const cache::DbLayer& l : layers) {
      SSMTUNE_ASSIGN_OR_RETURN(auto exact, l.db->best(device.uuid, p.key(), versions));
      if (!exact || exact->stale || !family.check_config(p, exact->config_key, device)) continue;
      FamilyChoice ch;
      ch.config = exact->config_key;
      ch.rule = SelectRule::kExact;
      ch.source_problem = exact->problem_key;
      ch.source_ms = exact->median_ms;
      ch.reason = "exact: tuned for this problem on this GPU (" + exact->config_key + ", " +
                  ms_text(exact->median_ms) + "; " + exact->rule + ")" + from(l);
      return sourced(ch, l);
    }
    // Exact on an identical GPU, layer by layer.
    std::vector<std::vector<std::string>> peers;
    for (const cache::DbLayer& l : layers) {
      SSMTUNE_ASSIGN_OR_RETURN(std::vector<std::string> ids,
                               l.db->class_peers(device_record(device)));
      peers.push_back(std::move(ids));
    }
    for (size_t i = 0; i < layers.size(); ++i) {
      for (const auto& peer : peers[i]) {
        SSMTUNE_ASSIGN_OR_RETURN(auto e, layers[i].db->best(peer, p.key(), versions));
        if (!e || e->stale || !family.check_config(p, e->config_key, device)) continue;
        FamilyChoice ch;
        ch.config = e->config_key;
        ch.rule = SelectRule::kExactClass;
        ch.source_problem = e->problem_key;
        ch.source_ms = e->median_ms;
        ch.source_device = peer;
        ch.reason = "exact-class: tuned for this problem on " + peer +
                    ", a GPU of this one's class (" + cls + "; " + e->config_key + ", " +
                    ms_text(e->median_ms) + "; " + e->rule + ")" + from(layers[i]);
        return sourced(ch, layers[i]);
      }
    }
    // Nearest over every layer (local first), in each over this GPU's
    // entries, then its identical peers' (a tie keeps the earlier).
    const std::string problem_cls = p.class_key();
    double best_d = std::numeric_limits<double>::infinity();
    std::optional<FamilyChoice> nearest;
    int skipped_stale = 0, skipped_illegal = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
      std::vector<std::string> gpus{device.uuid};
      gpus.insert(gpus.end(), peers[i].begin(), peers[i].end());
      for (const auto& gpu : gpus) {
        SSMTUNE_ASSIGN_OR_RETURN(auto all, layers[i].db->list_best(versions, gpu));
        for (const auto& b : all) {
          if (family_of_key(b.problem_key) != family.name()) continue;
          if (b.stale) {
            ++skipped_stale;
            continue;
          }
          auto q = family.parse_problem(b.problem_key);
          if (!q || (*q)->class_key() != problem_cls) continue;
          const double dist = p.distance(**q);
          if (!(dist < best_d)) continue;
          if (!family.check_config(p, b.config_key, device)) {
            ++skipped_illegal;
            continue;
          }
          best_d = dist;
          FamilyChoice ch;
          ch.config = b.config_key;
          ch.rule = SelectRule::kNearest;
          ch.source_problem = b.problem_key;
          ch.source_ms = b.median_ms;
          ch.distance = dist;
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.2f", dist);
          ch.reason = "nearest: " + b.config_key + " tuned for " + b.problem_key +
                      " (log2 distance " + buf + ")";
          if (gpu != device.uuid) {
            ch.source_device = gpu;
            ch.reason += " on " + gpu + ", a GPU of this one's class (" + cls + ")";
          }
          ch.reason += ", legal for this shape" + from(layers[i]);
          nearest = sourced(ch, layers[i]);
        }
      }
    }
    if (nearest) return *nearest;
    if (skipped_stale || skipped_illegal)
      note = " (ignored: " + std::to_string(skipped_stale) + " stale entries, " +
             std::to_string(skipped_illegal) + " configs not legal for this shape)";
  }
  const DefaultChoice d = family.heuristic_default(p, device);
  FamilyChoice ch;
  ch.config = d.config;
  ch.rule = SelectRule::kDefault;
  ch.reason =
      "default: nothing usable tuned for this problem class on this GPU or one of its "
      "class" +
      note + "; " + d.reason;
  return ch;
}

namespace {

std::vector<cache::DbLayer> one_layer(cache::TuningDb* db) {
  if (db == nullptr) return {};
  return {cache::DbLayer{db, false}};
}

}  // namespace

Result<FamilyChoice> choose_family_config(cache::TuningDb* db, const KernelFamily& family,
                                          const FamilyProblem& p, const jit::DeviceInfo& device,
                                          const Versions& versions) {
  return choose_family_config(one_layer(db), family, p, device, versions);
}

namespace {

template <typename Config>
Result<TypedChoice<Config>> typed(const FamilyChoice& f) {
  SSMTUNE_ASSIGN_OR_RETURN(Config c, Config::from_key(f.config));
  TypedChoice<Config> ch;
  ch.config = c;
  ch.rule = f.rule;
  ch.source_problem = f.source_problem;
  ch.source_ms = f.source_ms;
  ch.source_device = f.source_device;
  ch.distance = f.distance;
  ch.source_db = f.source_db;
  ch.source_shared = f.source_shared;
  ch.reason = f.reason;
  return ch;
}

}  // namespace

Result<ConfigChoice> choose_config(const std::vector<cache::DbLayer>& layers,
                                   const jit::DeviceInfo& device, const Versions& versions,
                                   const FwdProblem& p) {
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  SSMTUNE_ASSIGN_OR_RETURN(
      FamilyChoice f,
      choose_family_config(layers, fwd_family(), FwdFamilyProblem(p), device, versions));
  return typed<FwdConfig>(f);
}

Result<ConfigChoice> choose_config(cache::TuningDb* db, const jit::DeviceInfo& device,
                                   const Versions& versions, const FwdProblem& p) {
  return choose_config(one_layer(db), device, versions, p);
}

Result<BwdChoice> choose_bwd_config(const std::vector<cache::DbLayer>& layers,
                                    const jit::DeviceInfo& device, const Versions& versions,
                                    const bwd::BwdProblem& p) {
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  SSMTUNE_ASSIGN_OR_RETURN(
      FamilyChoice f,
      choose_family_config(layers, bwd_family(), BwdFamilyProblem(p), device, versions));
  return typed<bwd::BwdConfig>(f);
}

Result<BwdChoice> choose_bwd_config(cache::TuningDb* db, const jit::DeviceInfo& device,
                                    const Versions& versions, const bwd::BwdProblem& p) {
  return choose_bwd_config(one_layer(db), device, versions, p);
}

Result<StepChoice> choose_step_config(const std::vector<cache::DbLayer>& layers,
                                      const jit::DeviceInfo& device, const Versions& versions,
                                      const step::StepProblem& p) {
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  SSMTUNE_ASSIGN_OR_RETURN(
      FamilyChoice f,
      choose_family_config(layers, step_family(), StepFamilyProblem(p), device, versions));
  return typed<step::StepConfig>(f);
}

Result<ForcedConfigs> parse_forced_configs(const std::string& text) {
  ForcedConfigs out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string key = text.substr(start, comma - start);
    start = comma + 1;
    if (key.empty()) continue;
    auto f = FwdConfig::from_key(key);
    auto b = bwd::BwdConfig::from_key(key);
    auto st = step::StepConfig::from_key(key);
    if (!f && !b && !st)
      return Status::invalid_argument("'" + key + "' is neither a forward config (" +
                                      f.status().message() + ") nor a backward one (" +
                                      b.status().message() + ") nor a step one (" +
                                      st.status().message() + ")");
    if ((f && out.fwd) || (b && out.bwd) || (st && out.step))
      return Status::invalid_argument("'" + key + "': a second config for the " +
                                      (f   ? "forward"
                                       : b ? "backward"
                                           : "step"));
    if (f) out.fwd = *f;
    if (b) out.bwd = *b;
    if (st) out.step = *st;
  }
  return out;
}

}  // namespace ssmtune
