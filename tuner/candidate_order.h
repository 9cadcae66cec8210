// The order a tuning session meets (and compiles) its candidates in: the
// family's first-look order (the default first, then the algorithms in
// turn), with what the store knows laid over it: configs that ran well on
// this problem before, then on the nearest tuned problem of its class, come
// right after the default, fastest first; configs that failed there
// (faulted, inaccurate, did not compile) go last.
#pragma once

#include <string>
#include <vector>

#include "ssmtune/status.h"
#include "tuner/family.h"
#include "tuner/records.h"
#include "tuner/store.h"

namespace ssmtune {

// `order`: the family's first-look order; `first`: the default; `hints`:
// measurements in priority order (this problem's, then the nearest
// problem's). Pure.
std::vector<std::string> rank_candidates(const std::vector<std::string>& order,
                                         const std::string& first,
                                         const std::vector<std::vector<Measurement>>& hints);

// The measurements on `device_uuid` of the nearest other problem of
// `problem`'s class (same family, finite distance) with at least one usable
// measurement; empty when there is none.
Result<std::vector<Measurement>> nearest_problem_rows(TuningStore& store,
                                                      const KernelFamily& family,
                                                      const FamilyProblem& problem,
                                                      const std::string& device_uuid);

}  // namespace ssmtune
