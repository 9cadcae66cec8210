// Random tensors.
#include "tuner/random_fill.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <iterator>
#include <random>

#include "core/thread_pool.h"

namespace ssmtune {
namespace {

constexpr size_t kChunk = size_t{1} << 16;  // elements per independently seeded chunk

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from the top 53 bits.
double uniform(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }

void fill_chunk(const RandomTensor& s, uint64_t seed, size_t begin, size_t end) {
  std::mt19937_64 g(seed);
  double* out = s.out->data();
  if (s.sampler == Sampler::kUniform) {
    for (size_t i = begin; i < end; ++i) {
      const double v = s.scale * uniform(g);
      out[i] = round_to(s.offset != 0 ? v + s.offset : v, s.dtype);
    }
    return;
  }
  // Marsaglia's polar method, both values used.
  for (size_t i = begin; i < end; i += 2) {
    double x, y, r2;
    do {
      x = 2.0 * uniform(g) - 1.0;
      y = 2.0 * uniform(g) - 1.0;
      r2 = x * x + y * y;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = s.scale * std::sqrt(-2.0 * std::log(r2) / r2);
    out[i] = round_to(s.offset != 0 ? f * x + s.offset : f * x, s.dtype);
    if (i + 1 < end) out[i + 1] = round_to(s.offset != 0 ? f * y + s.offset : f * y, s.dtype);
  }
}

// The generator's seed of chunk `chunk` of stream `stream`.
uint64_t chunk_seed(uint64_t seed, uint64_t stream, size_t chunk) {
  return splitmix64(splitmix64(seed ^ splitmix64(stream)) + chunk);
}

}  // namespace

void fill_random_stream(const RandomTensor& tensor, uint64_t seed, uint64_t stream) {
  tensor.out->resize(tensor.count);
  for (size_t begin = 0, c = 0; begin < tensor.count; begin += kChunk, ++c)
    fill_chunk(tensor, chunk_seed(seed, stream, c), begin, std::min(begin + kChunk, tensor.count));
}

void fill_random(const std::vector<RandomTensor>& tensors, uint64_t seed, unsigned threads) {
  size_t total = 0;
  for (const RandomTensor& s : tensors) {
    s.out->resize(s.count);
    total += s.count;
  }
  auto run_all = [&](auto&& submit) {
    for (size_t t = 0; t < tensors.size(); ++t)
      for (size_t begin = 0, c = 0; begin < tensors[t].count; begin += kChunk, ++c)
        submit(tensors[t], chunk_seed(seed, t + 1, c), begin,
               std::min(begin + kChunk, tensors[t].count));
  };
  if (threads == 1 || total <= 4 * kChunk) {
    run_all(
        [](const RandomTensor& s, uint64_t cs, size_t b, size_t e) { fill_chunk(s, cs, b, e); });
    return;
  }
  ThreadPool pool(threads);
  std::vector<std::future<void>> done;
  run_all([&](const RandomTensor& s, uint64_t cs, size_t b, size_t e) {
    done.push_back(pool.submit([&s, cs, b, e] { fill_chunk(s, cs, b, e); }));
  });
  for (auto& f : done) f.get();
}

}  // namespace ssmtune
