// libFuzzer target: bytes as an export file. Parsing and importing must
// never crash; when the import succeeds, export -> import into a fresh
// database -> export must give the same bytes (the exported_at stamp aside).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cache/json_text.h"
#include "cache/tuning_db.h"

namespace {

using ssmtune::cache::OpenMode;
using ssmtune::cache::TuningDb;

[[noreturn]] void fail(const std::string& why) {
  fprintf(stderr, "import_fuzzer: %s\n", why.c_str());
  std::abort();
}

std::string export_text(TuningDb& db) {
  auto j = db.export_json();
  if (!j) fail("export failed: " + j.status().to_string());
  j->erase("exported_at");
  return ssmtune::cache::dump_json_text(*j);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto j = ssmtune::cache::parse_json_text(text, "input");
  if (!j) return 0;
  auto db = TuningDb::open(":memory:", OpenMode::kReadWrite);
  if (!db) fail("open: " + db.status().to_string());
  const auto policy = size % 2 ? ssmtune::cache::MergePolicy::kNewerWins
                               : ssmtune::cache::MergePolicy::kIncomingWins;
  auto r = db->import_json(*j, policy);
  if (!r) return 0;
  const std::string first = export_text(*db);
  auto again = ssmtune::cache::parse_json_text(first, "export");
  if (!again) fail("the export does not parse: " + again.status().to_string());
  auto db2 = TuningDb::open(":memory:", OpenMode::kReadWrite);
  if (!db2) fail("open: " + db2.status().to_string());
  auto r2 = db2->import_json(*again, ssmtune::cache::MergePolicy::kIncomingWins);
  if (!r2) fail("the export does not import: " + r2.status().to_string());
  const std::string second = export_text(*db2);
  if (first != second)
    fail("export -> import -> export changed the bytes:\n" + first + "\n" + second);
  return 0;
}
