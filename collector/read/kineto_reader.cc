#include "collector/read/kineto_reader.h"

#include <istream>

#include "collector/read/kineto_mapping.h"
#include "collector/read/kineto_sax.h"

namespace trainprof::collector {

namespace {
constexpr size_t kMaxErrorsPerFile = 32;  // as trace_decoder.h: further problems are only counted
}

bool LooksLikeKineto(std::span<const uint8_t> head) {
  if (IsGzip(head)) return true;
  size_t p = 0;
  if (head.size() >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) p = 3;
  while (p < head.size() && (head[p] == ' ' || head[p] == '\t' || head[p] == '\n' || head[p] == '\r')) ++p;
  // '[': a JSON array (Chrome's array form, or not a trace at all): read as JSON, so that it is
  // said to be no Kineto trace rather than a file with a wrong magic.
  return p < head.size() && (head[p] == '{' || head[p] == '[');
}

KinetoDecoded DecodeKineto(const ReadAt& read, uint64_t size, const std::string& path, const ReadOptions& options,
                           const std::function<std::string()>& source_error) {
  KinetoDecoded out;
  FileStatus& st = out.status;
  st.path = path;
  st.bytes = size;
  st.format = ImageSource::kKineto;
  size_t dropped = 0;
  auto error = [&](Loss kind, std::string what) {
    ++st.losses[kind];
    if (st.errors.size() < kMaxErrorsPerFile) {
      st.errors.push_back(std::move(what));
    } else {
      ++dropped;
    }
  };
  const bool gzip = IsGzip(read(0, 2));
  KinetoInput input(read, size, gzip);
  std::istream in(&input);
  TraceImage image;
  KinetoHeader header;
  // What the file may make the reader hold is bounded by its size (docs/kineto.md, "Limits").
  KinetoMapper mapper(&image, &out.strings, options.keep, [&](const std::string& what) { error(Loss::malformed_records, what); },
                      KinetoHeldLimit(size));
  bool at_end = false;
  // The UTF-8 byte order mark some tools write: nlohmann's parser skips it itself.
  std::string syntax = ParseKinetoJson(
      in, &header, [&](const KinetoEvent& e) { return mapper.Event(e); },
      [&](const std::string& what) { error(Loss::malformed_records, what); }, &at_end);
  if (header.stopped) {  // a limit ended the read (what it read before is kept): damage, said
    error(Loss::malformed_records, (syntax.empty() ? mapper.LimitMessage() : syntax) +
                                       (header.trace_events ? " (events before it are read)" : ""));
    syntax.clear();
  }
  // A syntax error where the text ran out is a cut file, whatever token it cut (a string, a number).
  at_end = !syntax.empty() && (at_end || input.exhausted());
  const std::string src = source_error ? source_error() : std::string();
  if (!src.empty()) {
    st.truncated = true;
    error(Loss::read_errors, src);
  }
  if (!input.error().empty()) {
    st.truncated = st.truncated || input.truncated();
    error(Loss::malformed_records, input.error());
  }
  const JsonGuard& guard = input.guard();
  if (guard.strings_cut() > 0) {
    error(Loss::malformed_records, std::to_string(guard.strings_cut()) + " JSON string" +
                                       (guard.strings_cut() == 1 ? "" : "s") + " longer than " +
                                       std::to_string(JsonGuard::kMaxStringBytes >> 10) + " KiB cut there");
  }
  if (guard.bytes_replaced() > 0) {
    error(Loss::malformed_records, std::to_string(guard.bytes_replaced()) +
                                       " bytes in strings that are not UTF-8 or are raw control characters, "
                                       "read as '?'");
  }
  if (guard.tokens_cut() > 0) {
    error(Loss::malformed_records, std::to_string(guard.tokens_cut()) + " number or literal token" +
                                       (guard.tokens_cut() == 1 ? "" : "s") + " longer than " +
                                       std::to_string(JsonGuard::kMaxBareBytes) + " bytes cut there");
  }
  const bool damaged_bytes = !src.empty() || !input.error().empty();
  if (!syntax.empty() && !(damaged_bytes && at_end)) {  // a cut gzip stream ends the JSON: said above
    if (at_end) st.truncated = true;
    error(Loss::malformed_records, std::string(at_end ? "truncated JSON: " : "JSON syntax error: ") + syntax +
                                       (header.trace_events ? " (events before it are read)" : ""));
  }
  if (!header.top_object || !header.trace_events) {
    st.errors.insert(st.errors.begin(), header.top_object
                                            ? "not a Kineto trace: a JSON object without a traceEvents array"
                                            : "not a Kineto trace: not a JSON object");
    ++st.losses[Loss::header_errors];
    if (dropped > 0) st.errors.push_back("and " + std::to_string(dropped) + " more problems");
    return out;
  }
  mapper.Finish(header, path);
  if (!image.has_timed_records) {
    // Nothing with a time: no process to show, and no start to put the merged run's axis at (it
    // would be the epoch).
    st.errors.insert(st.errors.begin(), "no event with a usable time (ts) in traceEvents: nothing to report");
    ++st.losses[Loss::header_errors];
    if (dropped > 0) st.errors.push_back("and " + std::to_string(dropped) + " more problems");
    return out;
  }
  st.usable = true;
  st.pid = image.pid;
  image.truncated = st.truncated;
  if (st.errors.empty()) {
    st.bytes_read = size;
  } else {
    st.bytes_read = gzip ? std::min<uint64_t>(input.consumed(), size) : std::min<uint64_t>(header.error_at, size);
    if (header.stopped) st.bytes_read = std::min<uint64_t>(input.consumed(), size);
    else if (syntax.empty() && input.error().empty() && src.empty()) st.bytes_read = size;  // only bad events
  }
  if (dropped > 0) st.errors.push_back("and " + std::to_string(dropped) + (dropped == 1 ? " more problem" : " more problems"));
  out.image = std::move(image);
  return out;
}

ReadResult FinishKineto(KinetoDecoded&& d, StringPool* pool) {
  ReadResult r;
  r.status = std::move(d.status);
  if (!d.image) return r;
  TraceImage& img = *d.image;
  // Local ids → pool ids, in the file's order of first use.
  std::vector<StringId> map(d.strings.size(), 0);
  for (StringId id = 1; id < map.size(); ++id) map[id] = pool->Intern(d.strings.Get(id));
  auto m = [&](StringId id) { return id < map.size() ? map[id] : StringId{0}; };
  for (NvtxEvent& e : img.nvtx) {
    e.name = m(e.name);
    e.domain = m(e.domain);
  }
  NvtxSummary local = std::move(img.nvtx_summary);
  img.nvtx_summary = NvtxSummary();
  for (RangeSamples& s : local.ranges) {
    s.key.domain = m(s.key.domain);
    s.key.name = m(s.key.name);
  }
  for (MarkCount& mk : local.marks) {
    mk.domain = m(mk.domain);
    mk.name = m(mk.name);
  }
  img.nvtx_summary.Merge(std::move(local));
  for (ThreadInfo& t : img.threads) t.name = m(t.name);
  for (CudaCall& c : img.cuda.calls) c.name = m(c.name);
  for (GpuKernel& k : img.cuda.kernels) k.name = m(k.name);
  for (GpuDevice& g : img.cuda.devices) g.name = m(g.name);
  img.cuda_digest = DigestOf(img.cuda);  // held whole: summed once, for the per-name tables
  for (HostOp& op : img.host_ops) op.name = m(op.name);
  img.role = m(img.role);
  r.image = std::move(img);
  return r;
}

}  // namespace trainprof::collector
