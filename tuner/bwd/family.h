// The backward family (`bwd`): the kernel-family seam (tuner/family.h) over
// the backward's problem, configs, plans, inputs (the forward's plus the
// saved output, dout and dlast), fp64 references and per-gradient scoring.
#pragma once

#include "tuner/bwd/problem.h"
#include "tuner/family.h"

namespace ssmtune {

class BwdFamilyProblem final : public FamilyProblem {
 public:
  explicit BwdFamilyProblem(const bwd::BwdProblem& p) : p_(p) {}
  const bwd::BwdProblem& get() const { return p_; }
  std::string key() const override { return p_.key(); }
  std::string class_key() const override;
  double distance(const FamilyProblem& other) const override;
  Floors floors(const jit::DeviceInfo& device) const override;

 private:
  bwd::BwdProblem p_;
};

const bwd::BwdProblem* as_bwd(const FamilyProblem& p);

const KernelFamily& bwd_family();

}  // namespace ssmtune
