// The forward family (`fwd`): the first implementation of the kernel-family
// seam (tuner/family.h) over the forward's problem, configs, search space,
// heuristics, plans, host inputs, fp64 references and scoring.
#pragma once

#include "tuner/family.h"
#include "tuner/fwd/config.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

// The forward problem behind the seam's interface.
class FwdFamilyProblem final : public FamilyProblem {
 public:
  explicit FwdFamilyProblem(const FwdProblem& p) : p_(p) {}
  const FwdProblem& get() const { return p_; }
  std::string key() const override { return p_.key(); }
  std::string class_key() const override;
  double distance(const FamilyProblem& other) const override;
  Floors floors(const jit::DeviceInfo& device) const override;

 private:
  FwdProblem p_;
};

// The forward problem of a family problem that must be one (the caller
// asked the forward family); nullptr otherwise.
const FwdProblem* as_fwd(const FamilyProblem& p);

// Log-space distance over batch, dim, seqlen and dstate.
double fwd_problem_distance(const FwdProblem& a, const FwdProblem& b);

const KernelFamily& fwd_family();

}  // namespace ssmtune
