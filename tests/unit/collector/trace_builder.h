// Test utility: writes trace files exactly as format/trainprof/trace_format.h describes (file
// header + metadata TLVs + chunks with committed counts + records, encoded by the schema's
// encoders, format/trainprof/records.h), so tests synthesise traces with known numbers and known
// byte offsets.
//
//   TraceBuilder b(/*pid=*/100, /*ppid=*/1);
//   int t = b.Thread(100);                       // writer thread (thread_index 0, tid 100)
//   b.Push(t, 1'000, "step");  b.Pop(t, 6'000);  // absolute CLOCK_MONOTONIC ns
//   std::string path = b.WriteTo(dir);           // dir/pid-100.trace
//
// CUDA records (format v2) take absolute times too: API enter/exit are timed records of the calling
// thread; GPU activity (Kernel, Memcpy, Memset, Sync, Overhead) is written, as CUPTI's buffer
// drainer does, with zs/ze relative to the base_ns of the chunk it lands in, in any time order:
//
//   int g = b.Thread(999);                                    // the thread draining CUPTI buffers
//   b.ApiCall(t, 2'000, 7'000, "cudaLaunchKernel_v7000", 11); // enter at 2 µs, exit at 7 µs
//   b.Kernel(g, {.start = 9'000, .end = 12'000, .name = "_Z3fooPf", .correlation = 11});
//
// Records go into the thread's current chunk; a record that does not fit claims the next slot
// (chunk base_ns = the thread's previous record time, as the writer does). Damage hooks
// (SetCommitted, ZeroSlot, Raw, header overrides) and RecordEnds() serve the damage tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainprof/records.h"
#include "trainprof/trace_format.h"

namespace trainprof::test {

namespace fmt = trainprof::format;
namespace rec = trainprof::format::rec;

class TraceBuilder {
 public:
  explicit TraceBuilder(int32_t pid, int32_t ppid = 1, uint64_t start_ns = 1'000'000'000)
      : pid_(pid), ppid_(ppid), start_ns_(start_ns), start_realtime_ns_(1'700'000'000'000'000'000ull + start_ns) {
    command_ = {"/usr/bin/python3", "train.py"};
  }

  // ----- header and metadata -----
  TraceBuilder& Host(std::string h) { host_ = std::move(h); return *this; }
  TraceBuilder& Command(std::vector<std::string> argv) { command_ = std::move(argv); return *this; }
  TraceBuilder& Executable(std::string e) { executable_ = std::move(e); return *this; }
  TraceBuilder& Env(std::string name, std::string value) { env_.emplace_back(std::move(name), std::move(value)); return *this; }
  TraceBuilder& Flags(uint32_t f) { flags_ = f; return *this; }
  TraceBuilder& ImageIndex(uint32_t i) { image_index_ = i; return *this; }
  /// FileHeader identity: pid namespace inode, start ticks, boot id (a byte repeated 16 times;
  /// 0 = unknown). Default: all unknown, as in files of older trainprof versions.
  TraceBuilder& Identity(uint64_t pid_namespace, uint64_t start_ticks, uint8_t boot = 0xb0) {
    pid_namespace_ = pid_namespace;
    start_ticks_ = start_ticks;
    std::memset(boot_id_, boot, sizeof boot_id_);
    return *this;
  }
  /// FileHeader::run_id: a byte repeated 16 times (0 = none).
  TraceBuilder& RunId(uint8_t id) { std::memset(run_id_, id, sizeof run_id_); return *this; }
  TraceBuilder& StartRealtime(uint64_t ns) { start_realtime_ns_ = ns; return *this; }
  TraceBuilder& HeaderEnd(fmt::EndKind kind, int32_t code, uint64_t end_ns) {
    end_kind_ = kind;
    end_code_ = code;
    end_ns_ = end_ns;
    return *this;
  }
  TraceBuilder& Dropped(uint64_t n) { dropped_ = n; return *this; }
  TraceBuilder& SamplesDropped(uint64_t n) { samples_dropped_ = n; return *this; }
  TraceBuilder& Version(uint32_t v) { version_ = v; return *this; }
  TraceBuilder& Layout(uint32_t header_region_size, uint32_t chunk_size) {
    header_region_ = header_region_size;
    chunk_size_ = chunk_size;
    return *this;
  }
  TraceBuilder& ChunksClaimed(uint32_t n) { chunks_claimed_ = n; return *this; }
  /// Raw metadata TLV appended after the others (key, bytes).
  TraceBuilder& RawMeta(uint16_t key, std::string value, std::optional<uint32_t> length = std::nullopt) {
    raw_meta_.push_back({key, std::move(value), length});
    return *this;
  }

  int32_t pid() const { return pid_; }
  uint64_t start_ns() const { return start_ns_; }

  // ----- threads -----
  /// A writer thread; its thread_index is the order of creation.
  int Thread(uint32_t tid) {
    threads_.push_back({tid, static_cast<uint32_t>(threads_.size()), -1, 0, start_ns_});
    return static_cast<int>(threads_.size() - 1);
  }

  // ----- definitions -----
  /// Id of `s`, defined (kString through thread th) on first use. "" is id 0.
  uint64_t String(int th, std::string_view s) {
    if (s.empty()) return 0;
    auto it = strings_.find(std::string(s));
    if (it != strings_.end()) return it->second;
    uint64_t id = next_string_++;
    strings_.emplace(std::string(s), id);
    Untimed(th, rec::String{.id = id, .bytes = s});
    return id;
  }
  /// Id of the domain named `name` (kString + kDomain on first use).
  uint64_t Domain(int th, std::string_view name) {
    auto it = domains_.find(std::string(name));
    if (it != domains_.end()) return it->second;
    uint64_t name_id = String(th, name);
    uint64_t id = next_domain_++;
    domains_.emplace(std::string(name), id);
    Untimed(th, rec::Domain{.domain = id, .name = name_id});
    return id;
  }
  void ThreadName(int th, uint32_t tid, std::string_view name) {
    uint64_t id = String(th, name);
    Untimed(th, rec::ThreadName{.tid = tid, .name = id});
  }
  /// nvtxNameCategory (domain 0) / nvtxDomainNameCategory: kCategoryName.
  void CategoryName(int th, uint64_t domain, uint64_t category, std::string_view name) {
    uint64_t id = String(th, name);
    Untimed(th, rec::CategoryName{.domain = domain, .category = category, .name = id});
  }
  /// nvtxDomainDestroy at t: kDomainDestroy.
  void DomainDestroy(int th, uint64_t t, uint64_t domain) { Timed(th, t, rec::DomainDestroy{.domain = domain}); }
  void Role(int th, std::string_view name) {
    uint64_t id = String(th, name);
    Untimed(th, rec::Role{.name = id});
  }
  /// A rank variable learned after start ("NAME=value", PROCESS_ENV).
  void ProcessEnv(int th, std::string_view name_value) {
    uint64_t id = String(th, name_value);
    Untimed(th, rec::ProcessEnv{.name = id});
  }

  // ----- timed records (absolute times) -----
  void Push(int th, uint64_t t, std::string_view name, uint64_t domain = 0, uint64_t category = 0) {
    uint64_t id = String(th, name);
    Timed(th, t, rec::RangePush{.domain = domain, .name = id, .category = category});
  }
  void Pop(int th, uint64_t t, uint64_t domain = 0) { Timed(th, t, rec::RangePop{.domain = domain}); }
  void Mark(int th, uint64_t t, std::string_view name, uint64_t domain = 0, uint64_t category = 0) {
    uint64_t id = String(th, name);
    Timed(th, t, rec::Mark{.domain = domain, .name = id, .category = category});
  }
  void Start(int th, uint64_t t, std::string_view name, uint64_t range_id, uint64_t domain = 0) {
    uint64_t id = String(th, name);
    Timed(th, t, rec::RangeStart{.domain = domain, .name = id, .category = 0, .range_id = range_id});
  }
  void EndRange(int th, uint64_t t, uint64_t range_id) { Timed(th, t, rec::RangeEnd{.range_id = range_id}); }
  void ProcessEnd(int th, uint64_t t, fmt::EndKind kind, int64_t code) {
    Timed(th, t, rec::ProcessEnd{.kind = static_cast<uint64_t>(kind), .code = code});
  }
  void Fork(int th, uint64_t t, int32_t child) { Timed(th, t, rec::Fork{.pid = static_cast<uint64_t>(child)}); }
  /// A FORK record of a child in another pid namespace (fmt::kForkOtherNamespace).
  void ForkIntoOtherNamespace(int th, uint64_t t, int32_t child) {
    Timed(th, t, rec::Fork{.pid = static_cast<uint64_t>(static_cast<uint32_t>(child)) | fmt::kForkOtherNamespace});
  }
  void Exec(int th, uint64_t t, std::string_view path) {
    uint64_t id = String(th, path);
    Timed(th, t, rec::Exec{.path = id});
  }
  void ChildExit(int th, uint64_t t, int32_t child, fmt::EndKind kind, int64_t code) {
    Timed(th, t, rec::ChildExit{.pid = static_cast<uint64_t>(child), .kind = static_cast<uint64_t>(kind), .code = code});
  }
  /// NVTX misuse the writer noticed (MISUSE record: what, detail).
  void Misuse(int th, uint64_t t, fmt::MisuseKind what, uint64_t detail = 0) {
    Timed(th, t, rec::Misuse{.what = static_cast<uint64_t>(what), .detail = detail});
  }
  void Capture(int th, uint64_t t, bool on, fmt::CaptureReason reason) {
    Timed(th, t, rec::Capture{.on = on ? 1u : 0u, .reason = static_cast<uint64_t>(reason)});
  }
  /// A domain created with a NULL name (nvtxDomainCreateA(NULL)): kDomain with name id 0.
  uint64_t UnnamedDomain(int th) {
    uint64_t id = next_domain_++;
    Untimed(th, rec::Domain{.domain = id, .name = 0});
    return id;
  }
  // ----- stacks (format v3; docs/trace-format.md, "Stacks") -----
  /// A Python frame of a STACK record: function, file, line.
  struct PyFrame {
    std::string function, file;
    uint64_t line = 0;
  };
  /// A STACK record (id = the next free one, returned): native return addresses, then Python
  /// frames, innermost first, encoded as the writer does.
  uint64_t Stack(int th, const std::vector<uint64_t>& native, const std::vector<PyFrame>& python = {}) {
    std::vector<uint8_t> bytes;
    for (uint64_t a : native) Put(&bytes, a << 1);
    for (const PyFrame& f : python) {
      const uint64_t fn = String(th, f.function), file = String(th, f.file);
      Put(&bytes, fn << 1 | 1);
      Put(&bytes, file);
      Put(&bytes, f.line);
    }
    return StackBytes(th, std::string(bytes.begin(), bytes.end()));
  }
  /// A STACK record with these frame bytes as they are (damage tests).
  uint64_t StackBytes(int th, const std::string& bytes) {
    const uint64_t id = next_stack_++;
    Untimed(th, rec::Stack{.id = id, .bytes = bytes});
    return id;
  }
  /// EVENT_STACK: the stack of the thread's previous timed record.
  void EventStack(int th, uint64_t stack) { Untimed(th, rec::EventStack{.stack = stack}); }
  /// MODULE: a loaded object with its bias, runtime span, path and build id (hex, "" = none).
  void Module(int th, uint64_t bias, uint64_t start, uint64_t end, std::string_view path, std::string_view build_id = "") {
    const uint64_t p = String(th, path), b = String(th, build_id);
    Untimed(th, rec::Module{.bias = bias, .start = start, .end = end, .path = p, .build_id = b});
  }
  /// SAMPLE at t.
  void Sample(int th, uint64_t t, uint64_t stack, uint64_t python_missed = 0) {
    Timed(th, t, rec::Sample{.stack = stack, .python_missed = python_missed});
  }
  /// SAMPLE_THREAD_LOST at t: the thread got no timer (reason 1 the signal-queue share, 2
  /// timer_create, 3 timer_settime; errno; RLIMIT_SIGPENDING; the user's queued signals).
  void SampleThreadLost(int th, uint64_t t, uint64_t reason, uint64_t error, uint64_t limit, uint64_t queued = 0) {
    Timed(th, t, rec::SampleThreadLost{.reason = reason, .error = error, .limit = limit, .queued = queued});
  }
  /// SAMPLE_PAUSED at t: cpu_ns of the thread's CPU time not sampled (it blocked the signal).
  void SamplePaused(int th, uint64_t t, uint64_t cpu_ns) { Timed(th, t, rec::SamplePaused{.cpu_ns = cpu_ns}); }

  // ----- CUDA records (format v2; absolute times) -----
  /// CUDA_API_ENTER: a runtime (or driver) call begins.
  void ApiEnter(int th, uint64_t t, std::string_view name, uint64_t correlation,
                fmt::CudaApi api = fmt::CudaApi::kRuntime, uint32_t cbid = 0) {
    uint64_t id = String(th, name);
    Timed(th, t, rec::CudaApiEnter{.api = static_cast<uint64_t>(api), .cbid = cbid, .name = id, .correlation = correlation});
  }
  /// CUDA_API_EXIT: the call with this correlation id returned `status`.
  void ApiExit(int th, uint64_t t, uint64_t correlation, uint64_t status = 0) {
    Timed(th, t, rec::CudaApiExit{.correlation = correlation, .status = status});
  }
  /// A call from `enter` to `exit` (enter and exit records).
  void ApiCall(int th, uint64_t enter, uint64_t exit, std::string_view name, uint64_t correlation,
               uint64_t status = 0, fmt::CudaApi api = fmt::CudaApi::kRuntime) {
    ApiEnter(th, enter, name, correlation, api);
    ApiExit(th, exit, correlation, status);
  }

  struct KernelSpec {
    uint64_t start = 0, end = 0;  ///< absolute ns (0: a zero timestamp)
    std::string name;             ///< the mangled name
    uint64_t correlation = 0;
    uint32_t device = 0, context = 1, stream = 7;
    uint32_t grid[3] = {1, 1, 1};
    uint32_t block[3] = {128, 1, 1};
    uint32_t registers = 32, static_shared = 0, dynamic_shared = 0, graph = 0;
    fmt::KernelLaunch launch = fmt::KernelLaunch::kRegular;
  };
  void Kernel(int th, const KernelSpec& k) {
    uint64_t id = String(th, k.name);
    Gpu(th, k.start, k.end,
        rec::GpuKernel{.device = k.device, .context = k.context, .stream = k.stream, .correlation = k.correlation,
                       .name = id, .grid_x = k.grid[0], .grid_y = k.grid[1], .grid_z = k.grid[2],
                       .block_x = k.block[0], .block_y = k.block[1], .block_z = k.block[2], .registers = k.registers,
                       .static_shared = k.static_shared, .dynamic_shared = k.dynamic_shared, .graph = k.graph,
                       .launch = static_cast<uint64_t>(k.launch)});
  }
  struct MemcpySpec {
    uint64_t start = 0, end = 0;
    fmt::MemcpyKind kind = fmt::MemcpyKind::kHtoD;
    uint64_t bytes = 0;
    uint64_t correlation = 0;
    fmt::MemoryKind src = fmt::MemoryKind::kPinned, dst = fmt::MemoryKind::kDevice;
    bool async = true;
    uint32_t device = 0, context = 1, stream = 7, src_device = 0, dst_device = 0, graph = 0;
  };
  void Memcpy(int th, const MemcpySpec& m) {
    Gpu(th, m.start, m.end,
        rec::GpuMemcpy{.device = m.device, .context = m.context, .stream = m.stream, .correlation = m.correlation,
                       .copy_kind = static_cast<uint64_t>(m.kind), .src_kind = static_cast<uint64_t>(m.src),
                       .dst_kind = static_cast<uint64_t>(m.dst), .bytes_copied = m.bytes, .src_device = m.src_device,
                       .dst_device = m.dst_device, .flags = m.async ? 1u : 0u, .graph = m.graph});
  }
  struct MemsetSpec {
    uint64_t start = 0, end = 0;
    uint64_t bytes = 0;
    uint64_t correlation = 0;
    uint32_t value = 0;
    fmt::MemoryKind memory = fmt::MemoryKind::kDevice;
    bool async = true;
    uint32_t device = 0, context = 1, stream = 7, graph = 0;
  };
  void Memset(int th, const MemsetSpec& m) {
    Gpu(th, m.start, m.end,
        rec::GpuMemset{.device = m.device, .context = m.context, .stream = m.stream, .correlation = m.correlation,
                       .bytes_set = m.bytes, .value = m.value, .memory = static_cast<uint64_t>(m.memory),
                       .flags = m.async ? 1u : 0u, .graph = m.graph});
  }
  /// GPU_SYNC; stream < 0: none.
  void Sync(int th, uint64_t start, uint64_t end, fmt::SyncType type, uint64_t correlation, int64_t stream = 7,
            uint32_t context = 1) {
    Gpu(th, start, end,
        rec::GpuSync{.context = context, .stream_plus_1 = stream < 0 ? 0 : static_cast<uint64_t>(stream) + 1,
                     .type = static_cast<uint64_t>(type), .correlation = correlation});
  }
  void Overhead(int th, uint64_t start, uint64_t end, uint32_t kind, uint32_t object_kind, uint64_t object_id) {
    Gpu(th, start, end, rec::GpuOverhead{.kind = kind, .object_kind = object_kind, .object_id = object_id});
  }
  void Device(int th, uint32_t id, std::string_view name, uint32_t cc_major = 9, uint32_t cc_minor = 0,
              uint32_t sms = 132, uint64_t memory = 80ull << 30) {
    uint64_t n = String(th, name);
    Untimed(th, rec::GpuDevice{.device = id, .name = n, .cc_major = cc_major, .cc_minor = cc_minor, .sms = sms,
                                .memory = memory});
  }
  void Context(int th, uint32_t context, uint32_t device) {
    Untimed(th, rec::GpuContext{.context = context, .device = device});
  }
  void GpuDropped(int th, uint64_t t, uint64_t count) { Timed(th, t, rec::GpuDropped{.count = count}); }
  void GpuStatus(int th, uint64_t t, fmt::GpuState state, uint64_t cupti_result = 0, uint64_t cupti_version = 18,
                 uint64_t driver_version = 12040, std::string_view message = "") {
    uint64_t m = String(th, message);
    Timed(th, t, rec::GpuStatus{.state = static_cast<uint64_t>(state), .result = cupti_result,
                                .cupti_version = cupti_version, .driver_version = driver_version, .message = m});
  }

  /// Any bytes as one record (no time bookkeeping).
  void Raw(int th, std::vector<uint8_t> bytes) { Append(th, std::move(bytes)); }
  /// A record with a raw numeric field list (tag + varints).
  void RawFields(int th, uint8_t tag, std::vector<uint64_t> fields) {
    std::vector<uint8_t> r = {tag};
    for (uint64_t f : fields) Put(&r, f);
    Append(th, std::move(r));
  }

  // ----- damage hooks -----
  /// Chunks in claim order (= slot order, counting zero slots).
  size_t chunks() const { return chunks_.size(); }
  void SetCommitted(size_t chunk, uint32_t committed) { chunks_.at(chunk).committed_override = committed; }
  /// A slot that was claimed but never initialised (all zeros).
  void ZeroSlot() {
    Chunk c;
    c.zero = true;
    chunks_.push_back(std::move(c));
  }
  /// The next record of thread th starts a new chunk.
  void NewChunk(int th) { threads_.at(th).chunk = -1; }

  size_t records() const { return records_; }

  // ----- output -----
  std::vector<uint8_t> Build() const {
    std::vector<uint8_t> out(header_region_ + chunks_.size() * uint64_t{chunk_size_}, 0);
    std::memcpy(out.data(), fmt::kFileMagic, sizeof fmt::kFileMagic);
    using H = fmt::FileHeader;
    Store<uint32_t>(&out, offsetof(H, version), version_);
    Store<uint32_t>(&out, offsetof(H, header_region_size), header_region_);
    Store<uint32_t>(&out, offsetof(H, chunk_size), chunk_size_);
    Store<uint32_t>(&out, offsetof(H, flags), flags_);
    Store<int32_t>(&out, offsetof(H, pid), pid_);
    Store<int32_t>(&out, offsetof(H, ppid), ppid_);
    Store<uint64_t>(&out, offsetof(H, start_realtime_ns), start_realtime_ns_);
    Store<uint64_t>(&out, offsetof(H, start_monotonic_ns), start_ns_);
    Store<uint32_t>(&out, offsetof(H, image_index), image_index_);
    Store<uint64_t>(&out, offsetof(H, pid_namespace), pid_namespace_);
    Store<uint64_t>(&out, offsetof(H, start_ticks), start_ticks_);
    std::memcpy(out.data() + offsetof(H, boot_id), boot_id_, sizeof boot_id_);
    std::memcpy(out.data() + offsetof(H, run_id), run_id_, sizeof run_id_);
    Store<uint32_t>(&out, offsetof(H, end_kind), static_cast<uint32_t>(end_kind_));
    Store<int32_t>(&out, offsetof(H, end_code), end_code_);
    Store<uint64_t>(&out, offsetof(H, end_monotonic_ns), end_ns_);
    Store<uint64_t>(&out, offsetof(H, records_dropped), dropped_);
    Store<uint64_t>(&out, offsetof(H, samples_dropped), samples_dropped_);
    Store<uint32_t>(&out, offsetof(H, chunks_claimed),
                    chunks_claimed_ ? *chunks_claimed_ : static_cast<uint32_t>(chunks_.size()));

    std::vector<uint8_t> meta;
    auto tlv = [&](uint16_t key, const std::string& v, std::optional<uint32_t> len = std::nullopt) {
      uint8_t k[6];
      uint32_t n = len ? *len : static_cast<uint32_t>(v.size());
      std::memcpy(k, &key, 2);
      std::memcpy(k + 2, &n, 4);
      meta.insert(meta.end(), k, k + 6);
      meta.insert(meta.end(), v.begin(), v.end());
    };
    tlv(static_cast<uint16_t>(fmt::MetaKey::kHost), host_);
    tlv(static_cast<uint16_t>(fmt::MetaKey::kVersion), "test");
    if (!executable_.empty()) tlv(static_cast<uint16_t>(fmt::MetaKey::kExecutable), executable_);
    for (const auto& [k, v] : env_) tlv(static_cast<uint16_t>(fmt::MetaKey::kEnv), k + "=" + v);
    std::string cmdline;
    for (size_t i = 0; i < command_.size(); ++i) {
      if (i > 0) cmdline += '\0';
      cmdline += command_[i];
    }
    tlv(static_cast<uint16_t>(fmt::MetaKey::kCommandLine), cmdline);
    for (const auto& m : raw_meta_) tlv(m.key, m.value, m.length);
    const uint32_t meta_off = sizeof(fmt::FileHeader);
    if (meta_off + meta.size() > header_region_) throw std::runtime_error("metadata does not fit the header region");
    std::memcpy(out.data() + meta_off, meta.data(), meta.size());
    Store<uint32_t>(&out, offsetof(H, metadata_offset), meta_off);
    Store<uint32_t>(&out, offsetof(H, metadata_size), static_cast<uint32_t>(meta.size()));

    for (size_t k = 0; k < chunks_.size(); ++k) {
      const Chunk& c = chunks_[k];
      if (c.zero) continue;
      const uint64_t off = header_region_ + k * uint64_t{chunk_size_};
      using C = fmt::ChunkHeader;
      Store<uint32_t>(&out, off + offsetof(C, magic), fmt::kChunkMagic);
      Store<uint32_t>(&out, off + offsetof(C, tid), threads_[c.thread].tid);
      Store<uint32_t>(&out, off + offsetof(C, thread_index), threads_[c.thread].index);
      Store<uint32_t>(&out, off + offsetof(C, thread_seq), c.seq);
      Store<uint64_t>(&out, off + offsetof(C, base_ns), c.base_ns);
      Store<uint32_t>(&out, off + offsetof(C, committed),
                      c.committed_override ? *c.committed_override : static_cast<uint32_t>(c.data.size()));
      std::memcpy(out.data() + off + sizeof(C), c.data.data(), c.data.size());
    }
    return out;
  }

  /// File offsets at which each record ends, ascending (for truncation tests).
  std::vector<uint64_t> RecordEnds() const {
    std::vector<uint64_t> ends;
    for (size_t k = 0; k < chunks_.size(); ++k) {
      const uint64_t data = header_region_ + k * uint64_t{chunk_size_} + sizeof(fmt::ChunkHeader);
      for (uint32_t e : chunks_[k].record_ends) ends.push_back(data + e);
    }
    return ends;
  }

  std::string FileName() const {
    return "pid-" + std::to_string(pid_) + (image_index_ == 0 ? "" : "." + std::to_string(image_index_)) + ".trace";
  }

  /// Writes dir/<name> (default pid-<PID>[.<N>].trace) and returns its path.
  std::string WriteTo(const std::string& dir, const std::string& name = "") const {
    return WriteBytes(dir + "/" + (name.empty() ? FileName() : name), Build());
  }

  static std::string WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("cannot write " + path);
    return path;
  }

 private:
  struct ThreadState {
    uint32_t tid;
    uint32_t index;
    int chunk;  // current chunk, -1 = none
    uint32_t next_seq;
    uint64_t last_ns;
  };
  struct Chunk {
    int thread = 0;
    uint32_t seq = 0;
    uint64_t base_ns = 0;
    std::vector<uint8_t> data;
    std::vector<uint32_t> record_ends;
    std::optional<uint32_t> committed_override;
    bool zero = false;
  };
  struct RawMetaEntry {
    uint16_t key;
    std::string value;
    std::optional<uint32_t> length;
  };

  static void Put(std::vector<uint8_t>* out, uint64_t v) {
    uint8_t buf[10];
    uint8_t* end = fmt::PutVarint(buf, v);
    out->insert(out->end(), buf, end);
  }
  template <typename T>
  static void Store(std::vector<uint8_t>* out, uint64_t off, T v) {
    std::memcpy(out->data() + off, &v, sizeof v);
  }

  // Records are encoded by the schema's encoders (format/trainprof/records.h), as the writer does.
  template <typename R>
  static std::vector<uint8_t> Encode(const R& r, uint64_t dt = 0) {
    std::vector<uint8_t> out(fmt::EncodedBound(r));
    uint8_t* end = nullptr;
    if constexpr (R::kClass == fmt::RecordClass::kTimed) {
      end = fmt::EncodeTimed(out.data(), dt, r);
    } else {
      end = fmt::EncodeUntimed(out.data(), r);
    }
    out.resize(static_cast<size_t>(end - out.data()));
    return out;
  }
  template <typename R>
  void Untimed(int th, const R& r) {
    static_assert(R::kClass == fmt::RecordClass::kDefinition);
    Append(th, Encode(r));
  }
  template <typename R>
  void Timed(int th, uint64_t t, const R& r) {
    ThreadState& ts = threads_.at(th);
    if (t < ts.last_ns) throw std::logic_error("records of one thread must not go back in time");
    Append(th, Encode(r, t - ts.last_ns));
    ts.last_ns = t;
  }
  // A GPU activity record: zs/ze relative to the base of the chunk it goes into (a new chunk's base
  // is the thread's last record time, as in Append).
  template <typename R>
  void Gpu(int th, uint64_t start, uint64_t end, R r) {
    static_assert(R::kClass == fmt::RecordClass::kGpuActivity);
    ThreadState& ts = threads_.at(th);
    auto encode = [&](uint64_t base) {
      r.zs = static_cast<int64_t>(start - base);
      r.ze = static_cast<int64_t>(end - base);
      return Encode(r);
    };
    const size_t room = chunk_size_ - sizeof(fmt::ChunkHeader);
    std::vector<uint8_t> bytes = encode(ts.chunk < 0 ? ts.last_ns : chunks_[ts.chunk].base_ns);
    if (ts.chunk < 0 || chunks_[ts.chunk].data.size() + bytes.size() > room) {
      ts.chunk = -1;  // Append starts a chunk based at ts.last_ns
      bytes = encode(ts.last_ns);
    }
    Append(th, std::move(bytes));
  }
  void Append(int th, std::vector<uint8_t> r) {
    ThreadState& ts = threads_.at(th);
    const size_t room = chunk_size_ - sizeof(fmt::ChunkHeader);
    if (r.size() > room) throw std::logic_error("record larger than a chunk");
    if (ts.chunk < 0 || chunks_[ts.chunk].data.size() + r.size() > room) {
      Chunk c;
      c.thread = th;
      c.seq = ts.next_seq++;
      c.base_ns = ts.last_ns;
      chunks_.push_back(std::move(c));
      ts.chunk = static_cast<int>(chunks_.size() - 1);
    }
    Chunk& c = chunks_[ts.chunk];
    c.data.insert(c.data.end(), r.begin(), r.end());
    c.record_ends.push_back(static_cast<uint32_t>(c.data.size()));
    ++records_;
  }

  int32_t pid_, ppid_;
  uint64_t start_ns_, start_realtime_ns_;
  std::string host_ = "node0";
  std::vector<std::string> command_;
  std::string executable_ = "/usr/bin/python3.11";
  std::vector<std::pair<std::string, std::string>> env_;
  std::vector<RawMetaEntry> raw_meta_;
  uint32_t flags_ = 0;
  uint32_t image_index_ = 0;
  uint64_t pid_namespace_ = 0, start_ticks_ = 0;
  uint8_t boot_id_[16] = {}, run_id_[16] = {};
  fmt::EndKind end_kind_ = fmt::EndKind::kNone;
  int32_t end_code_ = 0;
  uint64_t end_ns_ = 0;
  uint64_t dropped_ = 0;
  uint64_t samples_dropped_ = 0;
  uint32_t version_ = fmt::kFormatVersion;
  uint64_t next_stack_ = 1;
  uint32_t header_region_ = fmt::kHeaderRegionSize;
  uint32_t chunk_size_ = fmt::kDefaultChunkSize;
  std::optional<uint32_t> chunks_claimed_;
  std::vector<ThreadState> threads_;
  std::vector<Chunk> chunks_;
  std::map<std::string, uint64_t> strings_;
  std::map<std::string, uint64_t> domains_;
  uint64_t next_string_ = 1;
  uint64_t next_domain_ = 1;
  size_t records_ = 0;
};

}  // namespace trainprof::test
