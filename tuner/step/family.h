// The decode-step family (`step`): the kernel-family seam (tuner/family.h)
// over the step's problem, configs, plan, inputs, fp64 reference and the
// scoring of out and the updated state.
#pragma once

#include "tuner/family.h"
#include "tuner/step/problem.h"

namespace ssmtune {

class StepFamilyProblem final : public FamilyProblem {
 public:
  explicit StepFamilyProblem(const step::StepProblem& p) : p_(p) {}
  const step::StepProblem& get() const { return p_; }
  std::string key() const override { return p_.key(); }
  std::string class_key() const override { return p_.class_key(); }
  double distance(const FamilyProblem& other) const override;
  Floors floors(const jit::DeviceInfo& device) const override;

 private:
  step::StepProblem p_;
};

const step::StepProblem* as_step(const FamilyProblem& p);

const KernelFamily& step_family();

}  // namespace ssmtune
