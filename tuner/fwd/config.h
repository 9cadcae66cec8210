// One point of the forward kernel space: the template arguments of a
// selective-scan kernel, beyond the problem's own flags. A value type with a
// stable text key (the tuning database stores it) and the one function that
// turns (config, problem) into the kernel's NVRTC name expression.
#pragma once

#include <string>

#include "ssmtune/status.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

// Scan algorithms; each is its own kernel template and has one descriptor
// (tuner/fwd/algorithms.h: name, legality, shared memory, plan, space,
// default). kAllScanAlgos lists them in the order listings show them.
enum class ScanAlgo {
  kSequential,  // each thread runs the recurrence along time for its (d, n) chains
  kWarpScan,    // thread-serial items, then a Kogge-Stone shuffle scan over a warp
  kBlelloch,    // thread-serial items, then a work-efficient up/down sweep in shared memory
  kMultiPass,   // chunks across blocks: reduce, scan the chunk carries, rescan (3 launches)
  kLookback,    // chunks across blocks, single pass with decoupled look-back
  kPipelined,   // sequential, with producer warps staging chunks into a ring of
                // shared-memory stages (cp.async) while the compute warps run
  kSplit,       // pipelined over sequence segments across blocks: segment states,
                // a scan of them, the segments again with outputs (3 launches)
  kBlockScan,   // one channel a block: thread-serial items, a shuffle scan per warp, the
                // warps' totals through shared memory; B/C read by each lane, not staged
};
const char* to_string(ScanAlgo a);
Result<ScanAlgo> parse_scan_algo(const std::string& s);
inline constexpr ScanAlgo kAllScanAlgos[] = {
    ScanAlgo::kSequential, ScanAlgo::kWarpScan,  ScanAlgo::kBlelloch, ScanAlgo::kMultiPass,
    ScanAlgo::kLookback,   ScanAlgo::kPipelined, ScanAlgo::kSplit,    ScanAlgo::kBlockScan};

enum class AccType { kF32, kF64 };  // accumulation / state dtype
const char* to_string(AccType a);   // "fp32", "fp64"
Result<AccType> parse_acc_type(const std::string& s);

// How exp(delta * A) is computed.
enum class ExpMode {
  kAccurate,  // expf / exp: full precision (libdevice)
  kFast,      // ex2.approx on the MUFU unit, A pre-scaled by log2(e)
  kPoly,      // a share of the exps by a polynomial on the FMA pipe, the rest ex2.approx
};
const char* to_string(ExpMode e);
Result<ExpMode> parse_exp_mode(const std::string& s);

struct FwdConfig {
  ScanAlgo algo = ScanAlgo::kSequential;
  int chunk = 64;  // K: timesteps per chunk staged in shared memory
  int d_step = 8;  // channels per block; B/C tiles are shared across them
  AccType acc = AccType::kF32;
  int threads = 128;  // threads per block (pipelined: compute threads; the producer
                      // warps come on top)
  int items = 8;      // timesteps per thread before any cross-thread step (scan algos);
                      // sequential: chunks in flight (2: the next chunk's reads are
                      // issued before the current chunk runs); pipelined: stages in
                      // the shared-memory ring
  int n_split = 1;    // sequential: threads sharing one channel's dstate states
  ExpMode exp_mode = ExpMode::kFast;
  int poly_share = 0;  // kPoly: of every 8 states, how many use the polynomial (1..7)
  int segments = 1;    // split: sequence segments across blocks (2..65535); else 1

  // "seq.K64.D8.fp32.t128.i8.s1.fast" (poly share appended for kPoly; a
  // ninth field S<segments> for split).
  std::string key() const;
  static Result<FwdConfig> from_key(const std::string& key);
};

bool operator==(const FwdConfig& a, const FwdConfig& b);

}  // namespace ssmtune
