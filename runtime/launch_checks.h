// What a prepared call's layout fixes about each tensor slot, and the checks
// a launch makes on its pointers against it (presence, element alignment,
// outputs overlapping nothing), shared by the forward's and the backward's
// prepared calls; the layout key and placeholder pointers for layout reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ssmtune/ssmtune.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

struct PointerSlot {
  bool present = false;
  bool output = false;
  bool ignored = false;    // present in the layout but unused: only presence is checked
  int elem_bytes = 0;      // alignment the pointer needs
  uint64_t last_byte = 0;  // offset of the last byte the tensor spans
};

// The slot of a validated tensor (its sizes fit int64 bytes).
PointerSlot pointer_slot(const TensorArg& t, bool output);

// Checks `ptrs` (count of them, in slot order) against the slots; each
// error names the argument ("z: the plan was prepared with this tensor, got
// a null pointer", "du: overlaps input u").
Status check_pointers(const PointerSlot* slots, const char* const* names, int count,
                      const void* const* ptrs);

// A stand-in address for slot i of a layout: 2^44 bytes apart (more than any
// tensor spans) and 256-aligned, so that validating a layout as a call
// passes the pointer checks.
const void* layout_placeholder(int slot);

// The cache key of a layout: ranks, dtypes, shapes and strides of the
// present tensors (rank > 0), and the softplus flag.
std::vector<int64_t> layout_key(const ssmtune_tensor* const* tensors, int count,
                                int32_t delta_softplus);

}  // namespace ssmtune
