// The checked reading of a summary's fields (summary_codec.h): each function takes a JSON value
// read from CBOR and `where`, the field's path in the summary ("info.pid", "devices[2].activity"),
// and throws SummaryError naming that path where the value is missing or of the wrong type or
// range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/base/duration_summary.h"
#include "collector/summary/summary_file.h"

namespace trainprof::collector {

/// Throws SummaryError("where: what").
[[noreturn]] void Fail(const std::string& where, const std::string& what);
/// obj[key]; obj must be a map holding key.
const nlohmann::json& Field(const nlohmann::json& obj, const char* key, const std::string& where);
uint64_t U64(const nlohmann::json& v, const std::string& where);
uint32_t U32(const nlohmann::json& v, const std::string& where);
int64_t I64(const nlohmann::json& v, const std::string& where);
int32_t I32(const nlohmann::json& v, const std::string& where);
double F64(const nlohmann::json& v, const std::string& where);
bool Bool(const nlohmann::json& v, const std::string& where);
std::string Str(const nlohmann::json& v, const std::string& where);
/// null: nullopt.
std::optional<int64_t> OptI64(const nlohmann::json& v, const std::string& where);
std::optional<std::string> OptStr(const nlohmann::json& v, const std::string& where);
/// v, an array (of `size` items unless SIZE_MAX).
const nlohmann::json& Array(const nlohmann::json& v, const std::string& where, size_t size = SIZE_MAX);
std::vector<std::string> Strings(const nlohmann::json& v, const std::string& where);

/// A mergeable duration statistic (base/duration_summary.h) as `[count, total, min, max, shift, s2,
/// first, data]` (its Save state), and back: one Load accepts (else "a duration statistic whose
/// parts do not add up").
nlohmann::json DurationsJson(const DurationSummary& d);
DurationSummary ReadDurations(const nlohmann::json& v, const std::string& where);

}  // namespace trainprof::collector
