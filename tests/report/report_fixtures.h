// A seeded tuning database for the report's tests, written through the
// TuningDb API: two GPUs (one with a name full of HTML), three problems,
// configs over four algorithms and a K x D grid, the heuristic default,
// pruned / failed / inaccurate rows, stale rows and best entries.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cache/db_fixtures.h"
#include "cache/tuning_db.h"
#include "tuner/fwd/heuristics.h"

namespace ssmtune::testing {

// What seed_report_db wrote, for the tests' expectations.
struct SeededReport {
  std::vector<std::string> problems;
  int timed_current = 0;  // ok or inaccurate, current, per (device, problem) summed
  int stale_measurements = 0;
  int best_entries = 0;
};

inline DeviceRecord hostile_device() {
  return {"GPU-99999999-1111-2222-3333-444444444444",
          "H100 <script>alert(\"x\")</script> & 'co'",
          9,
          0,
          114,
          13000,
          "13.0"};
}

// (algo, chunk, d) of the grid as a config legal for every problem here
// (dstate 16; the database refuses configs illegal for their problem). The
// algorithms that split a channel's states run d * 2 channels of 16 threads.
inline FwdConfig legal_config(ScanAlgo algo, int chunk, int d) {
  FwdConfig c;
  c.algo = algo;
  c.chunk = chunk;
  c.d_step = d;
  c.n_split = 1;
  switch (algo) {
    case ScanAlgo::kSequential:
    case ScanAlgo::kPipelined:
    case ScanAlgo::kSplit:
    case ScanAlgo::kMultiPass:
    case ScanAlgo::kLookback:
      c.n_split = 16;
      c.d_step = 2 * d;
      c.threads = c.d_step * c.n_split;
      c.items = algo == ScanAlgo::kPipelined || algo == ScanAlgo::kSplit ? 2 : 1;
      c.segments = algo == ScanAlgo::kSplit ? 2 : 1;
      break;
    case ScanAlgo::kWarpScan:
      c.threads = 32 * d;
      c.items = chunk / 32;
      break;
    case ScanAlgo::kBlelloch:
      c.threads = 32;
      c.items = chunk / 32;
      break;
    case ScanAlgo::kBlockScan:
      c.d_step = 1;
      c.threads = 32;
      c.items = chunk / 32;
      break;
  }
  return c;
}

// `stale_only`: every row made under driver 12.4 (stale against sample_versions()).
inline SeededReport seed_report_db(cache::TuningDb& db, uint64_t seed, bool stale_only = false) {
  SeededReport out;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(0.9, 1.3);
  std::uniform_real_distribution<double> err_exp(-7.5, -4.0);
  const DeviceRecord devices[2] = {sample_device(0), hostile_device()};
  for (const auto& d : devices) REQUIRE(db.upsert_device(d));
  const std::string problems[3] = {problem_key(0), problem_key(1, DType::kBF16), problem_key(2)};
  const ScanAlgo algos[4] = {ScanAlgo::kSequential, ScanAlgo::kWarpScan, ScanAlgo::kBlelloch,
                             ScanAlgo::kPipelined};
  for (int di = 0; di < 2; ++di) {
    const auto& dev = devices[di];
    for (int pi = 0; pi < 3; ++pi) {
      if (di == 1 && pi == 2) continue;  // the second GPU tuned two problems
      const std::string& pk = problems[pi];
      if (di == 0) out.problems.push_back(pk);
      const FwdProblem p = *FwdProblem::from_key(pk);
      const std::string def = heuristic_default(p, dev.sm_count, 232448).config.key();
      int64_t t = 1700000000 + 10000 * (3 * di + pi);
      const int driver = stale_only ? 12040 : 13000;
      std::vector<Measurement> ms;
      auto add = [&](const std::string& config, double ms_time, double err) {
        Measurement m = sample_measurement(dev.uuid, pk, config, ms_time, err, t);
        m.driver_version = driver;
        t += 3 + static_cast<int64_t>(rng() % 5);
        ms.push_back(m);
        return &ms.back();
      };
      // Pruned and failed first, as the tuner records them.
      for (int i = 0; i < 4; ++i) {
        FwdConfig c;
        c.algo = ScanAlgo::kBlelloch;
        c.chunk = 1024;
        c.d_step = 8 << i;
        auto* m = add(c.key(), 0, 0);
        m->status = MeasureStatus::kPruned;
        m->detail = "shared memory " + std::to_string(70000 + 1000 * i) + " B > 49152 B";
      }
      {
        FwdConfig c = legal_config(ScanAlgo::kLookback, 64, 4);
        auto* m = add(c.key(), 0, 0);
        m->status = MeasureStatus::kCompileFailed;
        m->detail = "error: identifier \"x\" is undefined\nmore log";
        FwdConfig f = c;
        f.chunk = 128;
        m = add(f.key(), 0, 0);
        m->status = MeasureStatus::kFaulted;
        m->detail = "illegal address";
      }
      add(def, 0.5 * (1 + pi), 2e-6);  // the default, measured first
      for (ScanAlgo a : algos)
        for (int k : {32, 64, 128, 256})
          for (int dd : {1, 2, 4, 8}) {
            const FwdConfig c = legal_config(a, k, dd);
            if (c.key() == def) continue;
            const double base = 0.2 * (1 + pi) * (1 + 0.3 * static_cast<int>(a)) *
                                (1 + std::abs(std::log2(k / 64.0)) * 0.2) *
                                (1 + std::abs(std::log2(dd / 4.0)) * 0.15);
            auto* m = add(c.key(), base * jitter(rng), std::pow(10, err_exp(rng)));
            if (m->rel_l2 > m->error_budget) m->verdict = "outside";
            if (k == 256 && dd == 8 && a == ScanAlgo::kBlelloch) {
              m->status = MeasureStatus::kInaccurate;
              m->rel_l2 = 0.3;
              m->verdict = "defect";
            }
          }
      // A few stale rows from an older driver (only when the rest is current).
      if (!stale_only)
        for (int i = 0; i < 3; ++i) {
          const FwdConfig c = legal_config(ScanAlgo::kSequential, 32 << i, 4);
          auto* m = add(c.key(), 0.15 * (1 + pi), 1e-6);
          m->driver_version = 12040;
          m->timestamp -= 5000000;
          ++out.stale_measurements;
        }
      else
        out.stale_measurements += static_cast<int>(ms.size());
      for (const auto& m : ms)
        if (!stale_only && m.driver_version == 13000 &&
            (m.status == MeasureStatus::kOk || m.status == MeasureStatus::kInaccurate))
          ++out.timed_current;
      REQUIRE(db.add_measurements(ms));
      // Best: the fastest eligible current measurement.
      const Measurement* best = nullptr;
      for (const auto& m : ms)
        if (m.status == MeasureStatus::kOk && m.verdict == "inside" && m.driver_version == driver &&
            (!best || m.median_ms < best->median_ms))
          best = &m;
      REQUIRE(best != nullptr);
      BestEntry b;
      b.device_uuid = dev.uuid;
      b.problem_key = pk;
      b.config_key = best->config_key;
      b.median_ms = best->median_ms;
      b.spread_ms = best->spread_ms;
      b.rel_l2 = best->rel_l2;
      b.template_hash = best->template_hash;
      // The second GPU's first problem: a stale best entry (tuned under 12.4).
      b.driver_version = (di == 1 && pi == 0) ? 12040 : driver;
      b.nvrtc_version = "13.0";
      b.timestamp = t;
      b.rule = "fastest inside budget";
      REQUIRE(db.set_best(b));
      ++out.best_entries;
    }
  }
  return out;
}

}  // namespace ssmtune::testing
