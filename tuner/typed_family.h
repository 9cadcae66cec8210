// The part of a kernel family (tuner/family.h) that only names its types:
// parsing problem and config keys, and the cast from the generic problem
// back to the family's own. A family derives from TypedFamily<its problem,
// the FamilyProblem that wraps it, its config> and writes the rest.
#pragma once

#include <memory>
#include <string>

#include "tuner/family.h"

namespace ssmtune {

// ProblemT and ConfigT: `static Result<T> from_key(const std::string&)`;
// ConfigT: `std::string key() const` (the canonical form); WrapperT: a
// FamilyProblem constructed from a ProblemT, `const ProblemT& get() const`.
template <typename ProblemT, typename WrapperT, typename ConfigT>
class TypedFamily : public KernelFamily {
 public:
  Result<std::unique_ptr<FamilyProblem>> parse_problem(const std::string& key) const override {
    SSMTUNE_ASSIGN_OR_RETURN(const ProblemT p, ProblemT::from_key(key));
    return std::unique_ptr<FamilyProblem>(new WrapperT(p));
  }
  Result<std::string> canonical_config(const std::string& config) const override {
    SSMTUNE_ASSIGN_OR_RETURN(const ConfigT c, ConfigT::from_key(config));
    return c.key();
  }

 protected:
  // The family's problem of one it parsed (the generic code passes back only those).
  static const ProblemT& get(const FamilyProblem& p) {
    return static_cast<const WrapperT&>(p).get();
  }
};

}  // namespace ssmtune
