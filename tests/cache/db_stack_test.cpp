// The local-over-shared database stack: shared layers opened read-only and
// never changed (an older schema is refused, not migrated), a missing one
// is an error naming it, writes go to the local database, best entries are
// read local first, then each shared layer; the cubin cache reads through
// the layers and writes locally.
#include "cache/db_stack.h"

#include <sqlite3.h>

#include <catch2/catch.hpp>

#include "cache/db_fixtures.h"
#include "cache/sqlite.h"
#include "cache/sqlite_cubin_cache.h"

namespace ssmtune::cache {
namespace {

using testing::config_key;
using testing::problem_key;
using testing::sample_best;
using testing::sample_device;
using testing::sample_measurement;
using testing::sample_versions;
using testing::TempDir;

// A database at `path` with device 0's best entry for problem `p`: config `c`.
void seed(const std::string& path, int p, int c) {
  auto db = TuningDb::open(path, OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  REQUIRE(db->upsert_device(sample_device(0)).is_ok());
  REQUIRE(db->set_best(sample_best(sample_device(0).uuid, problem_key(p), config_key(c))).is_ok());
}

TEST_CASE("a database stack reads best entries local first, then each shared layer",
          "[cache][layers]") {
  TempDir dir;
  const std::string local = dir.file("local.db"), team = dir.file("team.db"),
                    fleet = dir.file("fleet.db");
  seed(local, 0, 1);
  seed(team, 0, 2);  // shadowed by the local entry
  seed(team, 1, 3);
  seed(fleet, 1, 4);  // shadowed by team's
  seed(fleet, 2, 5);
  const std::string team_bytes = testing::read_file(team), fleet_bytes = testing::read_file(fleet);

  auto paths = split_db_paths(local + ":" + team + ":" + fleet);
  REQUIRE(paths.is_ok());
  auto stack = DbStack::open(*paths, OpenMode::kReadWrite);
  INFO(stack.status().to_string());
  REQUIRE(stack.is_ok());
  REQUIRE(stack->layered());
  auto layers = stack->layers();
  REQUIRE(layers.size() == 3);
  CHECK_FALSE(layers[0].shared);
  CHECK(layers[1].shared);
  CHECK(layers[1].db->read_only());
  CHECK(layers[2].db->path() == fleet);

  const std::string gpu = sample_device(0).uuid;
  const Versions v = sample_versions();
  for (auto [p, c] : {std::pair{0, 1}, {1, 3}, {2, 5}}) {
    auto b = stack->best(gpu, problem_key(p), v);
    REQUIRE(b.is_ok());
    REQUIRE(b->has_value());
    CHECK((*b)->config_key == config_key(c));
  }
  auto none = stack->best(gpu, problem_key(3), v);
  REQUIRE(none.is_ok());
  CHECK_FALSE(none->has_value());

  // A stale local entry does not hide a current shared one.
  {
    auto db = TuningDb::open(local, OpenMode::kReadWrite);
    REQUIRE(db.is_ok());
    REQUIRE(
        db->set_best(sample_best(gpu, problem_key(1), config_key(6), 1700000000, "old")).is_ok());
  }
  auto current = stack->best(gpu, problem_key(1), v);
  REQUIRE(current.is_ok());
  REQUIRE(current->has_value());
  CHECK((*current)->config_key == config_key(3));
  CHECK_FALSE((*current)->stale);

  // Writes go to the local database only.
  REQUIRE(
      stack->add_measurement(sample_measurement(gpu, problem_key(7), config_key(0), 0.2)).is_ok());
  REQUIRE(stack->set_best(sample_best(gpu, problem_key(7), config_key(0))).is_ok());
  MeasurementFilter f;
  f.problem_key = problem_key(7);
  auto ms = stack->local().measurements(f);
  REQUIRE(ms.is_ok());
  CHECK(ms->size() == 1);
  CHECK(testing::read_file(team) == team_bytes);
  CHECK(testing::read_file(fleet) == fleet_bytes);
}

TEST_CASE("a shared layer must exist, is never created and an older one is not migrated",
          "[cache][layers]") {
  TempDir dir;
  const std::string local = dir.file("local.db"), missing = dir.file("nowhere/shared.db");
  auto paths = split_db_paths(local + ":" + missing);
  REQUIRE(paths.is_ok());
  auto stack = DbStack::open(*paths, OpenMode::kReadWrite);
  REQUIRE_FALSE(stack.is_ok());
  CHECK(stack.status().code() == Code::kNotFound);
  CHECK(stack.status().message().find(missing) != std::string::npos);
  CHECK(stack.status().message().find("shared") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("nowhere")));

  // A version 1 database as a shared layer: refused, byte for byte unchanged.
  const std::string old = dir.file("old.db");
  {
    auto c = Connection::open(old, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    REQUIRE(c.is_ok());
    REQUIRE(c->exec(testing::kSchemaV1).is_ok());
  }
  const std::string before = testing::read_file(old);
  auto with_old = split_db_paths(local + ":" + old);
  REQUIRE(with_old.is_ok());
  auto refused = DbStack::open(*with_old, OpenMode::kReadWrite);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().code() == Code::kUnsupported);
  CHECK(refused.status().message().find(old) != std::string::npos);
  CHECK(testing::read_file(old) == before);
}

TEST_CASE("a stack without a local database reads, and refuses writes", "[cache][layers]") {
  TempDir dir;
  seed(dir.file("shared.db"), 0, 2);
  auto paths = split_db_paths(dir.file("absent.db") + ":" + dir.file("shared.db"));
  REQUIRE(paths.is_ok());
  auto shared = DbStack::open_shared(*paths);
  REQUIRE(shared.is_ok());
  DbStack stack(std::nullopt, std::move(*shared));
  CHECK_FALSE(stack.has_local());
  CHECK_FALSE(stack.layered());
  auto b = stack.best(sample_device(0).uuid, problem_key(0), sample_versions());
  REQUIRE(b.is_ok());
  REQUIRE(b->has_value());
  CHECK((*b)->config_key == config_key(2));
  auto w = stack.upsert_device(sample_device(1));
  CHECK(w.code() == Code::kInvalidArgument);
}

jit::CompiledProgram program(const std::string& key) {
  jit::CompiledProgram p;
  p.key = key;
  p.arch = "sm_90";
  p.cubin = std::string(
                "\x7f"
                "ELF cubin of ") +
            key;
  p.log = "";
  return p;
}

TEST_CASE("the cubin cache reads through shared layers and writes locally", "[cache][layers]") {
  TempDir dir;
  const std::string local = dir.file("local.db"), shared = dir.file("shared.db");
  {
    auto db = TuningDb::open(shared, OpenMode::kReadWrite);
    REQUIRE(db.is_ok());
    REQUIRE(db->put_cubin(program("from-shared")).is_ok());
  }
  const std::string shared_bytes = testing::read_file(shared);
  auto cache = SqliteCubinCache::open(local + ":" + shared);
  INFO(cache.status().to_string());
  REQUIRE(cache.is_ok());
  auto hit = (*cache)->get("from-shared");
  REQUIRE(hit.has_value());
  CHECK(hit->cubin == program("from-shared").cubin);
  CHECK_FALSE((*cache)->get("nowhere").has_value());
  (*cache)->put(program("compiled-here"));
  CHECK((*cache)->get("compiled-here").has_value());
  CHECK((*cache)->hits() == 2);
  CHECK((*cache)->misses() == 1);
  CHECK((*cache)->errors() == 0);
  cache->reset();
  CHECK(testing::read_file(shared) == shared_bytes);
  auto db = TuningDb::open(local, OpenMode::kReadOnly);
  REQUIRE(db.is_ok());
  auto n = db->cubin_count();
  REQUIRE(n.is_ok());
  CHECK(*n == 1);

  auto missing = SqliteCubinCache::open(local + ":" + dir.file("absent.db"));
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Code::kNotFound);
}

TEST_CASE("class peers: identical GPUs of every layer, once, never this one or another class",
          "[cache][layers]") {
  TempDir dir;
  const std::string local = dir.file("local.db"), fleet = dir.file("fleet.db");
  DeviceRecord me = sample_device(0);
  DeviceRecord twin = me, other_twin = me, h100 = sample_device(1);
  twin.uuid = "GPU-0000000a-1111-2222-3333-444444444444";
  other_twin.uuid = "GPU-0000000b-1111-2222-3333-444444444444";
  {
    auto db = TuningDb::open(local, OpenMode::kReadWrite);
    REQUIRE(db.is_ok());
    for (const auto& d : {me, twin, h100}) REQUIRE(db->upsert_device(d).is_ok());
  }
  {
    auto db = TuningDb::open(fleet, OpenMode::kReadWrite);
    REQUIRE(db.is_ok());
    for (const auto& d : {twin, other_twin}) REQUIRE(db->upsert_device(d).is_ok());
  }
  auto paths = split_db_paths(local + ":" + fleet);
  REQUIRE(paths.is_ok());
  auto stack = DbStack::open(*paths, OpenMode::kReadWrite);
  REQUIRE(stack.is_ok());
  auto peers = stack->class_peers(me);
  REQUIRE(peers.is_ok());
  CHECK(*peers == std::vector<std::string>{twin.uuid, other_twin.uuid});
  auto of_h100 = stack->class_peers(h100);
  REQUIRE(of_h100.is_ok());
  CHECK(of_h100->empty());
}

}  // namespace
}  // namespace ssmtune::cache
