// The HTML page from seeded, empty and stale-only databases: every plot has
// marks, strings are escaped, nothing refers to the network.
#include "report/html_report.h"

#include <catch2/catch.hpp>

#include "report/report_data.h"
#include "report/report_fixtures.h"

namespace ssmtune::report {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + what.size())) ++n;
  return n;
}

std::string render(cache::TuningDb& db, const Selection& sel = {},
                   const std::vector<BenchEntry>& bench = {}) {
  auto m = load_model(db, testing::sample_versions(), "driver 13.0");
  REQUIRE(m);
  const Model s = select(*m, sel);
  ReportInputs in;
  in.model = &s;
  in.bench = bench;
  in.generated = "now";
  return render_html(in);
}

}  // namespace

TEST_CASE("report: every plot draws marks; names are escaped; no URL", "[report]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db);
  const uint64_t seed = 7;
  INFO("seed " << seed);
  testing::seed_report_db(*db, seed);
  const std::vector<BenchEntry> bench = {
      {"NVIDIA H200", testing::problem_key(0), 2.0, 0.0, "b.json"}};
  const std::string html = render(*db, {}, bench);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("http") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;") !=
        std::string::npos);
  // 5 (device, problem) pairs: a scatter and a curve each; one stale best entry.
  CHECK(count(html, "data-plot=\"scatter\"") == 5);
  CHECK(count(html, "data-plot=\"curve\"") == 5);
  CHECK(count(html, "data-plot=\"speedup\"") == 2);
  // Heatmaps: seq, warpscan, blelloch, pipelined per pair (all have eligible cells).
  CHECK(count(html, "data-plot=\"heatmap\"") == 20);
  CHECK(count(html, "data-mark=\"selected\"") == 4);  // the stale best is not highlighted
  CHECK(count(html, "data-mark=\"budget\"") == 5);
  CHECK(count(html, "data-mark=\"front\"") == 5);
  CHECK(count(html, "data-kind=\"stale\"") == 15);
  CHECK(count(html, "data-kind=\"inaccurate\"") == 5);
  CHECK(count(html, "data-series=\"default\"") == 5);
  CHECK(count(html, "data-series=\"mamba\"") == 1);
  CHECK(html.find("(db time)") != std::string::npos);
  CHECK(html.find("4 &times; pruned: shared memory # B &gt; # B") != std::string::npos);
  CHECK(html.find("(stale: driver") != std::string::npos);
  // Each svg element is closed.
  CHECK(count(html, "<svg") == count(html, "</svg>"));
}

TEST_CASE("report: the selection narrows the page", "[report]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db);
  testing::seed_report_db(*db, 7);
  const std::string html = render(*db, {{"NVIDIA H200"}, {"fwd"}, {testing::problem_key(0)}});
  CHECK(count(html, "data-plot=\"scatter\"") == 1);
  CHECK(html.find("&lt;script") == std::string::npos);
}

TEST_CASE("report: an empty database says so and draws nothing", "[report]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db);
  const std::string html = render(*db);
  CHECK(html.find("data-notice=\"empty\"") != std::string::npos);
  CHECK(html.find("<svg") == std::string::npos);
}

TEST_CASE("report: a stale-only database says so and draws nothing", "[report]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db);
  testing::seed_report_db(*db, 7, true);
  const std::string html = render(*db);
  CHECK(html.find("data-notice=\"stale-only\"") != std::string::npos);
  CHECK(html.find("<svg") == std::string::npos);
  CHECK(count(html, "<tr class=\"stale\">") == 5);
}

TEST_CASE("report: --compare adds the diff table", "[report]") {
  Model a, b;
  a.devices = b.devices = {{"GPU-1", "NVIDIA H200", "sm_90", 132, "", ""}};
  a.best = {{"GPU-1", "p", "c1", 1.0, 0, 0, 0, "", false, ""}};
  b.best = {{"GPU-1", "p", "c2", 0.8, 0, 0, 0, "", false, ""}};
  ReportInputs in;
  in.model = &a;
  in.compare = true;
  in.compare_source = "other <db>";
  in.diff = diff_models(a, b);
  const std::string html = render_html(in);
  CHECK(html.find("data-table=\"compare\"") != std::string::npos);
  CHECK(html.find("data-change=\"changed\"") != std::string::npos);
  CHECK(html.find("other &lt;db&gt;") != std::string::npos);
  CHECK(html.find("1 changed config") != std::string::npos);
}

}  // namespace ssmtune::report
