#include "collector/read/kineto_sax.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

namespace trainprof::collector {

std::optional<uint64_t> MicrosTextToNs(std::string_view t) {
  size_t p = 0;
  bool neg = false;
  if (p < t.size() && (t[p] == '-' || t[p] == '+')) neg = t[p++] == '-';
  std::string digits;  // the significant digits, integer and fraction parts together
  int64_t exp10 = 0;   // value = digits × 10^exp10
  bool any = false;
  for (; p < t.size() && t[p] >= '0' && t[p] <= '9'; ++p, any = true) {
    if (!(digits.empty() && t[p] == '0')) digits += t[p];
  }
  if (p < t.size() && t[p] == '.') {
    for (++p; p < t.size() && t[p] >= '0' && t[p] <= '9'; ++p, any = true) {
      if (!(digits.empty() && t[p] == '0')) digits += t[p];
      --exp10;
      if (digits.size() > 64) return std::nullopt;  // absurd precision
    }
  }
  if (!any) return std::nullopt;
  if (p < t.size() && (t[p] == 'e' || t[p] == 'E')) {
    ++p;
    bool eneg = false;
    if (p < t.size() && (t[p] == '-' || t[p] == '+')) eneg = t[p++] == '-';
    int64_t e = 0;
    bool edigit = false;
    for (; p < t.size() && t[p] >= '0' && t[p] <= '9'; ++p, edigit = true) {
      if (e < 100000) e = e * 10 + (t[p] - '0');
    }
    if (!edigit) return std::nullopt;
    exp10 += eneg ? -e : e;
  }
  if (p != t.size()) return std::nullopt;
  if (digits.empty()) return uint64_t{0};
  if (neg) return std::nullopt;
  exp10 += 3;  // µs → ns
  // Whole part: digits[0, n) then exp10 zeros (n = size + exp10 when exp10 < 0).
  const int64_t whole = static_cast<int64_t>(digits.size()) + exp10;
  if (whole > 20) return std::nullopt;
  uint64_t v = 0;
  for (int64_t k = 0; k < whole; ++k) {
    const uint64_t d = k < static_cast<int64_t>(digits.size()) ? static_cast<uint64_t>(digits[k] - '0') : 0;
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  // Round half up on the first dropped digit.
  if (whole >= 0 && whole < static_cast<int64_t>(digits.size()) && digits[static_cast<size_t>(whole)] >= '5') {
    if (v == UINT64_MAX) return std::nullopt;
    ++v;
  }
  return v;
}

std::string NumberText(const KinetoValue& v) {
  if (v.whole) return std::to_string(v.u);
  if (v.integral) return std::to_string(v.i);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v.value);
  return buf;
}

namespace {

using Json = nlohmann::json;

enum class Where : uint8_t { kTop, kEvents, kEvent, kArgs, kDims, kDevices, kDevice, kDist, kSkip };

// Keys the reader reads, by container.
enum class Key : uint8_t {
  kOther,
  // top
  kTraceEvents, kDeviceProperties, kDistributedInfo, kBaseTime, kSchemaVersion, kHostName,
  // event
  kPh, kCat, kName, kPid, kTid, kTs, kDur, kId, kArgs,
  // args
  kDevice, kStream, kCorrelation, kContext, kBytes, kCbid, kRegisters, kSharedMemory, kGrid, kBlock, kLabels,
  // device properties
  kTotalGlobalMem, kComputeMajor, kComputeMinor, kNumSms,
  // distributedInfo
  kRank, kWorldSize, kLocalRank,
};

Key KeyOf(Where w, std::string_view k) {
  switch (w) {
    case Where::kTop:
      if (k == "traceEvents") return Key::kTraceEvents;
      if (k == "deviceProperties") return Key::kDeviceProperties;
      if (k == "distributedInfo") return Key::kDistributedInfo;
      if (k == "baseTimeNanoseconds") return Key::kBaseTime;
      if (k == "schemaVersion") return Key::kSchemaVersion;
      if (k == "host_name") return Key::kHostName;
      return Key::kOther;
    case Where::kEvent:
      if (k.size() <= 4) {
        if (k == "ph") return Key::kPh;
        if (k == "cat") return Key::kCat;
        if (k == "name") return Key::kName;
        if (k == "pid") return Key::kPid;
        if (k == "tid") return Key::kTid;
        if (k == "ts") return Key::kTs;
        if (k == "dur") return Key::kDur;
        if (k == "id") return Key::kId;
        if (k == "args") return Key::kArgs;
      }
      return Key::kOther;
    case Where::kArgs:
      if (k == "device") return Key::kDevice;
      if (k == "stream") return Key::kStream;
      if (k == "correlation") return Key::kCorrelation;
      if (k == "context") return Key::kContext;
      if (k == "bytes") return Key::kBytes;
      if (k == "cbid") return Key::kCbid;
      if (k == "registers per thread") return Key::kRegisters;
      if (k == "shared memory") return Key::kSharedMemory;
      if (k == "grid") return Key::kGrid;
      if (k == "block") return Key::kBlock;
      if (k == "name") return Key::kName;
      if (k == "labels") return Key::kLabels;
      return Key::kOther;
    case Where::kDevice:
      if (k == "id") return Key::kId;
      if (k == "name") return Key::kName;
      if (k == "totalGlobalMem") return Key::kTotalGlobalMem;
      if (k == "computeMajor") return Key::kComputeMajor;
      if (k == "computeMinor") return Key::kComputeMinor;
      if (k == "numSms") return Key::kNumSms;
      return Key::kOther;
    case Where::kDist:
      if (k == "rank") return Key::kRank;
      if (k == "world_size") return Key::kWorldSize;
      if (k == "local_rank") return Key::kLocalRank;
      return Key::kOther;
    default: return Key::kOther;
  }
}

class Handler {
 public:
  Handler(KinetoHeader* h, const std::function<bool(const KinetoEvent&)>& event,
          const std::function<void(const std::string&)>& problem)
      : h_(*h), event_(event), problem_(problem) {
    stack_.reserve(16);
  }

  // nlohmann's SAX interface (json_sax.hpp).
  bool null() { return Other(); }
  bool boolean(bool) { return Other(); }
  bool number_integer(Json::number_integer_t v) {
    KinetoValue* x = Slot();
    if (x != nullptr) {
      x->type = KinetoValue::Type::kNumber;
      x->integral = true;
      x->i = v;
      x->ns_ok = v >= 0 && static_cast<uint64_t>(v) <= UINT64_MAX / 1000;
      x->ns = x->ns_ok ? static_cast<uint64_t>(v) * 1000 : 0;
      x->whole = v >= 0;
      x->u = v >= 0 ? static_cast<uint64_t>(v) : 0;
      x->value = static_cast<double>(v);
    }
    return Scalar(v >= 0 ? static_cast<uint64_t>(v) : 0, v >= 0);
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    KinetoValue* x = Slot();
    if (x != nullptr) {
      x->type = KinetoValue::Type::kNumber;
      x->integral = v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      x->i = x->integral ? static_cast<int64_t>(v) : 0;
      x->ns_ok = v <= UINT64_MAX / 1000;
      x->ns = x->ns_ok ? v * 1000 : 0;
      x->whole = true;
      x->u = v;
      x->value = static_cast<double>(v);
    }
    return Scalar(v, true);
  }
  bool number_float(Json::number_float_t f, const Json::string_t& text) {
    KinetoValue* x = Slot();
    if (x != nullptr) {
      x->type = KinetoValue::Type::kNumber;
      x->integral = false;
      x->value = f;
      const std::optional<uint64_t> ns = MicrosTextToNs(text);
      x->ns_ok = ns.has_value();
      x->ns = ns.value_or(0);
      // A float where an integer is expected (a device id written 0.0) is taken when whole.
      if (x->ns_ok && x->ns % 1000 == 0) {
        x->whole = true;
        x->u = x->ns / 1000;
        if (x->u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          x->integral = true;
          x->i = static_cast<int64_t>(x->u);
        }
      }
    }
    return Scalar(0, false);
  }
  bool string(Json::string_t& v) {
    KinetoValue* x = Slot();
    if (x == &dist_) {
      dist_.Clear();
      TopTypeCheck("a string");
    } else if (x != nullptr) {
      x->type = KinetoValue::Type::kString;
      x->s.assign(v);
    } else if (where() == Where::kTop && key_ == Key::kHostName) {
      h_.host_name = v;
    } else {
      TopTypeCheck("a string");
    }
    return true;
  }
  bool binary(Json::binary_t&) { return Other(); }

  bool start_object(size_t) {
    if (!Deeper()) return false;
    const Where w = where();
    Where next = Where::kSkip;
    if (stack_.empty()) {
      h_.top_object = true;
      next = Where::kTop;
    } else if (w == Where::kTop && key_ == Key::kDistributedInfo) {
      next = Where::kDist;
    } else if (w == Where::kEvents) {
      next = Where::kEvent;
      ev_.Clear();
      ev_.index = h_.events++;
    } else if (w == Where::kEvent && key_ == Key::kArgs) {
      next = Where::kArgs;
    } else if (w == Where::kDevices) {
      next = Where::kDevice;
      dev_.Clear();
    } else {
      MarkOther();
      TopTypeCheck("an object");
    }
    stack_.push_back({next, key_});
    key_ = Key::kOther;
    return true;
  }
  bool end_object() {
    const Where w = where();
    stack_.pop_back();
    key_ = Key::kOther;
    if (w == Where::kEvent && !event_(ev_)) {
      stopped_ = true;  // the caller's limit: it says why
      return false;
    }
    if (w == Where::kDevice) {
      if (h_.devices.size() < kMaxKinetoDevices) {
        h_.devices.push_back(dev_);
      } else if (h_.devices_dropped++ == 0) {
        problem_("deviceProperties has more than " + std::to_string(kMaxKinetoDevices) + " entries: the rest left out");
      }
    }
    return true;
  }
  bool start_array(size_t) {
    if (!Deeper()) return false;
    const Where w = where();
    Where next = Where::kSkip;
    if (stack_.empty()) {
      next = Where::kSkip;  // a JSON array at the top: not a Kineto trace (said by the reader)
    } else if (w == Where::kTop && key_ == Key::kTraceEvents) {
      h_.trace_events = true;
      next = Where::kEvents;
    } else if (w == Where::kTop && key_ == Key::kDeviceProperties) {
      next = Where::kDevices;
    } else if (w == Where::kArgs && (key_ == Key::kGrid || key_ == Key::kBlock)) {
      next = Where::kDims;
      dims_ = key_ == Key::kGrid ? ev_.grid : ev_.block;
      (key_ == Key::kGrid ? ev_.has_grid : ev_.has_block) = true;
      dim_ = 0;
    } else {
      MarkOther();
      TopTypeCheck("an array");
    }
    stack_.push_back({next, key_});
    key_ = Key::kOther;
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    key_ = Key::kOther;
    return true;
  }
  bool key(Json::string_t& k) {
    const Where w = where();
    key_ = w == Where::kSkip ? Key::kOther : KeyOf(w, k);
    return true;
  }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    h_.error_at = position;
    std::string what = ex.what();
    const size_t close = what.find("] ");
    error_ = close == std::string::npos ? what : what.substr(close + 2);
    at_end_ = what.find("unexpected end of input") != std::string::npos;
    return false;
  }

  const std::string& error() const { return error_; }
  bool at_end() const { return at_end_; }
  bool stopped() const { return stopped_; }

 private:
  struct Frame {
    Where where;
    Key key;  // the key in the parent that holds this container
  };
  Where where() const { return stack_.empty() ? Where::kSkip : stack_.back().where; }

  // Before a container is opened: false (the parse stops, said as the error) past kMaxKinetoDepth.
  bool Deeper() {
    if (stack_.size() < kMaxKinetoDepth) return true;
    error_ = "JSON nested more than " + std::to_string(kMaxKinetoDepth) +
             " levels deep (Kineto traces nest about 6): not read past there";
    stopped_ = true;
    return false;
  }

  // The value slot of the current key, or nullptr when the value is not read.
  KinetoValue* Slot() {
    switch (where()) {
      case Where::kEvent:
        switch (key_) {
          case Key::kPh: return &ev_.ph;
          case Key::kCat: return &ev_.cat;
          case Key::kName: return &ev_.name;
          case Key::kPid: return &ev_.pid;
          case Key::kTid: return &ev_.tid;
          case Key::kTs: return &ev_.ts;
          case Key::kDur: return &ev_.dur;
          case Key::kId: return &ev_.id;
          default: return nullptr;
        }
      case Where::kArgs:
        switch (key_) {
          case Key::kDevice: return &ev_.device;
          case Key::kStream: return &ev_.stream;
          case Key::kCorrelation: return &ev_.correlation;
          case Key::kContext: return &ev_.context;
          case Key::kBytes: return &ev_.bytes;
          case Key::kCbid: return &ev_.cbid;
          case Key::kRegisters: return &ev_.registers;
          case Key::kSharedMemory: return &ev_.shared_memory;
          case Key::kName: return &ev_.arg_name;
          case Key::kLabels: return &ev_.labels;
          default: return nullptr;
        }
      case Where::kDevice:
        switch (key_) {
          case Key::kId: return &dev_.id;
          case Key::kName: return &dev_.name;
          case Key::kTotalGlobalMem: return &dev_.total_global_mem;
          case Key::kComputeMajor: return &dev_.compute_major;
          case Key::kComputeMinor: return &dev_.compute_minor;
          case Key::kNumSms: return &dev_.num_sms;
          default: return nullptr;
        }
      case Where::kDist:
        switch (key_) {
          case Key::kRank: return &dist_;
          case Key::kWorldSize: return &dist_;
          case Key::kLocalRank: return &dist_;
          default: return nullptr;
        }
      case Where::kTop:
        if (key_ == Key::kBaseTime || key_ == Key::kSchemaVersion) return &dist_;
        return nullptr;
      default: return nullptr;
    }
  }

  // After a number: a grid/block element, a distributedInfo or top-level number.
  bool Scalar(uint64_t v, bool integral) {
    const Where w = where();
    if (w == Where::kDims) {
      if (dim_ < 3 && dims_ != nullptr) dims_[dim_] = integral && v <= UINT32_MAX ? static_cast<uint32_t>(v) : 0;
      if (!integral || v > UINT32_MAX) ev_.dims_bad = true;
      ++dim_;
    } else if (w == Where::kDist || w == Where::kTop) {
      if (w == Where::kTop && key_ != Key::kBaseTime && key_ != Key::kSchemaVersion) TopTypeCheck("a number");
      if (dist_.type == KinetoValue::Type::kNumber) {
        if (w == Where::kTop && key_ == Key::kBaseTime) {
          // ns since the epoch: a float counts by its whole part; past 2^62 ns (year 2116) no clock
          // gives it, and the times it starts would wrap.
          const uint64_t whole = dist_.whole ? dist_.u : dist_.ns_ok ? dist_.ns / 1000 : 0;
          if ((dist_.whole || dist_.ns_ok) && whole < kMaxKinetoNs) {
            h_.base_time_ns = whole;
          } else {
            problem_("baseTimeNanoseconds " + NumberText(dist_) +
                     " is not a time (0 to 2^62 ns since the epoch): ignored, times read as since the epoch");
          }
        }
        // A count the field can have: schemaVersion and the ranks >= 0, world_size >= 1, all ints.
        auto set = [&](std::optional<int64_t>* o, const char* field, int64_t least) {
          if (dist_.integral && dist_.i >= least && dist_.i <= INT32_MAX) {
            *o = dist_.i;
          } else {
            problem_(std::string(field) + " " + NumberText(dist_) + " is not a whole number in " +
                     std::to_string(least) + "..2^31-1: ignored");
          }
        };
        if (w == Where::kTop && key_ == Key::kSchemaVersion) set(&h_.schema_version, "schemaVersion", 0);
        if (w == Where::kDist && key_ == Key::kRank) set(&h_.rank, "distributedInfo.rank", 0);
        if (w == Where::kDist && key_ == Key::kWorldSize) set(&h_.world_size, "distributedInfo.world_size", 1);
        if (w == Where::kDist && key_ == Key::kLocalRank) set(&h_.local_rank, "distributedInfo.local_rank", 0);
      }
      dist_.Clear();
    } else if (w == Where::kEvents) {
      NotAnEvent("a number");
    }
    return true;
  }
  bool Other() {
    MarkOther();
    TopTypeCheck("not a number");
    return true;
  }
  // A value of a read field with a type the reader does not take: the mapping says so.
  bool MarkOther() {
    KinetoValue* x = Slot();
    if (x == nullptr) return false;
    x->type = KinetoValue::Type::kOther;
    if (x == &dist_) dist_.Clear();
    return true;
  }
  void TopTypeCheck(const char* what) {
    const Where w = where();
    if (w == Where::kTop) {
      switch (key_) {
        case Key::kTraceEvents: problem_(std::string("traceEvents is ") + what + ", not an array"); break;
        case Key::kDeviceProperties: problem_(std::string("deviceProperties is ") + what + ", not an array: device names left out"); break;
        case Key::kDistributedInfo: problem_(std::string("distributedInfo is ") + what + ", not an object: no rank"); break;
        case Key::kBaseTime: problem_(std::string("baseTimeNanoseconds is ") + what + ", not a number: ignored"); break;
        default: break;
      }
    } else if (w == Where::kEvents) {
      NotAnEvent(what);
    }
  }
  void NotAnEvent(const char* what) {
    problem_("traceEvents[" + std::to_string(h_.events) + "] is " + what + ", not an event object: skipped");
    ++h_.events;
  }

  KinetoHeader& h_;
  const std::function<bool(const KinetoEvent&)>& event_;
  const std::function<void(const std::string&)>& problem_;
  std::vector<Frame> stack_;
  Key key_ = Key::kOther;
  KinetoEvent ev_;
  KinetoDevice dev_;
  KinetoValue dist_;  // a distributedInfo or top-level number being read
  uint32_t* dims_ = nullptr;
  int dim_ = 0;
  std::string error_;
  bool at_end_ = false;
  bool stopped_ = false;
};

}  // namespace

std::string ParseKinetoJson(std::istream& in, KinetoHeader* header, const std::function<bool(const KinetoEvent&)>& event,
                            const std::function<void(const std::string&)>& problem, bool* at_end) {
  Handler h(header, event, problem);
  // strict: text after the top-level value is an error (a second document appended).
  const bool ok = Json::sax_parse(in, &h, Json::input_format_t::json, true);
  *at_end = h.at_end();
  header->stopped = h.stopped();
  if (ok || (h.stopped() && h.error().empty())) return {};
  return h.error().empty() ? std::string("JSON parse error") : h.error();
}

}  // namespace trainprof::collector
