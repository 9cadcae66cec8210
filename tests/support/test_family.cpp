// Test-only kernels.
#include "support/test_family.h"

#include <cstdio>
#include <cstdlib>

namespace ssmtune::testing {

const jit::TemplateSources& test_sources() {
  static const jit::TemplateSources kSources = [] {
    auto s =
        jit::TemplateSources::from_directory(std::string(SSMTUNE_SOURCE_DIR) + "/tests/templates");
    if (!s) {
      std::fprintf(stderr, "test templates: %s\n", s.status().to_string().c_str());
      std::abort();
    }
    return *s;
  }();
  return kSources;
}

std::vector<jit::Instantiation> linear_recurrence_family(const std::vector<int>& items) {
  std::vector<jit::Instantiation> out;
  for (const char* t : {"float", "double"})
    for (int k : items)
      out.push_back(
          {"testing/linear_recurrence.cuh", std::string("ssmtune_kernels::linear_recurrence<") + t +
                                                ", " + std::to_string(k) + ">"});
  return out;
}

}  // namespace ssmtune::testing
