// The streaming writer behind `trainprof export --format chrome` (export_chrome.h): one Chrome
// Trace Event object at a time into an OutputSink, names escaped once per distinct string.
#pragma once

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "collector/base/output_sink.h"
#include "collector/export/export_progress.h"
#include "collector/model/model.h"

namespace trainprof::collector {

// A JSON string literal (quoted, escaped; invalid UTF-8 replaced by U+FFFD).
inline std::string Quote(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

class StackArgs;  // stack_args.h

class ChromeWriter {
 public:
  ChromeWriter(const Trace& trace, OutputSink* out) : trace_(trace), out_(out), quoted_(kQuotedCache) {}

  /// Events' `args.stack` (stack_args.h); null: none written.
  StackArgs* stack_args = nullptr;

  // The quoted, escaped form of an interned string, from a direct-mapped cache of kQuotedCache
  // ids: names repeat, and a million distinct names must not cost a string each.
  const std::string& Name(StringId id) {
    Quoted& q = quoted_[id % kQuotedCache];
    if (q.id != id || q.text.empty()) {
      q.id = id;
      q.text = Quote(id == 0 ? std::string_view("<unnamed>") : trace_.strings.Get(id));
    }
    return q.text;
  }

  void Num(uint64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    line_.append(buf, r.ptr);
  }
  void SignedNum(int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    line_.append(buf, r.ptr);
  }
  // Microseconds with three decimals from nanoseconds: 1234567 -> 1234.567
  void Micros(uint64_t ns) {
    Num(ns / 1000);
    char frac[4] = {'.', static_cast<char>('0' + ns % 1000 / 100), static_cast<char>('0' + ns % 100 / 10),
                    static_cast<char>('0' + ns % 10)};
    line_.append(frac, 4);
  }

  // Starts an event object: {"ph":"X","pid":P,"tid":T,"ts":...
  void Begin(char ph, int64_t pid, int64_t tid) {
    line_ += first_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"";
    first_ = false;
    line_ += ph;
    line_ += "\",\"pid\":";
    SignedNum(pid);
    line_ += ",\"tid\":";
    SignedNum(tid);
  }
  /// Starts an event object whose fields the caller writes from the first ("\"ph\":..."), for
  /// events with string pids (Kineto's "Spans"): {
  void BeginObject() {
    line_ += first_ ? "\n{" : ",\n{";
    first_ = false;
  }
  /// Starts a complete event: {"ph":"X","pid":P,"tid":T,"ts":begin,"dur":end - begin (µs).
  void Complete(int64_t pid, int64_t tid, uint64_t begin_ns, uint64_t end_ns) {
    Begin('X', pid, tid);
    Key("ts");
    Micros(begin_ns);
    Key("dur");
    Micros(end_ns - begin_ns);
  }
  /// A, B, C (a grid or block size).
  void Triple(const uint32_t (&v)[3]) {
    for (int i = 0; i < 3; ++i) {
      if (i > 0) line_ += ',';
      Num(v[i]);
    }
  }
  /// A kernel's launch args, as Kineto writes them: ,"grid":[x,y,z],"block":[x,y,z],
  /// "registers per thread":N,"shared memory":bytes per block (static + dynamic).
  void KernelArgs(const KernelConfig& k) {
    line_ += ",\"grid\":[";
    Triple(k.grid);
    line_ += "],\"block\":[";
    Triple(k.block);
    line_ += "],\"registers per thread\":";
    Num(k.registers);
    line_ += ",\"shared memory\":";
    Num(uint64_t{k.static_shared} + k.dynamic_shared);
  }
  /// ,"key":v
  void Arg(const char* key, uint64_t v) {
    Key(key);
    Num(v);
  }
  void Key(const char* key) {
    line_ += ",\"";
    line_ += key;
    line_ += "\":";
  }
  void Raw(std::string_view s) { line_ += s; }
  void End() {
    line_ += '}';
    ++events_;
    if (line_.size() >= 64 * 1024) Flush();
  }
  void Flush() {
    out_->Write(line_);
    line_.clear();
    if (progress_ != nullptr) progress_->Update(progress_base_ + events_);
  }
  /// Reports progress at each flush: `base` + the events written by this writer.
  void SetProgress(ExportProgress* progress, uint64_t base) {
    progress_ = progress;
    progress_base_ = base;
  }
  uint64_t events() const { return events_; }
  const Trace& trace() const { return trace_; }

 private:
  const Trace& trace_;
  OutputSink* out_;
  static constexpr size_t kQuotedCache = 4096;
  struct Quoted {
    StringId id = 0;
    std::string text;
  };
  std::vector<Quoted> quoted_;
  std::string line_;
  bool first_ = true;
  uint64_t events_ = 0;
  ExportProgress* progress_ = nullptr;
  uint64_t progress_base_ = 0;
};

}  // namespace trainprof::collector
