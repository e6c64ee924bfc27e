// JSON report: the schema is docs/report-schema.md. Integers are ns or bytes; mean_ns, std_ns,
// median_ns and percent are derived and may be fractional.
#include "collector/render.h"

namespace trainprof::collector {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json RangesJson(const std::vector<RangeRow>& rows) {
  Json out = Json::array();
  for (const RangeRow& r : rows) {
    out.push_back({{"name", r.name},
                   {"domain", r.domain},
                   {"style", r.style},
                   {"calls", r.calls},
                   {"total_ns", r.total_ns},
                   {"percent", r.percent},
                   {"mean_ns", r.mean_ns},
                   {"std_ns", r.std_ns},
                   {"min_ns", r.min_ns},
                   {"median_ns", r.median_ns},
                   {"max_ns", r.max_ns},
                   {"unbalanced", r.unbalanced}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json ReportToJson(const Report& r) {
  Json doc;
  doc["trainprof_version"] = r.trainprof_version;
  doc["format_version"] = r.format_version;
  doc["summary"] = {{"trace_files", r.files.size()},
                    {"usable_files", r.usable_files},
                    {"damaged_files", r.damaged_files},
                    {"processes", r.processes.size()},
                    {"hosts", r.hosts},
                    {"start_realtime_ns", r.start_realtime_ns},
                    {"span_ns", r.span_ns},
                    {"top", r.options.top}};

  Json files = Json::array();
  for (const FileStatus& f : r.files) {
    files.push_back({{"path", f.path},
                     {"pid", OrNull(f.pid)},
                     {"bytes", f.bytes},
                     {"bytes_read", f.bytes_read},
                     {"truncated", f.truncated},
                     {"usable", f.usable},
                     {"errors", f.errors}});
  }
  doc["files"] = std::move(files);

  Json procs = Json::array();
  for (const ProcessRow& p : r.processes) {
    Json threads = Json::array();
    for (const ThreadRow& t : p.threads) threads.push_back({{"tid", t.tid}, {"name", t.name}, {"events", t.events}});
    Json exit = {{"kind", p.exit_kind},
                 {"code", OrNull(p.exit_code)},
                 {"source", p.exit_source.empty() ? Json(nullptr) : Json(p.exit_source)}};
    procs.push_back({{"pid", p.pid},
                     {"ppid", p.ppid},
                     {"parent_pid", p.parent >= 0 ? Json(r.processes[p.parent].pid) : Json(nullptr)},
                     {"host", p.host},
                     {"rank", OrNull(p.rank)},
                     {"local_rank", OrNull(p.local_rank)},
                     {"world_size", OrNull(p.world_size)},
                     {"role", p.role},
                     {"command", p.command},
                     {"executable", p.executable},
                     {"files", p.files},
                     {"start_realtime_ns", p.start_realtime_ns},
                     {"start_ns", p.start_ns},
                     {"end_ns", p.end_ns},
                     {"wall_ns", p.wall_ns},
                     {"exit", std::move(exit)},
                     {"events", p.events},
                     {"unbalanced_ranges", p.unbalanced},
                     {"dropped_records", p.dropped},
                     {"truncated", p.truncated},
                     {"threads", std::move(threads)},
                     {"nvtx_ranges", RangesJson(p.nvtx_ranges)},
                     {"nvtx_ranges_omitted", p.nvtx_ranges_omitted}});
  }
  doc["processes"] = std::move(procs);
  doc["nvtx_ranges"] = RangesJson(r.nvtx_ranges);
  doc["nvtx_ranges_omitted"] = r.nvtx_ranges_omitted;
  Json marks = Json::array();
  for (const MarkRow& m : r.nvtx_marks) marks.push_back({{"name", m.name}, {"domain", m.domain}, {"count", m.count}});
  doc["nvtx_marks"] = std::move(marks);
  doc["nvtx_marks_omitted"] = r.nvtx_marks_omitted;
  doc["warnings"] = r.warnings;
  return doc;
}

std::string RenderJson(const Report& report) {
  // Names come from traced programs and may hold invalid UTF-8: replace, never throw.
  return ReportToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace trainprof::collector
