#include "jit/template_sources.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace ssmtune::jit {
namespace {

TEST_CASE("embedded templates match the source tree", "[jit]") {
  const auto& e = TemplateSources::embedded();
  CHECK(e.origin() == "embedded");
  REQUIRE(e.find("ssm/fwd_all.cuh") != nullptr);
  CHECK(e.find("testing/linear_recurrence.cuh") == nullptr);  // test kernels stay in tests/
  auto disk = TemplateSources::from_directory(std::string(SSMTUNE_SOURCE_DIR) + "/templates");
  REQUIRE(disk.is_ok());
  CHECK(disk->files() == e.files());
  CHECK(disk->hash() == e.hash());
}

TEST_CASE("an override directory replaces the templates", "[jit]") {
  namespace fs = std::filesystem;
  const testing::TempDir tmp;
  const fs::path dir = tmp.path();
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "x.cuh") << "// x\n";
  std::ofstream(dir / "ignored.txt") << "no";
  auto t = TemplateSources::from_directory(dir.string());
  REQUIRE(t.is_ok());
  CHECK(t->files().size() == 1);
  REQUIRE(t->find("sub/x.cuh") != nullptr);
  CHECK(*t->find("sub/x.cuh") == "// x\n");
  CHECK(t->hash() != TemplateSources::embedded().hash());
  setenv("SSMTUNE_TEMPLATE_DIR", dir.string().c_str(), 1);
  auto d = TemplateSources::load_default();
  unsetenv("SSMTUNE_TEMPLATE_DIR");
  REQUIRE(d.is_ok());
  CHECK(d->origin() == dir.string());
}

TEST_CASE("a missing override directory is a clear error", "[jit]") {
  auto t = TemplateSources::from_directory("/nonexistent/ssmtune");
  REQUIRE_FALSE(t.is_ok());
  CHECK(t.status().code() == Code::kNotFound);
  CHECK(t.status().message().find("/nonexistent/ssmtune") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune::jit
