// summary_fields.h: a summary's fields, read with their checks.
#include "collector/summary/summary_fields.h"

#include <limits>

namespace trainprof::collector {

using Json = nlohmann::json;

[[noreturn]] void Fail(const std::string& where, const std::string& what) { throw SummaryError(where + ": " + what); }

const Json& Field(const Json& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) Fail(where, "expected a map");
  auto it = obj.find(key);
  if (it == obj.end()) Fail(where, std::string("field \"") + key + "\" is missing");
  return *it;
}

uint64_t U64(const Json& v, const std::string& where) {
  if (!v.is_number_unsigned()) Fail(where, "expected an unsigned integer");
  return v.get<uint64_t>();
}
uint32_t U32(const Json& v, const std::string& where) {
  const uint64_t x = U64(v, where);
  if (x > std::numeric_limits<uint32_t>::max()) Fail(where, "out of range");
  return static_cast<uint32_t>(x);
}
int64_t I64(const Json& v, const std::string& where) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) Fail(where, "out of range");
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (!v.is_number_integer()) Fail(where, "expected an integer");
  return v.get<int64_t>();
}
int32_t I32(const Json& v, const std::string& where) {
  const int64_t x = I64(v, where);
  if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) Fail(where, "out of range");
  return static_cast<int32_t>(x);
}
double F64(const Json& v, const std::string& where) {
  if (!v.is_number()) Fail(where, "expected a number");
  return v.get<double>();
}
bool Bool(const Json& v, const std::string& where) {
  if (!v.is_boolean()) Fail(where, "expected true or false");
  return v.get<bool>();
}
std::string Str(const Json& v, const std::string& where) {
  if (!v.is_string()) Fail(where, "expected a string");
  return v.get<std::string>();
}
std::optional<int64_t> OptI64(const Json& v, const std::string& where) {
  if (v.is_null()) return std::nullopt;
  return I64(v, where);
}
const Json& Array(const Json& v, const std::string& where, size_t size) {
  if (!v.is_array()) Fail(where, "expected an array");
  if (size != SIZE_MAX && v.size() != size) Fail(where, "expected " + std::to_string(size) + " items");
  return v;
}
std::vector<std::string> Strings(const Json& v, const std::string& where) {
  std::vector<std::string> out;
  for (size_t i = 0; i < Array(v, where).size(); ++i) out.push_back(Str(v[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

std::optional<std::string> OptStr(const Json& v, const std::string& where) {
  if (v.is_null()) return std::nullopt;
  return Str(v, where);
}

Json DurationsJson(const DurationSummary& d) {
  const DurationSummary::State s = d.Save();
  return Json::array({s.count, s.total, s.min, s.max, s.shift, s.s2, s.first, s.data});
}

DurationSummary ReadDurations(const Json& v, const std::string& where) {
  Array(v, where, 8);
  DurationSummary::State s{.count = U64(v[0], where + ".count"), .total = U64(v[1], where + ".total"),
                           .min = U64(v[2], where + ".min"), .max = U64(v[3], where + ".max"),
                           .shift = U64(v[4], where + ".shift"), .s2 = F64(v[5], where + ".s2"),
                           .first = U32(v[6], where + ".first"), .data = {}};
  const Json& data = Array(v[7], where + ".data");
  s.data.reserve(data.size());
  for (const Json& x : data) s.data.push_back(U64(x, where + ".data"));
  DurationSummary d;
  if (!DurationSummary::Load(s, &d)) Fail(where, "a duration statistic whose parts do not add up");
  return d;
}

}  // namespace trainprof::collector
