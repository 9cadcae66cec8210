// The report in a real browser: a database seeded through the TuningDb API
// (two GPUs, three problems, stale, pruned and failed rows) goes through
// `ssmtune report`; headless Chromium loads the file, its DOM is searched
// for each plot's marks, its network log for any request the page made,
// and a screenshot lands in the build folder. Exits 77 (skipped) only when
// no Chromium is installed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <map>

#include "report/report_fixtures.h"
#include "support/run_command.h"

namespace {

std::string g_chromium;
const std::string kOut = std::string(SSMTUNE_BINARY_DIR) + "/report_browser";

std::string find_chromium() {
  if (const char* env = std::getenv("SSMTUNE_CHROMIUM")) return env;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    auto r = ssmtune::testing::run_command(std::string("command -v ") + name, false);
    if (r.exit_code == 0 && !r.out.empty()) return r.out.substr(0, r.out.find('\n'));
  }
  return "";
}

// Headless Chromium on `page` with no profile, extensions or sync; `what`:
// "--dump-dom" or "--screenshot=FILE --window-size=W,H".
ssmtune::testing::CommandResult chromium(const std::string& page, const std::string& what,
                                         const std::string& net_log) {
  ssmtune::testing::TempDir profile;
  const std::string cmd =
      "timeout 120 " + g_chromium +
      " --headless=new --no-sandbox --disable-gpu --disable-background-networking"
      " --disable-component-update --disable-sync --no-first-run --disable-extensions"
      " --hide-scrollbars --user-data-dir=" +
      profile.path() + " --log-net-log=" + net_log + " " + what + " file://" + page +
      " 2>/dev/null";
  return ssmtune::testing::run_command(cmd, false);
}

// URLs of requests a page made (its initiator is an origin, "null" for a
// file:// page); the browser's own background requests have none.
std::vector<std::string> page_requests(const std::string& net_log) {
  auto j = nlohmann::json::parse(ssmtune::testing::read_file(net_log), nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  std::map<int, std::string> types;
  for (const auto& [name, id] : j["constants"]["logEventTypes"].items()) types[id] = name;
  std::vector<std::string> out;
  for (const auto& e : j["events"]) {
    if (!e.contains("params") || !e["params"].contains("url")) continue;
    const auto& p = e["params"];
    const std::string url = p["url"].get<std::string>();
    if (url.rfind("file://", 0) == 0) continue;
    if (p.value("initiator", "not an origin") == "not an origin") continue;
    out.push_back(types[e["type"].get<int>()] + " " + url);
  }
  return out;
}

struct Plot {
  std::string kind;
  int marks = 0;
};

// Every <svg> element of the DOM with its data-plot kind and data-mark count.
std::vector<Plot> plots(const std::string& dom) {
  std::vector<Plot> out;
  for (size_t i = dom.find("<svg"); i != std::string::npos; i = dom.find("<svg", i + 4)) {
    const size_t end = dom.find("</svg>", i);
    REQUIRE(end != std::string::npos);
    const std::string svg = dom.substr(i, end - i);
    Plot p;
    const size_t k = svg.find("data-plot=\"");
    if (k != std::string::npos) p.kind = svg.substr(k + 11, svg.find('"', k + 11) - k - 11);
    for (size_t m = svg.find("data-mark="); m != std::string::npos;
         m = svg.find("data-mark=", m + 1))
      ++p.marks;
    out.push_back(p);
  }
  return out;
}

}  // namespace

TEST_CASE("the report renders in headless Chromium with every plot's marks and no request",
          "[report][browser]") {
  std::filesystem::create_directories(kOut);
  const std::string db_path = kOut + "/seeded.db", page = kOut + "/report.html";
  std::filesystem::remove(db_path);
  {
    auto db = ssmtune::cache::TuningDb::open(db_path, ssmtune::cache::OpenMode::kReadWrite);
    REQUIRE(db);
    const uint64_t seed = 20261203;
    INFO("seed " << seed);
    ssmtune::testing::seed_report_db(*db, seed);
  }
  auto r = ssmtune::testing::run_command(
      std::string(SSMTUNE_BINARY) + " report --db " + db_path + " -o " + page +
      " --driver 13.0 --nvrtc 13.0 --template-hash 0123456789abcdef0123456789abcdef");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const std::string html = ssmtune::testing::read_file(page);
  CHECK(html.find("http:") == std::string::npos);
  CHECK(html.find("https:") == std::string::npos);

  const std::string net_log = kOut + "/netlog.json";
  auto dom = chromium(page, "--dump-dom", net_log);
  REQUIRE(dom.exit_code == 0);
  REQUIRE(dom.out.find("ssmtune tuning report") != std::string::npos);
  const auto ps = plots(dom.out);
  std::map<std::string, int> kinds;
  for (const auto& p : ps) {
    INFO("plot " << p.kind);
    CHECK(p.marks > 0);
    ++kinds[p.kind];
  }
  CHECK(kinds["scatter"] == 5);
  CHECK(kinds["curve"] == 5);
  CHECK(kinds["speedup"] == 2);
  CHECK(kinds["heatmap"] == 20);
  CHECK(ps.size() == 32);
  // The hostile device name arrived as text, not as an element.
  CHECK(dom.out.find("<script") == std::string::npos);
  CHECK(dom.out.find("H100 &lt;script&gt;") != std::string::npos);
  const auto requests = page_requests(net_log);
  for (const auto& q : requests) INFO(q);
  CHECK(requests.empty());

  // The check above can see a request: a page that makes two is caught.
  const std::string control = kOut + "/control.html";
  ssmtune::testing::write_file(control,
                               "<!DOCTYPE html><img src=\"http://127.0.0.1:9/x.png\"><svg><image "
                               "href=\"http://127.0.0.1:9/y.png\"/></svg>");
  REQUIRE(chromium(control, "--dump-dom", kOut + "/control_netlog.json").exit_code == 0);
  CHECK(page_requests(kOut + "/control_netlog.json").size() >= 2);

  const std::string png = kOut + "/report.png";
  std::filesystem::remove(png);
  auto shot = chromium(page, "--screenshot=" + png + " --window-size=1400,3000", net_log + ".2");
  REQUIRE(shot.exit_code == 0);
  REQUIRE(std::filesystem::exists(png));
  CHECK(std::filesystem::file_size(png) > 20000);
  std::printf("screenshot: %s\n", png.c_str());
}

TEST_CASE("an empty database's report says so in the browser", "[report][browser]") {
  std::filesystem::create_directories(kOut);
  const std::string db_path = kOut + "/empty.db", page = kOut + "/empty.html";
  std::filesystem::remove(db_path);
  REQUIRE(ssmtune::cache::TuningDb::open(db_path, ssmtune::cache::OpenMode::kReadWrite));
  auto r = ssmtune::testing::run_command(std::string(SSMTUNE_BINARY) + " report --db " + db_path +
                                         " -o " + page + " --driver any");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto dom = chromium(page, "--dump-dom", kOut + "/empty_netlog.json");
  REQUIRE(dom.exit_code == 0);
  CHECK(dom.out.find("data-notice=\"empty\"") != std::string::npos);
  CHECK(plots(dom.out).empty());
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0) return Catch::Session().run(argc, argv);
  g_chromium = find_chromium();
  if (g_chromium.empty()) {
    std::printf("SKIPPED: no chromium (apt-get install chromium; or set SSMTUNE_CHROMIUM)\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
