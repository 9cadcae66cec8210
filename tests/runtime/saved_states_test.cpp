// The saved states' buffer checks and size (no GPU).
#include "runtime/saved_states.h"

#include <catch2/catch.hpp>

#include <cstdint>

#include "ssm/bwd/bwd_params.cuh"

namespace ssmtune {
namespace {

TEST_CASE("saved states: the buffer is given and aligned", "[runtime]") {
  CHECK(check_states_buffer(nullptr).code() == Code::kInvalidArgument);
  alignas(16) float buf[8];
  CHECK(check_states_buffer(buf).is_ok());
  const Status odd = check_states_buffer(reinterpret_cast<const char*>(buf) + 4);
  CHECK(odd.code() == Code::kInvalidArgument);
  CHECK(odd.message().find("16 bytes") != std::string::npos);
}

TEST_CASE("saved states: their size is the backward's checkpoint region", "[runtime]") {
  // (8, 1536, 2048, 16) at interval 16: 127 chunk starts per channel and state.
  CHECK(ssmtune_kernels::bwd_ckpt_bytes(8, 1536, 16, 2048, 16, 4) == 8LL * 127 * 16 * 1536 * 4);
  // One chunk, nothing to save; a partial last chunk counts as a chunk.
  CHECK(ssmtune_kernels::bwd_ckpt_bytes(2, 64, 16, 16, 16, 4) == 0);
  CHECK(ssmtune_kernels::bwd_ckpt_bytes(2, 64, 16, 17, 16, 4) == 2LL * 1 * 16 * 64 * 4);
  // Past 2^31 bytes the arithmetic stays 64-bit.
  CHECK(ssmtune_kernels::bwd_ckpt_bytes(64, 8192, 16, 65536, 16, 4) == 64LL * 4095 * 16 * 8192 * 4);
  const auto l =
      ssmtune_kernels::bwd_scratch_layout(8, 1536, 1, 16, 2048, 16, 32, true, true, true, true, 4);
  // The checkpoints come last: a launch given saved states needs the bytes before them.
  CHECK(l.ckpt > l.part_bias);
  CHECK(l.bytes - l.ckpt == ssmtune_kernels::bwd_align256(8LL * 127 * 16 * 1536 * 4));
}

}  // namespace
}  // namespace ssmtune
