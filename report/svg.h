// Inline SVG building blocks for the report: escaping of every string put
// into HTML or SVG, number formatting, linear and log scales with ticks, and
// a plot frame (axes, labels, marks). Marks carry data-mark attributes so a
// test can count what each plot drew.
#pragma once

#include <string>
#include <vector>

namespace ssmtune::report {

// For element text and attribute values alike: & < > " ' become entities;
// control characters other than tab and newline are dropped.
std::string escape(const std::string& s);
// Compact: "0.1234", "1.2e-06"; non-finite as "n/a".
std::string fmt(double v, int significant = 4);

// Maps data values to pixels; log scales map log10(v).
struct Scale {
  double lo = 0, hi = 1;    // data range
  double from = 0, to = 1;  // pixel range (to < from for a y axis)
  bool log = false;
  // A range covering `values` (finite ones; positive ones on a log scale),
  // padded a little; a single value gets a range around it.
  static Scale fit(const std::vector<double>& values, bool log, double from, double to);
  double operator()(double v) const;
  std::vector<double> ticks() const;  // "nice" values inside [lo, hi]
};

// One plot: <svg data-plot=KIND ...> with a frame, ticks and axis labels.
// Marks are added as SVG element text; str() closes the element.
class Frame {
 public:
  static constexpr int kLeft = 64, kRight = 16, kTop = 26, kBottom = 44;
  // `attrs`: extra attributes for the <svg> element, already escaped
  // (e.g. data-problem="...").
  Frame(const std::string& kind, int width, int height, const std::string& title,
        const std::string& attrs = "");
  // Sets the scales from data and draws the axes.
  void axes(const std::vector<double>& xs, bool xlog, const std::string& xlabel,
            const std::vector<double>& ys, bool ylog, const std::string& ylabel);
  const Scale& x() const { return x_; }
  const Scale& y() const { return y_; }
  int width() const { return width_; }
  int height() const { return height_; }
  void add(const std::string& element) { body_ += element; }
  std::string str() const;

 private:
  int width_, height_;
  std::string head_, body_;
  Scale x_, y_;
};

// A color for t in [0, 1] along a perceptual ramp (viridis-like): "#rrggbb".
std::string ramp_color(double t);

}  // namespace ssmtune::report
