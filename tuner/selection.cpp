// The selection rule and the reasons it gives.
#include "tuner/selection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ssmtune {
namespace {

double spread(const Measurement& m) { return std::isfinite(m.spread_ms) ? m.spread_ms : 0; }

double budget_of(const Measurement& m, double max_error) {
  return max_error > 0 ? max_error : m.error_budget;
}

// "" when `m` may be selected under `budget`, else why not.
std::string ineligible(const Measurement& m, double budget) {
  if (m.status != MeasureStatus::kOk) {
    std::string why = to_string(m.status);
    return m.detail.empty() ? why : why + ": " + m.detail;
  }
  if (m.unwritten > 0) return "defect: " + std::to_string(m.unwritten) + " unwritten outputs";
  if (m.nan_inf > 0) return "defect: " + std::to_string(m.nan_inf) + " NaN/Inf outputs";
  if (m.verdict == "defect")
    return "defect: rel L2 " + format_error(m.rel_l2) + " (budget " + format_error(m.error_budget) +
           ")";
  if (!std::isfinite(m.median_ms) || m.median_ms <= 0) return "no valid timing";
  if (!(budget > 0)) return "no error budget recorded";
  if (!(m.rel_l2 <= budget))
    return "over budget: rel L2 " + format_error(m.rel_l2) + " > " + format_error(budget);
  if (m.verdict == "outside")
    return "outside its own budget: rel L2 " + format_error(m.rel_l2) + " > " +
           format_error(m.error_budget);
  return "";
}

}  // namespace

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) return "nan";
  char buf[32];
  const char* fmt = ms >= 100 ? "%.1f" : ms >= 0.01 ? "%.3f" : "%.3g";
  std::snprintf(buf, sizeof buf, fmt, ms);
  return buf;
}

std::string format_error(double e) {
  if (std::isnan(e)) return "nan";
  if (std::isinf(e)) return e > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", e);
  std::string s = buf;
  // "3.1e-06" -> "3.1e-6"
  for (const char* pat : {"e-0", "e+0"}) {
    auto at = s.find(pat);
    if (at != std::string::npos) s.erase(at + 2, 1);
  }
  return s;
}

Selection select_best(const std::vector<Measurement>& ms, double max_error) {
  Selection sel;
  std::vector<size_t> eligible;
  std::vector<std::pair<size_t, std::string>> rejected;
  for (size_t i = 0; i < ms.size(); ++i) {
    std::string why = ineligible(ms[i], budget_of(ms[i], max_error));
    if (why.empty())
      eligible.push_back(i);
    else
      rejected.emplace_back(i, std::move(why));
  }
  if (eligible.empty()) {
    sel.rule = ms.empty() ? "no measurements" : "no measurement is ok and inside its budget";
    for (auto& [i, why] : rejected) sel.others.emplace_back(ms[i], std::move(why));
    return sel;
  }
  std::sort(eligible.begin(), eligible.end(), [&](size_t a, size_t b) {
    if (ms[a].median_ms != ms[b].median_ms) return ms[a].median_ms < ms[b].median_ms;
    return ms[a].config_key < ms[b].config_key;
  });
  const Measurement& fastest = ms[eligible[0]];
  auto tie_spread = [&](const Measurement& m) { return std::max(spread(m), spread(fastest)); };
  // A relative slack so that 0.113 - 0.112 ties with a spread of 0.001.
  auto ties = [&](const Measurement& m) {
    return m.median_ms - fastest.median_ms <= tie_spread(m) * (1 + 1e-9);
  };
  // The most accurate of the tie group (not a prefix of `eligible`: each
  // candidate's own spread counts).
  size_t winner = eligible[0];
  size_t group = 0;
  for (size_t i : eligible) {
    if (!ties(ms[i])) continue;
    ++group;
    const Measurement& w = ms[winner];
    if (ms[i].rel_l2 < w.rel_l2 ||
        (ms[i].rel_l2 == w.rel_l2 &&
         (ms[i].median_ms < w.median_ms ||
          (ms[i].median_ms == w.median_ms && ms[i].config_key < w.config_key))))
      winner = i;
  }
  const Measurement& w = ms[winner];
  const std::string numbers = "(" + format_ms(w.median_ms) + " ms, rel L2 " +
                              format_error(w.rel_l2) +
                              " <= " + format_error(budget_of(w, max_error)) + ")";
  if (winner == eligible[0]) {
    sel.rule = "fastest inside budget " + numbers;
    if (group > 1)
      sel.rule += "; the most accurate of " + std::to_string(group) + " tied within spread";
  } else {
    sel.rule = "tie with " + fastest.config_key + " within spread " + format_ms(tie_spread(w)) +
               " ms; more accurate (rel L2 " + format_error(w.rel_l2) + " vs " +
               format_error(fastest.rel_l2) + ") " + numbers;
  }
  sel.found = true;
  sel.best = w;
  for (size_t i : eligible) {
    if (i == winner) continue;
    const Measurement& m = ms[i];
    std::string why;
    if (ties(m)) {
      const double s = std::max(tie_spread(m), tie_spread(w));
      why = "tie with " + w.config_key + " within spread " + format_ms(s) + " ms; ";
      why += m.rel_l2 > w.rel_l2 ? "less accurate (rel L2 " + format_error(m.rel_l2) + " vs " +
                                       format_error(w.rel_l2) + ")"
                                 : "as accurate and slower (" + format_ms(m.median_ms) + " ms vs " +
                                       format_ms(w.median_ms) + " ms)";
    } else {
      why = "slower: " + format_ms(m.median_ms) + " ms vs " + format_ms(w.median_ms) + " ms";
    }
    sel.others.emplace_back(m, std::move(why));
  }
  for (auto& [i, why] : rejected) sel.others.emplace_back(ms[i], std::move(why));
  return sel;
}

}  // namespace ssmtune
