// Eligibility, per-config choice, Pareto front, reasons, curve and cells.
#include "report/analysis.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ssmtune::report {

bool eligible(const Measurement& m) {
  return m.status == "ok" && m.verdict != "outside" && m.verdict != "defect" &&
         m.bad_elements == 0 && m.budget > 0 && m.error() <= m.budget &&
         std::isfinite(m.median_ms) && m.median_ms > 0;
}

std::vector<const Measurement*> per_config(const std::vector<const Measurement*>& ms) {
  std::map<std::string, const Measurement*> chosen;
  for (const Measurement* m : ms) {
    if (m->stale) continue;
    auto it = chosen.find(m->config_key);
    if (it == chosen.end() || m->repeats > it->second->repeats ||
        (m->repeats == it->second->repeats && m->timestamp >= it->second->timestamp))
      chosen[m->config_key] = m;
  }
  std::vector<const Measurement*> out;
  out.reserve(chosen.size());
  for (const auto& [k, m] : chosen) out.push_back(m);
  return out;
}

std::vector<size_t> pareto_front(const std::vector<XY>& pts) {
  std::vector<size_t> order(pts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&pts](size_t a, size_t b) {
    return pts[a].x < pts[b].x || (pts[a].x == pts[b].x && pts[a].y < pts[b].y);
  });
  std::vector<size_t> front;
  for (size_t i : order) {
    if (!std::isfinite(pts[i].x) || !std::isfinite(pts[i].y)) continue;
    if (front.empty() || pts[i].y < pts[front.back()].y) front.push_back(i);
  }
  return front;
}

std::string reason_class(const std::string& status, const std::string& detail) {
  std::string why;
  bool in_number = false;
  for (char ch : detail) {
    if (ch == '\n') break;  // a compile log: its first line
    const bool digit = std::isdigit(static_cast<unsigned char>(ch)) != 0 ||
                       (in_number && (ch == '.' || ch == 'e' || ch == 'x'));
    if (digit) {
      if (!in_number) why += '#';
      in_number = true;
      continue;
    }
    in_number = false;
    why += ch;
  }
  while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
  if (why.size() > 80) why = why.substr(0, 77) + "...";
  return why.empty() ? status : status + ": " + why;
}

std::vector<std::pair<std::string, int>> failure_counts(const std::vector<const Measurement*>& ms) {
  std::map<std::string, int> counts;
  for (const Measurement* m : ms)
    if (m->status != "ok")
      ++counts[reason_class(m->status, m->status == "inaccurate" ? m->verdict : m->detail)];
  std::vector<std::pair<std::string, int>> out(counts.begin(), counts.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::vector<CurvePoint> tuning_curve(const std::vector<const Measurement*>& ms) {
  std::vector<CurvePoint> out;
  if (ms.empty()) return out;
  std::vector<const Measurement*> sorted(ms);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Measurement* a, const Measurement* b) {
    return a->timestamp < b->timestamp;
  });
  double elapsed = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) {
      const double dt = double(sorted[i]->timestamp - sorted[i - 1]->timestamp);
      if (dt <= kCurveMaxGapS) elapsed += dt;
    }
    const Measurement* m = sorted[i];
    if (!eligible(*m)) continue;
    if (out.empty() || m->median_ms < out.back().best_ms)
      out.push_back({elapsed, m->median_ms, m->config_key});
  }
  if (!out.empty() && out.back().elapsed_s < elapsed)
    out.push_back({elapsed, out.back().best_ms, out.back().config});
  return out;
}

std::map<std::string, std::vector<HeatCell>> heat_cells(const std::string& family,
                                                        const std::vector<const Measurement*>& ms) {
  std::map<std::string, std::map<std::pair<int, int>, HeatCell>> grid;
  for (const Measurement* m : ms) {
    if (!eligible(*m)) continue;
    const ConfigAxes a = config_axes(family, m->config_key);
    if (!a.ok) continue;
    HeatCell& c = grid[a.algo][{a.chunk, a.d_step}];
    c.chunk = a.chunk;
    c.d_step = a.d_step;
    ++c.configs;
    if (c.best_ms == 0 || m->median_ms < c.best_ms) {
      c.best_ms = m->median_ms;
      c.config = m->config_key;
    }
  }
  std::map<std::string, std::vector<HeatCell>> out;
  for (auto& [algo, cells] : grid)
    for (auto& [k, c] : cells) out[algo].push_back(c);
  return out;
}

}  // namespace ssmtune::report
