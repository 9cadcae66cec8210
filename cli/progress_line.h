// The progress a person follows while `ssmtune tune` runs: configs compiled
// and timed of planned, the best so far, elapsed time and an ETA from the
// measured rate. On a terminal one line redrawn in place (\r); otherwise
// plain lines, at most one every few seconds. Not thread-safe.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ssmtune::cli {

class ProgressLine {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  // Plain-line mode prints at most once per this many seconds (and always on finish).
  static constexpr double kPlainIntervalS = 5.0;
  // Timed configs needed before the rate is trusted for an ETA.
  static constexpr int kMinTimedForEta = 3;

  // `tty`: redraw one line in place; else plain lines. `label` starts each
  // line, e.g. "tune b8.d1536.l2048.n16.g1.bf16.vB.vC".
  ProgressLine(std::ostream& out, bool tty, Clock clock, std::string label);
  // To stderr, live when stderr is a terminal (isatty), with the steady clock.
  static ProgressLine for_stderr(std::string label);

  // Starts the count: `planned` timings (an estimate for halving: never
  // shown below what is done), optionally `to_compile` compilations and a
  // time limit in seconds (0: none) that caps the ETA.
  void start(int planned, int to_compile = 0, double time_limit_s = 0);
  // A new estimate of the timings planned (halving re-plans its rungs).
  void replan(int planned);
  // `n` more configs compiled (or dropped by the compiler).
  void on_compiled(int n);
  // One config timed; `usable` when it counts for the best (ok, inside budget).
  void on_timed(const std::string& config, double ms, bool usable);
  // The final line (and, on a terminal, the newline that ends it).
  void finish();

  // The current text without \r or padding (tests, and a final summary).
  std::string text() const;
  int done() const { return timed_; }
  int planned() const { return planned_ > timed_ ? planned_ : timed_; }

 private:
  void draw(bool force);

  std::ostream& out_;
  bool tty_;
  Clock clock_;
  std::string label_;
  int planned_ = 0, to_compile_ = 0, compiled_ = 0, timed_ = 0;
  double time_limit_s_ = 0;
  double start_s_ = 0;
  double first_timed_s_ = -1;  // when the first timing finished (the rate runs from there)
  double last_plain_s_ = -1;
  size_t last_width_ = 0;
  double best_ms_ = 0;
  std::string best_config_;
  bool started_ = false, finished_ = false;
};

// "42 s", "3 min 05 s", "1 h 02 min".
std::string format_duration(double seconds);

}  // namespace ssmtune::cli
