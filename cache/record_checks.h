// What an imported (or API-written) record must satisfy before it reaches
// the tuning database: finite, non-negative times within reason, errors
// (each output's too) and counts >= 0, timestamps that are not in the
// future, keys that parse, a config legal for its problem (through the
// family registry), text without control characters. One entry function
// per record kind. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "ssmtune/status.h"
#include "tuner/records.h"

namespace ssmtune::cache {

// A timestamp may lead this machine's clock by this much (a clock set to
// local time as if it were UTC is off by up to 14 hours); more is refused, so
// a far-future entry cannot win every later merge.
inline constexpr int64_t kMaxClockSkewSeconds = int64_t{24} * 3600;
// Longest time one run may take, ms: anything above is a unit error or junk.
inline constexpr double kMaxTimeMs = 1e7;
// Longest text field accepted (device names, keys, versions, details).
inline constexpr size_t kMaxTextBytes = 1 << 16;
// Most named outputs one measurement may carry an error for.
inline constexpr size_t kMaxOutputs = 64;

// Each returns ok or kInvalidArgument naming `where` and the field, e.g.
// "measurements[3].median_ms: -1 is negative" or
// "measurements[3].errors[1].rel_l2: -1e-06 is negative". `now` is unix seconds (0:
// the clock). A timestamp of 0 is allowed only when `allow_zero_timestamp`
// (the API's "stamp it now"; an export always carries real times).
Status check_device_record(const DeviceRecord& d, const std::string& where);
Status check_measurement(const Measurement& m, const std::string& where,
                         bool allow_zero_timestamp = false, int64_t now = 0);
Status check_best_entry(const BestEntry& b, const std::string& where,
                        bool allow_zero_timestamp = false, int64_t now = 0);

// Ok when `s` is valid UTF-8 with no control characters (below 0x20, 0x7f,
// or the C1 range): what a terminal may print as is. `multiline` also
// allows \n and \t (compile logs in a measurement's detail).
Status check_text(const std::string& s, const std::string& where, bool multiline = false);

}  // namespace ssmtune::cache
