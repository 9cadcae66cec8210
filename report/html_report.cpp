// render_html: the page around the plots.
#include "report/html_report.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

#include "report/analysis.h"
#include "report/plots.h"
#include "report/svg.h"

namespace ssmtune::report {
namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:32px}
h3{font-size:15px;margin:20px 0 6px}.meta{color:#555}
.notice{background:#fff4d6;border:1px solid #e0c060;padding:10px 14px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:3px 7px;text-align:left}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.stale td{color:#999;font-style:italic}.tag{font-size:11px;padding:1px 4px;border-radius:3px;background:#eee}
.tag.stale{background:#ddd;color:#666}.tag.changed{background:#ffe0b0}.tag.added{background:#d4f4d4}
.tag.removed{background:#f4d4d4}.row{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
svg.plot{background:#fff;border:1px solid #e4e4e4}svg text{font:11px system-ui,sans-serif;fill:#333}
svg text.title{font-weight:600;font-size:12px}svg .frame{fill:none;stroke:#999}
svg .grid{stroke:#eee}svg .pt.eligible{fill:#2a6fdb;fill-opacity:.75}
svg .pt.over-budget{fill:#e08a00;fill-opacity:.75}svg .pt.inaccurate{fill:#d62728;fill-opacity:.8}
svg .pt.stale{fill:none;stroke:#aaa}svg .pt.onfront{stroke:#000;stroke-width:1}
svg .front{fill:none;stroke:#000;stroke-width:1.5;stroke-dasharray:4 2}
svg .budget{stroke:#d62728;stroke-width:1.5;stroke-dasharray:6 3}
svg .selected{fill:none;stroke:#0a0;stroke-width:2.5}svg .step{fill:none;stroke:#2a6fdb;stroke-width:2}
svg .improvement{fill:#2a6fdb}svg .bar.default{fill:#2a6fdb}svg .bar.mamba{fill:#9467bd}
svg .bar.stale{fill:#bbb}svg .one{stroke:#000;stroke-dasharray:3 3}svg text.cell{font-size:10px}
svg text.note{fill:#666}ul.fail{margin:4px 0}.key.eligible{color:#2a6fdb}
.key.over-budget{color:#e08a00}.key.inaccurate{color:#d62728}.key.stale{color:#aaa}
.key.selected{color:#0a0;font-weight:700}
)";

std::string iso(int64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

std::string td(const std::string& s, bool num = false) {
  return std::string(num ? "<td class=\"num\">" : "<td>") + escape(s) + "</td>";
}

std::string anchor(const std::string& uuid, const std::string& problem) {
  std::string a = "p-";
  for (char c : uuid + "-" + problem) a += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return a;
}

using Group = std::vector<const Measurement*>;

// Measurements by (device, problem), in model order.
std::map<std::pair<std::string, std::string>, Group> group(const Model& m) {
  std::map<std::pair<std::string, std::string>, Group> g;
  for (const auto& x : m.measurements) g[{x.device_uuid, x.problem_key}].push_back(&x);
  return g;
}

const BestEntry* best_of(const Model& m, const std::string& uuid, const std::string& problem) {
  for (const auto& b : m.best)
    if (b.device_uuid == uuid && b.problem_key == problem) return &b;
  return nullptr;
}

std::string stale_notice(const Model& m) {
  std::ostringstream o;
  o << "<p class=\"notice\" data-notice=\"stale-only\">Everything in this database is stale: "
    << m.measurements.size() << " measurements and " << m.best.size()
    << " best entries were made under another driver, NVRTC or template version than the "
       "current one ("
    << escape(m.versions)
    << "). No plot is drawn from stale rows alone; re-tune on this version to see them.</p>";
  if (!m.best.empty()) {
    o << "<table><tr><th>GPU</th><th>problem</th><th>config</th><th>ms</th><th>stale "
         "because</th></tr>";
    for (const auto& b : m.best) {
      const Device* d = m.device(b.device_uuid);
      o << "<tr class=\"stale\">" << td(d ? d->name : b.device_uuid) << td(b.problem_key)
        << td(b.config_key) << td(fmt(b.median_ms), true) << td(b.stale_why) << "</tr>";
    }
    o << "</table>";
  }
  return o.str();
}

std::string compare_section(const ReportInputs& in) {
  std::ostringstream o;
  const DiffSummary s = summarize(in.diff);
  o << "<h2 id=\"compare\">Compared with " << escape(in.compare_source) << "</h2>"
    << "<p class=\"meta\">A: " << escape(in.model->source) << "; B: " << escape(in.compare_source)
    << ". Per device class (GPU name) and problem: " << s.changed << " changed config, " << s.same
    << " same, " << s.added << " added in B, " << s.removed
    << " removed in B. Ratio: B ms / A ms.</p>";
  if (in.diff.empty()) return o.str() + "<p>Neither database has best entries.</p>";
  o << "<table data-table=\"compare\"><tr><th>GPU</th><th>problem</th><th>change</th><th>config "
       "A</th><th>ms A</th><th>config B</th><th>ms B</th><th>B / A</th></tr>";
  for (const auto& r : in.diff) {
    o << "<tr data-change=\"" << escape(r.change) << "\">" << td(r.device) << td(r.problem)
      << "<td><span class=\"tag " << escape(r.change) << "\">" << escape(r.change) << "</span></td>"
      << td(r.config_a + (r.stale_a ? " (stale)" : "")) << td(r.ms_a > 0 ? fmt(r.ms_a) : "", true)
      << td(r.config_b + (r.stale_b ? " (stale)" : "")) << td(r.ms_b > 0 ? fmt(r.ms_b) : "", true)
      << td(r.ratio > 0 ? fmt(r.ratio, 3) : "", true) << "</tr>";
  }
  return o.str() + "</table>";
}

std::string gpu_section(const ReportInputs& in, const Device& d,
                        const std::map<std::pair<std::string, std::string>, Group>& groups) {
  const Model& m = *in.model;
  std::ostringstream o;
  o << "<section class=\"gpu\" data-device=\"" << escape(d.uuid) << "\"><h3>" << escape(d.name)
    << " <span class=\"meta\">" << escape(d.uuid) << ", " << escape(d.arch) << ", " << d.sm_count
    << " SMs, driver " << escape(d.driver) << ", NVRTC " << escape(d.nvrtc) << "</span></h3>";
  std::vector<SpeedupRow> rows;
  o << "<table data-table=\"selected\"><tr><th>problem</th><th>family</th><th>selected "
       "config</th><th>ms</th><th>error</th><th>default config</th><th>default ms</th><th>x "
       "default</th><th>mamba_ssm ms</th><th>x mamba_ssm</th><th>tuned</th></tr>";
  int n = 0;
  for (const auto& b : m.best) {
    if (b.device_uuid != d.uuid) continue;
    ++n;
    SpeedupRow row;
    row.label = b.problem_key;
    row.stale = b.stale;
    // The untuned default, when it was measured here (current, eligible).
    std::string def_key = "n/a", def_ms = "default not measured";
    if (const DefaultConfig* dc = m.default_config(d.uuid, b.problem_key)) {
      def_key = dc->config_key;
      auto g = groups.find({d.uuid, b.problem_key});
      if (g != groups.end())
        for (const Measurement* x : per_config(g->second))
          if (x->config_key == dc->config_key) {
            if (eligible(*x) && b.median_ms > 0) {
              def_ms = fmt(x->median_ms);
              row.vs_default = x->median_ms / b.median_ms;
            } else {
              def_ms = "measured, not eligible (" + x->status + " " + x->verdict + ")";
            }
          }
    }
    // mamba_ssm from the bench files, same device name and problem.
    std::string mamba_ms, vs_mamba;
    for (const auto& e : in.bench) {
      if (e.device_name != d.name || family_of(b.problem_key) != "fwd" ||
          e.problem_key != b.problem_key || e.mamba_ms <= 0)
        continue;
      mamba_ms = fmt(e.mamba_ms);
      if (e.ssmtune_ms > 0) {
        row.vs_mamba = e.mamba_ms / e.ssmtune_ms;
        vs_mamba = fmt(row.vs_mamba, 3) + " (side by side)";
      } else if (b.median_ms > 0) {
        row.vs_mamba = e.mamba_ms / b.median_ms;
        vs_mamba = fmt(row.vs_mamba, 3) + " (db time)";
      }
    }
    rows.push_back(row);
    o << "<tr" << (b.stale ? " class=\"stale\"" : "") << ">"
      << "<td><a href=\"#" << anchor(d.uuid, b.problem_key) << "\">" << escape(b.problem_key)
      << "</a></td>" << td(family_of(b.problem_key))
      << td(b.config_key + (b.stale ? " (stale: " + b.stale_why + ")" : ""))
      << td(fmt(b.median_ms), true) << td(fmt(b.error, 3), true) << td(def_key) << td(def_ms, true)
      << td(row.vs_default > 0 ? fmt(row.vs_default, 3) : "", true) << td(mamba_ms, true)
      << td(vs_mamba, true) << td(iso(b.timestamp)) << "</tr>";
  }
  o << "</table>";
  if (n == 0) {
    o << "<p>No tuned problem on this GPU.</p>";
  } else {
    o << speedup_plot(
        "speedup of the selected config: over the untuned default (blue), over "
        "mamba_ssm (purple)",
        rows, "data-device=\"" + escape(d.uuid) + "\"");
  }
  return o.str() + "</section>";
}

std::string problem_section(const Model& m, const Device& d, const std::string& problem,
                            const Group& all) {
  std::ostringstream o;
  const std::string family = family_of(problem);
  const std::string attrs =
      "data-device=\"" + escape(d.uuid) + "\" data-problem=\"" + escape(problem) + "\"";
  size_t stale = 0;
  for (const Measurement* x : all) stale += x->stale ? 1 : 0;
  const Group current = per_config(all);
  o << "<section class=\"problem\" id=\"" << anchor(d.uuid, problem) << "\" " << attrs << "><h3>"
    << escape(problem) << " <span class=\"tag\">" << escape(family) << "</span> on "
    << escape(d.name) << "</h3>";
  const BestEntry* b = best_of(m, d.uuid, problem);
  o << "<p class=\"meta\">" << all.size() << " measurements (" << stale << " stale), "
    << current.size() << " current configs. Selected: "
    << (b ? escape(b->config_key) + " " + fmt(b->median_ms) + " ms" +
                (b->stale ? " <span class=\"tag stale\">stale</span>" : "") + " (" +
                escape(b->rule) + ")"
          : std::string("none"))
    << "</p>";
  if (current.empty()) {
    o << "<p class=\"notice\" data-notice=\"stale-problem\">Only stale measurements of this "
         "problem on this GPU ("
      << stale << "): no plot; re-tune to see one.</p></section>";
    return o.str();
  }
  // Time against error: every current config that ran, and the stale ones.
  std::vector<ScatterPoint> pts;
  double budget = 0;
  for (const Measurement* x : current) {
    if (x->status != "ok" && x->status != "inaccurate") continue;
    budget = std::max(budget, x->budget);
    ScatterPoint p{x->error(), x->median_ms,
                   x->status == "inaccurate" ? "inaccurate"
                   : eligible(*x)            ? "eligible"
                                             : "over-budget",
                   x->config_key, b && !b->stale && b->config_key == x->config_key};
    pts.push_back(p);
  }
  for (const Measurement* x : all)
    if (x->stale && (x->status == "ok" || x->status == "inaccurate"))
      pts.push_back({x->error(), x->median_ms, "stale", x->config_key, false});
  o << "<div class=\"row\">";
  if (pts.empty()) {
    o << "<p class=\"notice\">No config of this problem was timed.</p>";
  } else {
    o << scatter_plot("time against fp64 error (" + std::to_string(pts.size()) + " configs)", pts,
                      budget, attrs);
  }
  Group timeline;  // every current measurement: re-measurements count where they happened
  for (const Measurement* x : all)
    if (!x->stale) timeline.push_back(x);
  const auto curve = tuning_curve(timeline);
  if (!curve.empty()) o << curve_plot("tuning curve: best so far", curve, attrs);
  o << "</div>";
  const auto fails = failure_counts(current);
  if (!fails.empty()) {
    int total = 0;
    for (const auto& [why, k] : fails) total += k;
    o << "<p>" << total << " configs not timed or not accurate, by reason:</p><ul class=\"fail\" "
      << "data-list=\"failures\">";
    for (const auto& [why, k] : fails)
      o << "<li data-count=\"" << k << "\">" << k << " &times; " << escape(why) << "</li>";
    o << "</ul>";
  }
  const auto cells = heat_cells(family, current);
  double fastest = 0, slowest = 0;
  for (const auto& [algo, cs] : cells)
    for (const auto& c : cs) {
      if (fastest == 0 || c.best_ms < fastest) fastest = c.best_ms;
      slowest = std::max(slowest, c.best_ms);
    }
  if (!cells.empty()) {
    const double worst = fastest > 0 ? std::min(8.0, std::max(1.5, slowest / fastest)) : 2;
    o << "<p class=\"meta\">Heatmaps: per algorithm, the fastest eligible config in each (chunk "
         "length K, channels per block D) cell over the problem's fastest ("
      << fmt(fastest) << " ms); bright is fast, the color saturates at " << fmt(worst, 2)
      << "x.</p><div class=\"row\">";
    for (const auto& [algo, cs] : cells) o << heatmap_plot(algo, cs, fastest, worst, attrs);
    o << "</div>";
  }
  return o.str() + "</section>";
}

}  // namespace

std::string render_html(const ReportInputs& in) {
  const Model& m = *in.model;
  std::ostringstream o;
  size_t stale = 0;
  for (const auto& x : m.measurements) stale += x.stale ? 1 : 0;
  o << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ssmtune tuning "
       "report</title><style>"
    << kStyle << "</style></head><body><h1>ssmtune tuning report</h1><p class=\"meta\">Database "
    << escape(m.source) << "; current versions: " << escape(m.versions) << "; generated "
    << escape(in.generated) << ". " << m.devices.size() << " GPUs, " << m.problems.size()
    << " problems, " << m.measurements.size() << " measurements (" << stale << " stale), "
    << m.best.size() << " best entries.</p>";
  if (in.compare) o << compare_section(in);
  if (m.empty()) {
    o << "<p class=\"notice\" data-notice=\"empty\">The database holds no measurements and no "
         "best entries"
      << " for this selection: nothing to plot. Run <code>ssmtune tune</code> first.</p>";
    return o.str() + "</body></html>\n";
  }
  if (m.stale_only()) return o.str() + stale_notice(m) + "</body></html>\n";

  const auto groups = group(m);
  o << "<h2 id=\"gpus\">Selected configs per GPU</h2>";
  for (const auto& d : m.devices) {
    bool any = false;
    for (const auto& [k, g] : groups) any = any || k.first == d.uuid;
    for (const auto& b : m.best) any = any || b.device_uuid == d.uuid;
    if (any) o << gpu_section(in, d, groups);
  }
  o << "<h2 id=\"problems\">Problems</h2><p class=\"legend\">Time against error: "
       "<span class=\"key eligible\">&#9679;</span> inside the budget, "
       "<span class=\"key over-budget\">&#9679;</span> over it, "
       "<span class=\"key inaccurate\">&#9679;</span> inaccurate (failed the check), "
       "<span class=\"key stale\">&#9675;</span> stale, dashed black: the Pareto front, "
       "dashed red: the error budget, <span class=\"key selected\">&#9711;</span> the "
       "selected config.</p>";
  for (const auto& d : m.devices)
    for (const auto& [k, g] : groups)
      if (k.first == d.uuid) o << problem_section(m, d, k.second, g);
  return o.str() + "</body></html>\n";
}

}  // namespace ssmtune::report
