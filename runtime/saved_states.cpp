// The saved states' buffer checks.
#include "runtime/saved_states.h"

#include <cstdint>

namespace ssmtune {

Status check_states_buffer(const void* states) {
  if (states == nullptr) return Status::invalid_argument("states: null pointer");
  if (reinterpret_cast<uintptr_t>(states) % 16 != 0)
    return Status::invalid_argument("states: pointer is not aligned to 16 bytes");
  return Status::ok();
}

}  // namespace ssmtune
