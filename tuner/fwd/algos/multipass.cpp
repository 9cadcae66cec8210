// The multi-pass scan: chunks across blocks; reduce each chunk, scan the
// chunk carries, rescan each chunk from its carry (ssm/fwd_multipass.cuh).
#include "tuner/fwd/algos/common.h"

namespace ssmtune {
namespace {

// The carry scan's block: one thread per (batch, channel, state) chain.
constexpr int kScanThreads = 256;

class MultiPass final : public FwdAlgorithm {
 public:
  ScanAlgo id() const override { return ScanAlgo::kMultiPass; }
  const char* name() const override { return "multipass"; }
  std::string check(const FwdProblem& p, const FwdConfig& c) const override {
    std::string why = staged_layout_rules(p, c);
    if (!why.empty()) return why;
    if (c.items != 1) return "items must be 1 (one chunk per block)";
    if ((p.seqlen + c.chunk - 1) / c.chunk > 65535) return "over 65535 chunks (grid z)";
    return {};
  }
  size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) const override {
    return staged_shared_bytes(p, c);
  }
  void plan(const FwdPlanContext& x, FwdPlan& plan) const override {
    const unsigned chunks = static_cast<unsigned>(plan.n_chunks);
    const int reduce = x.add_kernel(plan, "ssm_fwd_multipass_reduce");
    const int scan = x.add_kernel(plan, "ssm_fwd_multipass_scan");
    const int output = x.add_kernel(plan, "ssm_fwd_multipass_output");
    const int64_t chains = x.p.batch * x.p.dim * x.p.dstate;
    plan.launches.push_back({reduce, {x.tiles, x.batch, chunks}, x.block, x.smem});
    plan.launches.push_back({scan,
                             {static_cast<unsigned>((chains + kScanThreads - 1) / kScanThreads)},
                             jit::Dim3{static_cast<unsigned>(kScanThreads)},
                             0});
    plan.launches.push_back({output, {x.tiles, x.batch, chunks}, x.block, x.smem});
    plan.carries_bytes = size_t(2) * chains * plan.n_chunks * x.acc_bytes;
  }
  int block_threads(const FwdProblem&, const FwdConfig& c,
                    const std::string& name_expression) const override {
    return name_expression.find("multipass_scan") != std::string::npos ? kScanThreads : c.threads;
  }
  void space(FwdSpaceBuilder& b) const override {
    add_staged_space(b, id(), {128, 256}, {1, 2, 4, 8}, {1});
  }
  void set_default(const FwdProblem& p, size_t max_shared_bytes, FwdConfig& c) const override {
    set_multichunk_default(p, max_shared_bytes, c);
  }
};

}  // namespace

const FwdAlgorithm& multipass_algorithm() {
  static const MultiPass kAlgo;
  return kAlgo;
}

}  // namespace ssmtune
