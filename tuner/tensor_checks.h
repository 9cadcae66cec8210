// The checks every family runs on a call's device tensors: one tensor
// against what the problem expects of it (presence decided by a flag,
// dtype, rank and shape, strides, element alignment), and that no output
// overlaps another tensor. Each error names the argument ("B: expected
// shape (8, 1, 16, 2048), got (8, 16, 2048)"). Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ssmtune/status.h"
#include "tuner/fwd/problem.h"

namespace ssmtune {

// What one tensor argument must look like.
struct TensorRule {
  const char* name;
  const TensorArg* arg;
  bool required;              // present iff this
  const char* flag;           // what decides presence, or nullptr when always required
  std::vector<DType> dtypes;  // accepted dtypes
  std::string dtype_hint;     // follows "<name>: dtype <got>" when the dtype is not accepted
  std::vector<int64_t> shape;
  bool output;  // written by the call (in-place tensors too)
  // false: the last dimension is contiguous and the others have strides
  // >= 1. true: any strides >= 0 (broadcast inputs), except that an output
  // needs a stride >= 1 on every dimension of more than one element.
  bool strided = false;
};

// "(8, 1, 16)".
std::string shape_string(int rank, const int64_t* shape);
Status check_tensor(const TensorRule& r);
// Ok when no present output overlaps (in bytes) any other present tensor.
Status check_no_overlap(const std::vector<TensorRule>& rules);

}  // namespace ssmtune
