// ProgressLine: counting, the ETA and drawing (live or plain).
#include "cli/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace ssmtune::cli {

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%ld s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, (s % 3600) / 60);
  }
  return buf;
}

ProgressLine::ProgressLine(std::ostream& out, bool tty, Clock clock, std::string label)
    : out_(out), tty_(tty), clock_(std::move(clock)), label_(std::move(label)) {}

ProgressLine ProgressLine::for_stderr(std::string label) {
  return ProgressLine(
      std::cerr, isatty(STDERR_FILENO) == 1,
      [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
      },
      std::move(label));
}

void ProgressLine::start(int planned, int to_compile, double time_limit_s) {
  planned_ = std::max(0, planned);
  to_compile_ = std::max(0, to_compile);
  time_limit_s_ = std::max(0.0, time_limit_s);
  compiled_ = timed_ = 0;
  best_ms_ = 0;
  best_config_.clear();
  start_s_ = clock_();
  first_timed_s_ = last_plain_s_ = -1;
  started_ = true;
  finished_ = false;
  draw(true);
}

void ProgressLine::replan(int planned) {
  planned_ = std::max(0, planned);
  draw(false);
}

void ProgressLine::on_compiled(int n) {
  compiled_ += std::max(0, n);
  draw(false);
}

void ProgressLine::on_timed(const std::string& config, double ms, bool usable) {
  ++timed_;
  if (first_timed_s_ < 0) first_timed_s_ = clock_();
  if (usable && std::isfinite(ms) && ms > 0 && (best_ms_ == 0 || ms < best_ms_)) {
    best_ms_ = ms;
    best_config_ = config;
  }
  draw(false);
}

void ProgressLine::finish() {
  if (!started_ || finished_) return;
  finished_ = true;  // the final text has no ETA
  draw(true);
  if (tty_) out_ << "\n";
  out_.flush();
}

std::string ProgressLine::text() const {
  const double now = clock_();
  const double elapsed = now - start_s_;
  std::string s = "[" + label_ + "]";
  if (to_compile_ > 0)
    s += " compiled " + std::to_string(std::min(compiled_, to_compile_)) + "/" +
         std::to_string(to_compile_);
  s += " timed " + std::to_string(timed_) + "/" + std::to_string(planned());
  if (best_ms_ > 0) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.4g ms", best_ms_);
    s += "  best " + best_config_ + " " + ms;
  }
  s += "  elapsed " + format_duration(elapsed);
  if (finished_ || (timed_ >= planned() && timed_ > 0)) return s;
  // The rate counts from the first finished timing: the first one carries the
  // worker's start-up and would make the ETA too long.
  const int remaining = planned() - timed_;
  std::string eta = "ETA unknown";
  if (timed_ >= kMinTimedForEta && now > first_timed_s_) {
    const double per_config = (now - first_timed_s_) / (timed_ - 1);
    double left = per_config * remaining;
    if (time_limit_s_ > 0) left = std::min(left, std::max(0.0, time_limit_s_ - elapsed));
    eta = "ETA " + format_duration(left);
  } else if (time_limit_s_ > 0) {
    eta = "ETA <= " + format_duration(std::max(0.0, time_limit_s_ - elapsed)) + " (time limit)";
  }
  return s + "  " + eta;
}

void ProgressLine::draw(bool force) {
  if (!started_ || (finished_ && !force)) return;
  const std::string s = text();
  if (tty_) {
    // Pad with spaces over what the previous, longer line left behind.
    out_ << "\r" << s;
    if (s.size() < last_width_) out_ << std::string(last_width_ - s.size(), ' ');
    last_width_ = s.size();
    out_.flush();
    return;
  }
  const double now = clock_();
  if (!force && last_plain_s_ >= 0 && now - last_plain_s_ < kPlainIntervalS) return;
  last_plain_s_ = now;
  out_ << s << "\n";
  out_.flush();
}

}  // namespace ssmtune::cli
