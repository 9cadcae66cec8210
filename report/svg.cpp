// Escaping, number formatting, scales and the plot frame.
#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ssmtune::report {

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n') break;
        out += ch;
    }
  }
  return out;
}

std::string fmt(double v, int significant) {
  if (!std::isfinite(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

Scale Scale::fit(const std::vector<double>& values, bool log, double from, double to) {
  Scale s;
  s.from = from;
  s.to = to;
  s.log = log;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) {
    lo = log ? 1e-3 : 0;
    hi = 1;
  }
  if (log) {
    double a = std::log10(lo), b = std::log10(hi);
    if (b - a < 0.3) {
      const double mid = (a + b) / 2;
      a = mid - 0.15;
      b = mid + 0.15;
    }
    const double pad = (b - a) * 0.06;
    s.lo = std::pow(10, a - pad);
    s.hi = std::pow(10, b + pad);
  } else {
    if (hi - lo <= 0) {
      const double d = lo == 0 ? 1 : std::abs(lo) * 0.1;
      lo -= d;
      hi += d;
    }
    const double pad = (hi - lo) * 0.06;
    s.lo = lo - pad;
    s.hi = hi + pad;
  }
  return s;
}

double Scale::operator()(double v) const {
  double t;
  if (log) {
    v = std::max(v, lo);
    t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  } else {
    t = (v - lo) / (hi - lo);
  }
  return from + t * (to - from);
}

std::vector<double> Scale::ticks() const {
  std::vector<double> out;
  if (log) {
    const int a = static_cast<int>(std::ceil(std::log10(lo) - 1e-9));
    const int b = static_cast<int>(std::floor(std::log10(hi) + 1e-9));
    const int step = std::max(1, (b - a + 1) / 6 + ((b - a + 1) % 6 != 0 ? 1 : 0));
    for (int e = a; e <= b; e += step) out.push_back(std::pow(10, e));
    if (out.size() < 2) {  // less than a decade: 1-2-5 steps
      out.clear();
      for (int e = a - 1; e <= b; ++e)
        for (double m : {1.0, 2.0, 5.0}) {
          const double v = m * std::pow(10, e);
          if (v >= lo && v <= hi) out.push_back(v);
        }
    }
    return out;
  }
  const double span = hi - lo;
  const double raw = span / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

Frame::Frame(const std::string& kind, int width, int height, const std::string& title,
             const std::string& attrs)
    : width_(width), height_(height) {
  // No xmlns: inline SVG in HTML needs none, and the page holds no URL at all.
  head_ = "<svg class=\"plot\" data-plot=\"" + escape(kind) + "\" width=\"" +
          std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
          std::to_string(width) + " " + std::to_string(height) + "\"" +
          (attrs.empty() ? "" : " " + attrs) + ">";
  head_ += "<text class=\"title\" x=\"" + std::to_string(kLeft) + "\" y=\"16\">" + escape(title) +
           "</text>";
}

void Frame::axes(const std::vector<double>& xs, bool xlog, const std::string& xlabel,
                 const std::vector<double>& ys, bool ylog, const std::string& ylabel) {
  const double l = kLeft, r = width_ - kRight, t = kTop, b = height_ - kBottom;
  x_ = Scale::fit(xs, xlog, l, r);
  y_ = Scale::fit(ys, ylog, b, t);
  std::string s = "<rect class=\"frame\" x=\"" + fmt(l) + "\" y=\"" + fmt(t) + "\" width=\"" +
                  fmt(r - l) + "\" height=\"" + fmt(b - t) + "\"/>";
  for (double v : x_.ticks()) {
    const double px = x_(v);
    s += "<line class=\"grid\" x1=\"" + fmt(px) + "\" x2=\"" + fmt(px) + "\" y1=\"" + fmt(t) +
         "\" y2=\"" + fmt(b) + "\"/><text class=\"tick\" text-anchor=\"middle\" x=\"" + fmt(px) +
         "\" y=\"" + fmt(b + 14) + "\">" + fmt(v, 3) + "</text>";
  }
  for (double v : y_.ticks()) {
    const double py = y_(v);
    s += "<line class=\"grid\" x1=\"" + fmt(l) + "\" x2=\"" + fmt(r) + "\" y1=\"" + fmt(py) +
         "\" y2=\"" + fmt(py) + "\"/><text class=\"tick\" text-anchor=\"end\" x=\"" + fmt(l - 4) +
         "\" y=\"" + fmt(py + 4) + "\">" + fmt(v, 3) + "</text>";
  }
  s += "<text class=\"label\" text-anchor=\"middle\" x=\"" + fmt((l + r) / 2) + "\" y=\"" +
       fmt(height_ - 8) + "\">" + escape(xlabel) + "</text>";
  s += "<text class=\"label\" text-anchor=\"middle\" transform=\"translate(14," + fmt((t + b) / 2) +
       ") rotate(-90)\">" + escape(ylabel) + "</text>";
  head_ += s;
}

std::string Frame::str() const { return head_ + body_ + "</svg>"; }

std::string ramp_color(double t) {
  // Viridis at 0, 0.25, 0.5, 0.75, 1.
  static const int kStops[5][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x",
                static_cast<int>(kStops[i][0] + f * (kStops[i + 1][0] - kStops[i][0])),
                static_cast<int>(kStops[i][1] + f * (kStops[i + 1][1] - kStops[i][1])),
                static_cast<int>(kStops[i][2] + f * (kStops[i + 1][2] - kStops[i][2])));
  return buf;
}

}  // namespace ssmtune::report
