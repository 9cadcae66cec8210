// The JIT layer on a real GPU: compile for the device's own arch, load,
// launch, check against the host; time with events; bad launches are errors.
#include <catch2/catch.hpp>

#include "support/test_family.h"

#include <cmath>
#include <random>

#include "jit/compiler.h"
#include "jit/device.h"
#include "jit/device_buffer.h"
#include "jit/module.h"
#include "jit/program_builder.h"
#include "jit/program_kernels.h"
#include "jit/stream.h"
#include "templates/testing/linear_recurrence_params.cuh"

namespace ssmtune::jit {
namespace {

template <typename T>
T ok(Result<T> r) {
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  return std::move(r).value();
}
#define REQUIRE_OK(expr)           \
  do {                             \
    ::ssmtune::Status s_ = (expr); \
    INFO(s_.to_string());          \
    REQUIRE(s_.is_ok());           \
  } while (0)

std::string device_arch() { return ok(query_device(0)).arch(); }

struct Loaded {
  CompiledProgram program;
  Module module;
};

Loaded load_family(const std::vector<Instantiation>& family) {
  Compiler compiler(testing::test_sources(), nullptr);
  auto program = ok(compiler.compile(make_programs(family, 0, device_arch())[0]));
  auto module = ok(Module::load(program.cubin));
  return {std::move(program), std::move(module)};
}

template <typename T>
void check_linear_recurrence(const Loaded& l, int items, long long rows, long long length) {
  const std::string expr = std::string("ssmtune_kernels::linear_recurrence<") +
                           (sizeof(T) == 4 ? "float" : "double") + ", " + std::to_string(items) +
                           ">";
  const auto* image = l.program.find(expr);
  REQUIRE(image != nullptr);
  auto kernel = ok(l.module.kernel(image->lowered_name));
  std::mt19937 rng(1234 + items + rows);
  std::uniform_real_distribution<double> ua(0.5, 1.0), ub(-1.0, 1.0);
  const size_t n = rows * length;
  std::vector<T> a(n), b(n), h(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(ua(rng));
    b[i] = static_cast<T>(ub(rng));
  }
  auto da = ok(DeviceBuffer::allocate(n * sizeof(T)));
  auto db = ok(DeviceBuffer::allocate(n * sizeof(T)));
  auto dh = ok(DeviceBuffer::allocate(n * sizeof(T)));
  REQUIRE_OK(da.upload(a));
  REQUIRE_OK(db.upload(b));
  REQUIRE_OK(dh.fill_bytes(0xFF));  // NaN: unwritten outputs show
  ssmtune_kernels::LinearRecurrenceParams p{reinterpret_cast<const void*>(da.get()),
                                            reinterpret_cast<const void*>(db.get()),
                                            reinterpret_cast<void*>(dh.get()), rows, length};
  auto stream = ok(Stream::create());
  const unsigned threads = 128;
  REQUIRE_OK(kernel.launch(Dim3{static_cast<unsigned>((rows + threads - 1) / threads)},
                           Dim3{threads}, 0, stream.get(), p));
  REQUIRE_OK(stream.synchronize());
  REQUIRE_OK(dh.download(h));
  // Reference in double from scratch; a in [0.5, 1) keeps |h| bounded.
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  size_t bad = 0;
  for (long long r = 0; r < rows; ++r) {
    double state = 0;
    for (long long t = 0; t < length; ++t) {
      const size_t i = r * length + t;
      state = static_cast<double>(a[i]) * state + static_cast<double>(b[i]);
      if (!(std::abs(static_cast<double>(h[i]) - state) <= tol * length * (1 + std::abs(state))))
        ++bad;
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("linear_recurrence compiled for this GPU matches the host", "[gpu][jit]") {
  auto l = load_family(testing::linear_recurrence_family({1, 4, 8}));
  for (int items : {1, 4, 8}) {
    INFO("items " << items);
    check_linear_recurrence<float>(l, items, 1000, 77);  // length not a multiple of items
    check_linear_recurrence<double>(l, items, 129, 1);   // one step
    check_linear_recurrence<double>(l, items, 3, 4097);
  }
}

TEST_CASE("events time a kernel", "[gpu][jit]") {
  auto l = load_family(testing::linear_recurrence_family({4}));
  auto kernel = ok(l.module.kernel(l.program.kernels.at(0).lowered_name));
  const long long rows = 1 << 16, length = 256;
  auto a = ok(DeviceBuffer::allocate(rows * length * 4));
  auto h = ok(DeviceBuffer::allocate(rows * length * 4));
  REQUIRE_OK(a.fill_bytes(0x3c));  // 0x3c3c3c3c ~ 0.0115f, not zero
  ssmtune_kernels::LinearRecurrenceParams p{reinterpret_cast<const void*>(a.get()),
                                            reinterpret_cast<const void*>(a.get()),
                                            reinterpret_cast<void*>(h.get()), rows, length};
  auto stream = ok(Stream::create());
  auto start = ok(Event::create());
  auto stop = ok(Event::create());
  REQUIRE_OK(start.record(stream.get()));
  for (int i = 0; i < 10; ++i)
    REQUIRE_OK(
        kernel.launch(Dim3{static_cast<unsigned>(rows / 128)}, Dim3{128}, 0, stream.get(), p));
  REQUIRE_OK(stop.record(stream.get()));
  REQUIRE_OK(stop.synchronize());
  const float ms = ok(stop.elapsed_ms_since(start));
  // 10 passes over 2 x 64 MiB: at least ~0.2 ms at 5 TB/s, far under a second.
  CHECK(ms > 0.05f);
  CHECK(ms < 1000.0f);
  const float back = ok(start.elapsed_ms_since(stop));
  CHECK(back < 0.0f);
}

TEST_CASE("a bad launch is a clean error and the context survives", "[gpu][jit]") {
  auto l = load_family(testing::linear_recurrence_family({1}));
  auto kernel = ok(l.module.kernel(l.program.kernels.at(0).lowered_name));
  ssmtune_kernels::LinearRecurrenceParams p{nullptr, nullptr, nullptr, 0, 0};
  Status s = kernel.launch(Dim3{1}, Dim3{4096}, 0, nullptr, p);  // over the 1024-thread limit
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == Code::kCudaError);
  CHECK(s.message().find("CUDA_ERROR_INVALID_VALUE") != std::string::npos);
  CHECK(s.message().find("block (4096,1,1)") != std::string::npos);
  Status smem = kernel.launch(Dim3{1}, Dim3{32}, 1u << 30, nullptr, p);
  CHECK_FALSE(smem.is_ok());
  CHECK_FALSE(kernel.launch(Dim3{0}, Dim3{32}, 0, nullptr, p).is_ok());
  auto missing = l.module.kernel("_Z_no_such_kernel");
  CHECK(missing.status().code() == Code::kCudaError);
  CHECK(missing.status().message().find("CUDA_ERROR_NOT_FOUND") != std::string::npos);
  auto bad_image = Module::load("not a cubin at all");
  CHECK_FALSE(bad_image.is_ok());
  // Nothing above was sticky: a real launch still works.
  auto ctx = ok(Context::create(0));
  check_linear_recurrence<float>(l, 1, 64, 33);
  REQUIRE_OK(ctx.synchronize());
}

TEST_CASE("a plan's kernels are found in order, their shared-memory limits raised", "[gpu][jit]") {
  const auto family = testing::linear_recurrence_family({1, 4});
  auto l = load_family(family);
  auto found = ok(find_kernels(l.module, l.program, {family.at(1), family.at(0)}));
  REQUIRE(found.kernels.size() == 2);
  REQUIRE(found.images.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const Instantiation& want = family.at(1 - i);
    CHECK(found.images[i].name_expression == want.name_expression);
    CHECK(found.kernels[i].name() == l.program.find(want.name_expression)->lowered_name);
    CHECK(found.kernels[i].valid());
  }
  auto missing = find_kernels(l.module, l.program,
                              {family.at(0), {family.at(0).header, "ssmtune_kernels::none<1>"}});
  CHECK(missing.status().code() == Code::kInternal);
  CHECK(missing.status().message().find("lacks ssmtune_kernels::none<1>") != std::string::npos);

  struct Launch {
    int kernel = 0;
    unsigned shared_bytes = 0;
  };
  const unsigned want_bytes = 64 * 1024;
  REQUIRE(ok(query_device(0)).max_shared_per_block >= static_cast<int>(want_bytes));
  REQUIRE_OK(allow_shared_bytes(found.kernels, std::vector<Launch>{{0, 1024}, {1, want_bytes}}));
  CHECK(ok(found.kernels[1].attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)) ==
        static_cast<int>(want_bytes));
  CHECK(ok(found.kernels[0].attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)) <
        static_cast<int>(want_bytes));
}

TEST_CASE("device info is complete", "[gpu][jit]") {
  auto d = ok(query_device(0));
  CHECK_FALSE(d.name.empty());
  CHECK(d.uuid.rfind("GPU-", 0) == 0);
  CHECK(d.uuid.size() == 40);
  CHECK(d.cc_major >= 7);
  CHECK(d.sm_count > 0);
  CHECK(d.total_memory > (size_t{1} << 30));
  CHECK(d.l2_bytes > 0);
  CHECK(d.max_shared_per_block >= 48 * 1024);
  CHECK(d.driver_version >= 12000);
  CHECK(d.nvrtc_version == nvrtc_version().to_string());
}

}  // namespace
}  // namespace ssmtune::jit
