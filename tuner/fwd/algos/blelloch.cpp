// The Blelloch scan: thread-serial items, then a work-efficient up/down
// sweep over the block in shared memory, one channel at a time
// (ssm/fwd_blelloch.cuh).
#include "ssm/fwd_params.cuh"
#include "tuner/fwd/algos/common.h"

namespace ssmtune {
namespace {

class Blelloch final : public FwdAlgorithm {
 public:
  ScanAlgo id() const override { return ScanAlgo::kBlelloch; }
  const char* name() const override { return "blelloch"; }
  std::string check(const FwdProblem&, const FwdConfig& c) const override {
    if (c.n_split != 1) return "blelloch takes n_split 1";
    if (c.threads <= 0 || (c.threads & (c.threads - 1)) != 0)
      return "blelloch: threads must be a power of 2";
    if (c.chunk != c.threads * c.items) return "blelloch: chunk must be threads * items";
    return {};
  }
  size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) const override {
    return scan_shared_bytes(p, c, /*blelloch=*/true);
  }
  void plan(const FwdPlanContext& x, FwdPlan& plan) const override {
    plan.launches.push_back(
        {x.add_kernel(plan, "ssm_fwd_blelloch"), {x.tiles, x.batch}, x.block, x.smem});
  }
  void space(FwdSpaceBuilder& b) const override {
    for (int threads : {128, 256})
      for (int items : {4, 8}) {
        FwdConfig c;
        c.algo = id();
        c.threads = threads;
        c.items = items;
        c.chunk = threads * items;
        c.d_step = 4;
        b.add_fp32(c);
      }
  }
  bool prunes_long_chunks() const override { return false; }
  bool saves_states() const override { return false; }
  void set_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) const override {
    // The block scans its channels one at a time, so few per block (4)
    // share the staged B/C chunk; 128 threads x 4 items: a 512-step chunk
    // (a 7-level sweep). Large dstate: halve items, then threads, until
    // the B/C tiles fit.
    c.d_step = 4;
    c.threads = 128;
    c.items = 4;
    c.chunk = c.threads * c.items;
    while (max_shared_bytes != 0 && !check_config(p, c, max_shared_bytes) &&
           (c.items > 1 || c.threads > 32)) {
      if (c.items > 1) {
        c.items /= 2;
      } else {
        c.threads /= 2;  // dstate 256: 2 x 256 x chunk floats of B/C need a short chunk
      }
      c.chunk = c.threads * c.items;
    }
  }
};

}  // namespace

const FwdAlgorithm& blelloch_algorithm() {
  static const Blelloch kAlgo;
  return kAlgo;
}

}  // namespace ssmtune
