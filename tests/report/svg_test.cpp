// Escaping, number formatting, scales and the frame's output.
#include "report/svg.h"

#include <catch2/catch.hpp>

namespace ssmtune::report {

TEST_CASE("escape makes any string safe in text and attributes", "[report]") {
  CHECK(escape("plain H200") == "plain H200");
  CHECK(escape("<script>alert(\"x\")</script> & 'co'") ==
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;");
  CHECK(escape(std::string("a\0b\x01\tc\n", 7)) == "ab\tc\n");
  CHECK(escape("&amp;") == "&amp;amp;");
}

TEST_CASE("fmt gives compact numbers", "[report]") {
  CHECK(fmt(0.12345) == "0.1235");
  CHECK(fmt(1.5e-6, 2) == "1.5e-06");
  CHECK(fmt(1.0 / 0.0) == "n/a");
}

TEST_CASE("scales: log and linear, ticks inside the range", "[report]") {
  const Scale lg = Scale::fit({1e-6, 1e-3, 0, -1}, true, 0, 100);
  CHECK(lg.lo < 1e-6);
  CHECK(lg.hi > 1e-3);
  CHECK(lg(lg.lo) == Approx(0));
  CHECK(lg(lg.hi) == Approx(100));
  CHECK(lg(1e-6) < lg(1e-3));
  const auto t = lg.ticks();
  REQUIRE(t.size() >= 2);
  for (double v : t) CHECK((v >= lg.lo && v <= lg.hi));
  const Scale narrow = Scale::fit({0.101, 0.104}, true, 0, 100);
  CHECK(narrow.ticks().size() >= 1);
  const Scale lin = Scale::fit({2, 7}, false, 300, 0);  // a y axis: pixels run upward
  CHECK(lin(2) > lin(7));
  for (double v : lin.ticks()) CHECK((v >= lin.lo && v <= lin.hi));
  const Scale one = Scale::fit({5}, false, 0, 1);
  CHECK(one.lo < 5);
  CHECK(one.hi > 5);
  const Scale none = Scale::fit({}, true, 0, 1);
  CHECK(none.lo > 0);
}

TEST_CASE("a frame is one svg element with its kind, escaped title and no URL", "[report]") {
  Frame f("scatter", 300, 200, "title <b>", "data-problem=\"p\"");
  f.axes({1, 2}, false, "x & y", {1, 10}, true, "ms");
  f.add("<circle data-mark=\"point\"/>");
  const std::string s = f.str();
  CHECK(s.rfind("<svg class=\"plot\" data-plot=\"scatter\"", 0) == 0);
  CHECK(s.find("data-problem=\"p\"") != std::string::npos);
  CHECK(s.find("title &lt;b&gt;") != std::string::npos);
  CHECK(s.find("x &amp; y") != std::string::npos);
  CHECK(s.find("http") == std::string::npos);
  CHECK(s.substr(s.size() - 6) == "</svg>");
}

TEST_CASE("ramp colors run from dark to bright", "[report]") {
  CHECK(ramp_color(0) == "#440154");
  CHECK(ramp_color(1) == "#fde725");
  CHECK(ramp_color(2) == "#fde725");
  CHECK(ramp_color(0.5).size() == 7);
}

}  // namespace ssmtune::report
