// ProgressLine with a fake clock and a string stream: counts, best, the ETA
// (unknown until the rate is measured, capped by the time limit), never more
// done than planned, live redraws on a terminal, rate-limited plain lines.
#include "cli/progress_line.h"

#include <catch2/catch.hpp>

#include <sstream>

namespace ssmtune::cli {
namespace {

struct Fake {
  double t = 100;
  std::ostringstream out;
  ProgressLine line(bool tty) {
    return ProgressLine(
        out, tty, [this] { return t; }, "tune p");
  }
};

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("format_duration", "[cli][progress]") {
  CHECK(format_duration(0) == "0 s");
  CHECK(format_duration(42.4) == "42 s");
  CHECK(format_duration(185) == "3 min 05 s");
  CHECK(format_duration(3720) == "1 h 02 min");
  CHECK(format_duration(-5) == "0 s");
}

TEST_CASE("progress: ETA unknown until measured, then from the rate", "[cli][progress]") {
  Fake f;
  ProgressLine p = f.line(false);
  p.start(10, 4);
  CHECK(p.text() == "[tune p] compiled 0/4 timed 0/10  elapsed 0 s  ETA unknown");
  f.t += 3;
  p.on_compiled(4);
  CHECK(p.text().find("compiled 4/4 timed 0/10") != std::string::npos);
  f.t += 7;  // the first timing carries the worker's start-up
  p.on_timed("a", 0.5, true);
  f.t += 2;
  p.on_timed("b", 0.25, true);
  CHECK(p.text().find("ETA unknown") != std::string::npos);
  f.t += 2;
  p.on_timed("c", 0.75, false);
  // 2 s per config after the first, 7 left: 14 s.
  CHECK(p.text() == "[tune p] compiled 4/4 timed 3/10  best b 0.25 ms  elapsed 14 s  ETA 14 s");
  p.on_timed("d", 0.1, false);  // not usable: not the best
  CHECK(p.text().find("best b 0.25 ms") != std::string::npos);
}

TEST_CASE("progress: never more done than planned; the time limit caps the ETA",
          "[cli][progress]") {
  Fake f;
  ProgressLine p = f.line(false);
  p.start(2, 0, 30);
  CHECK(p.text().find("ETA <= 30 s (time limit)") != std::string::npos);
  for (int i = 0; i < 5; ++i) {
    f.t += 1;
    p.on_timed("c" + std::to_string(i), 1.0 + i, true);
  }
  CHECK(p.done() == 5);
  CHECK(p.planned() == 5);
  CHECK(p.text().find("timed 5/5") != std::string::npos);
  CHECK(p.text().find("ETA") == std::string::npos);  // done: nothing to estimate
  p.replan(100);
  f.t += 1;
  p.on_timed("x", 9, true);
  // 1 s per config, 94 left, but only 30 - 6 = 24 s of the limit remain.
  CHECK(p.text().find("timed 6/100") != std::string::npos);
  CHECK(p.text().find("ETA 24 s") != std::string::npos);
}

TEST_CASE("progress: a terminal gets one line redrawn in place", "[cli][progress]") {
  Fake f;
  ProgressLine p = f.line(true);
  p.start(3);
  p.on_timed("a-long-config-name", 1, true);
  p.on_timed("b", 2, true);
  p.finish();
  const std::string s = f.out.str();
  CHECK(count(s, "\r") == 4);  // start, two timings, finish
  CHECK(count(s, "\n") == 1);  // only the finish ends the line
  CHECK(s.back() == '\n');
  p.finish();  // twice: nothing more
  CHECK(f.out.str() == s);
}

TEST_CASE("progress: plain lines at most every few seconds", "[cli][progress]") {
  Fake f;
  ProgressLine p = f.line(false);
  p.start(100);
  for (int i = 0; i < 20; ++i) {
    f.t += 1;
    p.on_timed("c", 1, true);
  }
  p.finish();
  const std::string s = f.out.str();
  CHECK(count(s, "\r") == 0);
  // start at 0 s, then every 5 s over 20 s (5, 10, 15, 20), then the final line.
  CHECK(count(s, "\n") == 6);
  CHECK(s.find("timed 20/100") != std::string::npos);
  // The final line has no ETA.
  const std::string last = s.substr(s.rfind('\n', s.size() - 2) + 1);
  CHECK(last.find("ETA") == std::string::npos);
}

}  // namespace ssmtune::cli
