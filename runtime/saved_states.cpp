// The saved states' interval rule and buffer checks.
#include "runtime/saved_states.h"

#include <cstdint>

namespace ssmtune {

bool valid_states_interval(int interval) {
  return interval >= 4 && interval <= 1024 && (interval & (interval - 1)) == 0;
}

int states_shift(int interval) {
  int shift = 0;
  while ((1 << shift) < interval) ++shift;
  return shift;
}

Status check_states_buffer(const void* states) {
  if (states == nullptr) return Status::invalid_argument("states: null pointer");
  if (reinterpret_cast<uintptr_t>(states) % 16 != 0)
    return Status::invalid_argument("states: pointer is not aligned to 16 bytes");
  return Status::ok();
}

}  // namespace ssmtune
