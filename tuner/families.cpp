// The registry of kernel families: one line per family.
#include "tuner/bwd/family.h"
#include "tuner/family.h"
#include "tuner/fwd/family.h"
#include "tuner/step/family.h"

namespace ssmtune {

const std::vector<const KernelFamily*>& all_families() {
  static const std::vector<const KernelFamily*> kFamilies = {
      &fwd_family(),
      &bwd_family(),
      &step_family(),
  };
  return kFamilies;
}

}  // namespace ssmtune
