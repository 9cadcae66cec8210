// Drawing the plots on a Frame.
#include "report/plots.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "report/svg.h"

namespace ssmtune::report {
namespace {

std::string circle(const std::string& mark, const std::string& cls, double x, double y, double r,
                   const std::string& tip, const std::string& extra = "") {
  return "<circle data-mark=\"" + mark + "\" class=\"" + cls + "\" cx=\"" + fmt(x) + "\" cy=\"" +
         fmt(y) + "\" r=\"" + fmt(r) + "\"" + extra + "><title>" + escape(tip) +
         "</title></circle>";
}

}  // namespace

std::string scatter_plot(const std::string& title, const std::vector<ScatterPoint>& pts,
                         double budget, const std::string& attrs) {
  Frame f("scatter", 560, 360, title, attrs);
  double min_pos = INFINITY;
  for (const auto& p : pts)
    if (p.error > 0) min_pos = std::min(min_pos, p.error);
  if (budget > 0) min_pos = std::min(min_pos, budget);
  const double floor = std::isfinite(min_pos) ? min_pos / 10 : 1e-9;
  auto ex = [floor](double e) { return e > 0 ? e : floor; };
  std::vector<double> xs, ys;
  for (const auto& p : pts) {
    xs.push_back(ex(p.error));
    ys.push_back(p.ms);
  }
  if (budget > 0) xs.push_back(budget);
  f.axes(xs, true, "rel. L2 error against fp64 (worst output; 0 drawn at " + fmt(floor, 2) + ")",
         ys, true, "median time, ms");
  const double top = Frame::kTop, bottom = f.height() - Frame::kBottom;
  if (budget > 0) {
    const double x = f.x()(budget);
    f.add("<line data-mark=\"budget\" class=\"budget\" x1=\"" + fmt(x) + "\" x2=\"" + fmt(x) +
          "\" y1=\"" + fmt(top) + "\" y2=\"" + fmt(bottom) + "\"><title>error budget " +
          fmt(budget, 3) + "</title></line><text class=\"note\" x=\"" + fmt(x + 3) + "\" y=\"" +
          fmt(top + 12) + "\">budget " + fmt(budget, 2) + "</text>");
  }
  // Front over the current ok points.
  std::vector<XY> front_pts;
  std::vector<size_t> index;
  for (size_t i = 0; i < pts.size(); ++i)
    if ((pts[i].kind == "eligible" || pts[i].kind == "over-budget") && pts[i].ms > 0) {
      front_pts.push_back({ex(pts[i].error), pts[i].ms});
      index.push_back(i);
    }
  const auto front = pareto_front(front_pts);
  std::set<size_t> on_front;
  std::string line;
  for (size_t k : front) {
    on_front.insert(index[k]);
    line +=
        (line.empty() ? "" : " ") + fmt(f.x()(front_pts[k].x)) + "," + fmt(f.y()(front_pts[k].y));
  }
  if (!front.empty())
    f.add("<polyline data-mark=\"front\" class=\"front\" data-points=\"" +
          std::to_string(front.size()) + "\" points=\"" + line + "\"/>");
  // Stale first, so current points draw over them; the selection last.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < pts.size(); ++i) {
      const auto& p = pts[i];
      if ((p.kind == "stale") != (pass == 0) || !(p.ms > 0)) continue;
      const double x = f.x()(ex(p.error)), y = f.y()(p.ms);
      const std::string tip = p.config + ": " + fmt(p.ms) + " ms, error " + fmt(p.error, 3) + " (" +
                              p.kind + (on_front.count(i) ? ", on the Pareto front" : "") + ")";
      f.add(circle("point", "pt " + p.kind + (on_front.count(i) ? " onfront" : ""), x, y, 3.5, tip,
                   " data-kind=\"" + escape(p.kind) + "\""));
    }
  for (const auto& p : pts)
    if (p.selected && p.ms > 0)
      f.add(circle("selected", "selected", f.x()(ex(p.error)), f.y()(p.ms), 8,
                   "selected: " + p.config + " " + fmt(p.ms) + " ms"));
  return f.str();
}

std::string heatmap_plot(const std::string& algo, const std::vector<HeatCell>& cells,
                         double best_ms, double worst_ratio, const std::string& attrs) {
  std::vector<int> ks, ds;
  for (const auto& c : cells) {
    ks.push_back(c.chunk);
    ds.push_back(c.d_step);
  }
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  std::sort(ds.begin(), ds.end());
  ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
  const int cw = 46, ch = 26, left = 52, top = 26;
  const int width = left + cw * static_cast<int>(ks.size()) + 12;
  const int height = top + ch * static_cast<int>(ds.size()) + 40;
  Frame f("heatmap", std::max(width, 200), height, algo + " (time / best)",
          attrs + " data-algo=\"" + escape(algo) + "\"");
  for (size_t i = 0; i < ks.size(); ++i)
    f.add("<text class=\"tick\" text-anchor=\"middle\" x=\"" + fmt(left + cw * (i + 0.5)) +
          "\" y=\"" + fmt(top + ch * ds.size() + 14) + "\">" + std::to_string(ks[i]) + "</text>");
  for (size_t j = 0; j < ds.size(); ++j)
    f.add("<text class=\"tick\" text-anchor=\"end\" x=\"" + fmt(left - 4) + "\" y=\"" +
          fmt(top + ch * (j + 0.5) + 4) + "\">" + std::to_string(ds[j]) + "</text>");
  f.add("<text class=\"label\" text-anchor=\"middle\" x=\"" + fmt(left + cw * ks.size() / 2.0) +
        "\" y=\"" + fmt(height - 8) +
        "\">chunk length K</text><text class=\"label\" text-anchor=\"middle\" "
        "transform=\"translate(12," +
        fmt(top + ch * ds.size() / 2.0) + ") rotate(-90)\">D</text>");
  const double span = std::log(std::max(worst_ratio, 1.0001));
  for (const auto& c : cells) {
    const size_t i = std::lower_bound(ks.begin(), ks.end(), c.chunk) - ks.begin();
    const size_t j = std::lower_bound(ds.begin(), ds.end(), c.d_step) - ds.begin();
    const double ratio = best_ms > 0 ? c.best_ms / best_ms : 1;
    const double t = std::log(std::clamp(ratio, 1.0, worst_ratio)) / span;
    const std::string color = ramp_color(1 - t);  // fast: bright
    f.add("<g><rect data-mark=\"cell\" x=\"" + fmt(left + cw * i) + "\" y=\"" + fmt(top + ch * j) +
          "\" width=\"" + std::to_string(cw - 1) + "\" height=\"" + std::to_string(ch - 1) +
          "\" fill=\"" + color + "\"><title>" +
          escape(c.config + ": " + fmt(c.best_ms) + " ms (" + fmt(ratio, 3) + "x the best; " +
                 std::to_string(c.configs) + " configs in this cell)") +
          "</title></rect><text class=\"cell\" text-anchor=\"middle\" x=\"" +
          fmt(left + cw * (i + 0.5)) + "\" y=\"" + fmt(top + ch * (j + 0.5) + 4) + "\" fill=\"" +
          (t > 0.55 ? "#fff" : "#000") + "\">" + fmt(ratio, 3) + "</text></g>");
  }
  return f.str();
}

std::string curve_plot(const std::string& title, const std::vector<CurvePoint>& pts,
                       const std::string& attrs) {
  Frame f("curve", 420, 300, title, attrs);
  std::vector<double> xs = {0}, ys;
  for (const auto& p : pts) {
    xs.push_back(p.elapsed_s);
    ys.push_back(p.best_ms);
  }
  f.axes(xs, false, "elapsed, s (measurement timestamps; pauses > 10 min left out)", ys, false,
         "best time so far, ms");
  std::string d;
  for (size_t i = 0; i < pts.size(); ++i) {
    const double x = f.x()(pts[i].elapsed_s), y = f.y()(pts[i].best_ms);
    if (i == 0) {
      d = "M" + fmt(x) + "," + fmt(y);
    } else {
      d += " H" + fmt(x) + " V" + fmt(y);
    }
  }
  if (!d.empty()) f.add("<path data-mark=\"step\" class=\"step\" d=\"" + d + "\"/>");
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i + 1 == pts.size() && i > 0 && pts[i].best_ms == pts[i - 1].best_ms) break;  // the end
    f.add(circle("improvement", "improvement", f.x()(pts[i].elapsed_s), f.y()(pts[i].best_ms), 3,
                 pts[i].config + ": " + fmt(pts[i].best_ms) + " ms after " +
                     fmt(pts[i].elapsed_s, 3) + " s"));
  }
  return f.str();
}

std::string speedup_plot(const std::string& title, const std::vector<SpeedupRow>& rows,
                         const std::string& attrs) {
  const int label_w = 300, bar_h = 10, row_h = 28, top = 30, width = 760;
  const int height = top + row_h * static_cast<int>(rows.size()) + 40;
  Frame f("speedup", width, height, title, attrs);
  double hi = 1.2;
  for (const auto& r : rows) hi = std::max({hi, r.vs_default * 1.1, r.vs_mamba * 1.1});
  Scale x;
  x.lo = 0;
  x.hi = hi;
  x.from = label_w;
  x.to = width - 60;
  for (double v : x.ticks())
    f.add("<line class=\"grid\" x1=\"" + fmt(x(v)) + "\" x2=\"" + fmt(x(v)) + "\" y1=\"" +
          fmt(top) + "\" y2=\"" + fmt(height - 30) +
          "\"/><text class=\"tick\" "
          "text-anchor=\"middle\" x=\"" +
          fmt(x(v)) + "\" y=\"" + fmt(height - 16) + "\">" + fmt(v, 3) + "x</text>");
  f.add("<line class=\"one\" x1=\"" + fmt(x(1)) + "\" x2=\"" + fmt(x(1)) + "\" y1=\"" + fmt(top) +
        "\" y2=\"" + fmt(height - 30) + "\"/>");
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double y = top + row_h * i;
    f.add("<text class=\"rowlabel\" text-anchor=\"end\" x=\"" + fmt(label_w - 6) + "\" y=\"" +
          fmt(y + 15) + "\">" + escape(r.label + (r.stale ? " (stale)" : "")) + "</text>");
    int k = 0;
    for (const auto& [series, v] : {std::pair<const char*, double>{"default", r.vs_default},
                                    std::pair<const char*, double>{"mamba", r.vs_mamba}}) {
      const double by = y + 3 + (bar_h + 2) * k++;
      if (!(v > 0)) {
        f.add("<text class=\"note\" x=\"" + fmt(label_w + 4) + "\" y=\"" + fmt(by + 9) + "\">" +
              (std::string(series) == "default" ? "default not measured" : "no mamba_ssm time") +
              "</text>");
        continue;
      }
      f.add("<rect data-mark=\"bar\" data-series=\"" + std::string(series) + "\" class=\"bar " +
            series + (r.stale ? " stale" : "") + "\" x=\"" + fmt(x(0)) + "\" y=\"" + fmt(by) +
            "\" width=\"" + fmt(x(v) - x(0)) + "\" height=\"" + std::to_string(bar_h) +
            "\"><title>" +
            escape(r.label + ": " + fmt(v, 3) + "x over " +
                   (std::string(series) == "default" ? "the untuned default" : "mamba_ssm")) +
            "</title></rect><text class=\"note\" x=\"" + fmt(x(v) + 4) + "\" y=\"" + fmt(by + 9) +
            "\">" + fmt(v, 3) + "x</text>");
    }
  }
  return f.str();
}

}  // namespace ssmtune::report
