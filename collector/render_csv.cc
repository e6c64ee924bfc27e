// CSV report: one table per file, a header row, RFC 4180 (CRLF, fields quoted when they hold a
// comma, quote, CR or LF). Times in ns and sizes in bytes, as in the JSON report.
#include <charconv>
#include <optional>

#include "collector/render.h"

namespace trainprof::collector {
namespace {

// Plain decimal notation (spreadsheets and humans read "122000000", not "1.22e+08"), as short as
// round-trips.
std::string Num(double v) {
  char buf[512];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : "0";
}
template <typename T>
std::string Num(T v) {
  return std::to_string(v);
}
template <typename T>
std::string Opt(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "";
}

class Csv {
 public:
  explicit Csv(std::string name) { table_.name = std::move(name); }
  Csv& Row(const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) table_.text += ',';
      table_.text += CsvField(fields[i]);
    }
    table_.text += "\r\n";
    return *this;
  }
  CsvTable Take() { return std::move(table_); }

 private:
  CsvTable table_;
};

const std::vector<std::string> kRangeHeader = {"name",    "domain", "style",     "calls",  "total_ns",
                                               "percent", "mean_ns", "std_ns",   "min_ns", "median_ns",
                                               "max_ns",  "unbalanced"};

std::vector<std::string> RangeFields(const RangeRow& r) {
  return {r.name,         r.domain,         r.style,        Num(r.calls),     Num(r.total_ns),
          Num(r.percent), Num(r.mean_ns),   Num(r.std_ns),  Num(r.min_ns),    Num(r.median_ns),
          Num(r.max_ns),  Num(r.unbalanced)};
}

}  // namespace

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::vector<CsvTable> RenderCsv(const Report& r) {
  std::vector<CsvTable> out;

  Csv files("files.csv");
  files.Row({"path", "pid", "bytes", "bytes_read", "truncated", "usable", "errors"});
  for (const FileStatus& f : r.files) {
    std::string errors;
    for (const std::string& e : f.errors) errors += (errors.empty() ? "" : "; ") + e;
    files.Row({f.path, Opt(f.pid), Num(f.bytes), Num(f.bytes_read), f.truncated ? "true" : "false",
               f.usable ? "true" : "false", errors});
  }
  out.push_back(files.Take());

  Csv procs("processes.csv");
  procs.Row({"pid", "ppid", "parent_pid", "host", "rank", "local_rank", "world_size", "role", "command", "executable",
             "start_realtime_ns", "start_ns", "end_ns", "wall_ns", "exit_kind", "exit_code", "events",
             "unbalanced_ranges", "dropped_records", "truncated"});
  for (const ProcessRow& p : r.processes) {
    procs.Row({Num(p.pid), Num(p.ppid), p.parent >= 0 ? Num(r.processes[p.parent].pid) : "", p.host, Opt(p.rank),
               Opt(p.local_rank), Opt(p.world_size), p.role, p.command, p.executable, Num(p.start_realtime_ns),
               Num(p.start_ns), Num(p.end_ns), Num(p.wall_ns), p.exit_kind, Opt(p.exit_code), Num(p.events),
               Num(p.unbalanced), Num(p.dropped), p.truncated ? "true" : "false"});
  }
  out.push_back(procs.Take());

  Csv threads("threads.csv");
  threads.Row({"pid", "host", "tid", "name", "events"});
  for (const ProcessRow& p : r.processes) {
    for (const ThreadRow& t : p.threads) threads.Row({Num(p.pid), p.host, Num(t.tid), t.name, Num(t.events)});
  }
  out.push_back(threads.Take());

  Csv ranges("nvtx_ranges.csv");
  ranges.Row(kRangeHeader);
  for (const RangeRow& row : r.nvtx_ranges) ranges.Row(RangeFields(row));
  out.push_back(ranges.Take());

  Csv marks("nvtx_marks.csv");
  marks.Row({"name", "domain", "count"});
  for (const MarkRow& m : r.nvtx_marks) marks.Row({m.name, m.domain, Num(m.count)});
  out.push_back(marks.Take());

  if (r.options.by_process) {
    Csv per("nvtx_ranges_by_process.csv");
    std::vector<std::string> header = {"pid", "host"};
    header.insert(header.end(), kRangeHeader.begin(), kRangeHeader.end());
    per.Row(header);
    for (const ProcessRow& p : r.processes) {
      for (const RangeRow& row : p.nvtx_ranges) {
        std::vector<std::string> fields = {Num(p.pid), p.host};
        auto rest = RangeFields(row);
        fields.insert(fields.end(), rest.begin(), rest.end());
        per.Row(fields);
      }
    }
    out.push_back(per.Take());
  }
  return out;
}

}  // namespace trainprof::collector
