// Shape-list shards.
#include "cli/shard.h"

#include <algorithm>
#include <map>

namespace ssmtune::cli {
namespace {

// A decimal integer of 1 to 7 digits, else -1.
int decimal(const std::string& s) {
  if (s.empty() || s.size() > 7) return -1;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

Result<Shard> parse_shard(const std::string& text) {
  const std::string expect =
      "--shard takes I/N (shard I of N, 0 <= I < N, decimal; e.g. 0/8 "
      "for the first of eight), got '" +
      text + "'";
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return Status::invalid_argument(expect);
  const int i = decimal(text.substr(0, slash)), n = decimal(text.substr(slash + 1));
  if (i < 0 || n < 0) return Status::invalid_argument(expect);
  if (n < 1 || n > kMaxShards)
    return Status::invalid_argument("--shard " + text + ": N must be from 1 to " +
                                    std::to_string(kMaxShards));
  if (i >= n)
    return Status::invalid_argument("--shard " + text + ": I must be below N (shards are " +
                                    "numbered from 0 to " + std::to_string(n - 1) + ")");
  return Shard{i, n};
}

std::vector<size_t> shard_positions(const std::vector<std::string>& keys, const Shard& s) {
  std::map<std::string, size_t> first;  // sorted bytewise
  for (size_t i = 0; i < keys.size(); ++i) first.emplace(keys[i], i);
  std::vector<size_t> out;
  size_t rank = 0;
  for (const auto& [key, pos] : first) {
    if (rank % static_cast<size_t>(s.count) == static_cast<size_t>(s.index)) out.push_back(pos);
    ++rank;
  }
  return out;
}

}  // namespace ssmtune::cli
