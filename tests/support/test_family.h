// Test-only kernels: a small linear-recurrence family and a kernel that
// faults on purpose, with templates under tests/templates/ (never embedded
// in the production binary), for the JIT layer's tests.
#pragma once

#include <string>
#include <vector>

#include "jit/program_builder.h"
#include "jit/template_sources.h"

namespace ssmtune::testing {

// The templates of tests/templates/.
const jit::TemplateSources& test_sources();

// linear_recurrence over T in {float, double} and kItems in `items`.
std::vector<jit::Instantiation> linear_recurrence_family(const std::vector<int>& items = {1, 2, 4,
                                                                                          8});

}  // namespace ssmtune::testing
