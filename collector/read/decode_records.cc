// One chunk's records (trace_decoder.h): the dispatcher, and a decoder per record family.
#include "collector/read/trace_decoder.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "collector/read/record_scan.h"
#include "trainprof/phases.h"
#include "trainprof/torch_ops.h"

namespace trainprof::collector::decode {

namespace fr = format::rec;
using namespace scan;  // NOLINT: the record scanning constants and ReadVarints

uint32_t Decoder::StringRefSlow(uint64_t raw) {
  if (raw == 0) return 0;
  uint32_t* ref;
  if (raw < small_ids_) {
    if (small_string_ref_.size() <= raw) {
      small_string_ref_.resize(std::max<uint64_t>({raw + 1, 256, small_string_ref_.size() * 2}), 0);
    }
    ref = &small_string_ref_[raw];
    if (*ref != 0) return *ref;
  } else {
    auto it = string_ref_of_.find(raw);
    if (it != string_ref_of_.end()) return it->second;
    ref = nullptr;
  }
  if (!defined_strings_.contains(raw) && undefined_refs_++ >= max_undefined_refs_) {
    if (overflow_ref_ == 0) {
      overflow_ref_ = static_cast<uint32_t>(string_ref_raw_.size());
      string_ref_raw_.push_back(0);  // no raw id: Resolve names it
    }
    ++overflow_uses_;
    return overflow_ref_;  // not remembered: a use after the id's definition gets its own ref
  }
  const auto made = static_cast<uint32_t>(string_ref_raw_.size());
  string_ref_raw_.push_back(raw);
  if (ref != nullptr) {
    *ref = made;
  } else {
    string_ref_of_.emplace(raw, made);
  }
  return made;
}

uint32_t Decoder::DomainRefSlow(uint64_t raw) {
  if (raw == 0) return 0;
  // The writer's ids (below kMaxDomainIds) through a vector; others (forged) through the map.
  if (raw < format::kMaxDomainIds) {
    if (small_domain_ref_.size() <= raw) small_domain_ref_.resize(format::kMaxDomainIds, 0);
    uint32_t& ref = small_domain_ref_[raw];
    if (ref == 0) {
      ref = static_cast<uint32_t>(domain_ref_raw_.size());
      domain_ref_raw_.push_back(raw);
    }
    return ref;
  }
  auto [it, inserted] = domain_ref_of_.try_emplace(raw, static_cast<uint32_t>(domain_ref_raw_.size()));
  if (inserted) domain_ref_raw_.push_back(raw);
  return it->second;
}

uint8_t Decoder::DomainIs(uint32_t domain_ref, const std::unordered_set<uint64_t>& names, std::vector<uint8_t>* known) {
  if (known->size() <= domain_ref) known->resize(domain_ref + 1, 0);
  uint8_t& k = (*known)[domain_ref];
  if (k == 0) {
    // The writer defines a domain (and its name) before using it; until both are seen (a damaged
    // file), the answer is unknown (0) and asked again next time.
    auto it = domain_names_.find(domain_ref_raw_[domain_ref]);
    if (it == domain_names_.end() || !defined_strings_.contains(it->second)) return 0;
    k = names.contains(it->second) ? 2 : 1;
  }
  return k;
}

bool Decoder::KeepEvent(uint32_t domain_ref) {
  if (keep_ == KeepNvtx::kAll) return true;
  if (domain_ref == 0) return false;  // the default domain: never the phases'
  return DomainIs(domain_ref, phase_strings_, &domain_is_phase_) != 1;  // unknown: kept
}

bool Decoder::IsOpsDomain(uint32_t domain_ref) {
  if (domain_ref == 0 || ops_strings_.empty()) return false;
  return DomainIs(domain_ref, ops_strings_, &domain_is_ops_) == 2;
}

// The state of one chunk's decode, shared by the dispatcher and the family decoders.
struct Decoder::ChunkCursor {
  const ChunkDesc& chunk;
  uint32_t thread;
  ThreadInfo& info;
  const uint8_t* begin;  // the view's first byte (chunk.data_begin in the file)
  const uint8_t* p;      // the next record
  const uint8_t* end;
  bool cut;  // the data ends early (clamped, or the file shrank): a record cut there is expected
  // `ticks`: the dt chain's running sum on the file's recording clock; `now`: it in
  // CLOCK_MONOTONIC ns (the same number unless the file is on the TSC clock).
  uint64_t ticks;
  TscConverter::Cursor* tsc;  // null: the file is on CLOCK_MONOTONIC (a local of DecodeChunk)
  uint64_t now = 0;
  // The previous timed record of this chunk, for an EVENT_STACK (none at the chunk's start).
  uint8_t prev_tag = 0;
  uint32_t prev_domain = 0, prev_name = 0;
  uint64_t prev_range = 0;
  size_t prev_kept = SIZE_MAX;  // its index in img_.nvtx when kept
  // The sink's event waits for the record after it, which may be its EVENT_STACK; any other timed
  // record, and the chunk's end (also where damage ends it early), hand it over.
  NvtxEvent pending;
  uint64_t pending_stack = 0;
  bool has_pending = false;

  uint64_t offset_of(const uint8_t* q) const { return chunk.data_begin + static_cast<uint64_t>(q - begin); }
};

// A timed record `delta` ticks after the one before it (the caller has checked for overflow): the
// time now, and the image's first and last record times.
[[gnu::always_inline]] inline void Decoder::Advance(ChunkCursor& cur, uint64_t delta) {
  cur.ticks += delta;
  cur.now = cur.tsc ? cur.tsc->ToNs(cur.ticks) : cur.ticks;
  if (!img_.has_timed_records || cur.now < img_.first_record_ns) img_.first_record_ns = cur.now;
  if (!img_.has_timed_records || cur.now > img_.last_record_ns) img_.last_record_ns = cur.now;
  img_.has_timed_records = true;
}

void Decoder::LoseRest(const uint8_t* rec, const uint8_t* end, uint32_t thread) {
  skipped_ += static_cast<uint64_t>(end - rec);
  cuda_.LoseOpenCalls(thread);
}

[[gnu::always_inline]] inline void Decoder::HandOver(ChunkCursor& cur) {
  if (!cur.has_pending) return;
  cur.has_pending = false;
  if (nvtx_names_ != nullptr) {
    const auto& names = nvtx_names_->string_of_ref;
    const auto& domains = nvtx_names_->domain_of_ref;
    cur.pending.name = cur.pending.name < names.size() ? names[cur.pending.name] : 0;
    cur.pending.domain = cur.pending.domain < domains.size() ? domains[cur.pending.domain] : 0;
  }
  nvtx_sink_->Event(cur.pending, cur.pending_stack);
}

// Most records of a long trace are NVTX pushes, pops, marks, starts and ends: the report's decode
// takes them here, with the generic path's effects (DecodeNvtx) and none of its set-up per record;
// pushes and pops, the most common, in code of their own. Anything unusual (a record cut or
// damaged, a time overflow) goes down the generic path, which says what is wrong.
[[gnu::always_inline]] inline bool Decoder::FastNvtx(ChunkCursor& cur, uint8_t tag) {
  uint64_t v[4] = {0, 0, 0, 0};  // the record's fields in schema order (records.def)
  uint64_t dt = 0;
  const uint8_t* q = cur.p;
  const uint64_t room = static_cast<uint64_t>(cur.end - q);
  bool whole;
  switch (tag) {
    case kPushTag:
    case kMarkTag:  // domain, name, category
      whole = room >= kPushReadAhead && format::GetVarintFast(&q, &dt) && format::GetVarintFast(&q, &v[0]) &&
              format::GetVarintFast(&q, &v[1]) && format::GetVarintFast(&q, &v[2]);
      break;
    case kStartTag:  // domain, name, category, range_id
      whole = room >= kStartReadAhead && format::GetVarintFast(&q, &dt) && format::GetVarintFast(&q, &v[0]) &&
              format::GetVarintFast(&q, &v[1]) && format::GetVarintFast(&q, &v[2]) && format::GetVarintFast(&q, &v[3]);
      break;
    default:  // pop: domain; end: range_id
      whole = room >= kPopReadAhead && format::GetVarintFast(&q, &dt) && format::GetVarintFast(&q, &v[0]);
      break;
  }
  if (!whole || dt > UINT64_MAX - cur.ticks) return false;
  cur.p = q;
  Advance(cur, dt);
  const uint64_t now = cur.now;
  const uint32_t thread = cur.thread;
  ++img_.records;
  ++cur.info.events;
  cur.prev_tag = tag;
  cur.prev_kept = SIZE_MAX;
  bool kept = false;
  NvtxEvent e;
  if (tag == kPushTag || tag == kPopTag) {
    const bool push = tag == kPushTag;
    const uint32_t domain = DomainRef(v[0]);
    const uint32_t name = push ? StringRef(v[1]) : 0;
    cur.prev_domain = domain;
    cur.prev_name = name;
    cur.prev_range = 0;
    if (IsOpsDomain(domain)) {  // an operator, not a range
      if (push) {
        ops_.Push(thread, name, now);
      } else {
        ops_.Pop(thread, now, &img_.host_ops);
      }
      return true;
    }
    if (push) {
      matcher_.Push(thread, domain, name, now);
    } else {
      matcher_.Pop(thread, domain, now);
    }
    ++img_.nvtx_events;
    if (!KeepEvent(domain)) return true;
    e.kind_ = static_cast<uint8_t>(push ? NvtxKind::kPush : NvtxKind::kPop);
    e.domain = domain;
    e.name = name;
    e.category = static_cast<uint32_t>(push ? v[2] : 0);
    kept = true;
  } else {
    if (tag == kEndTag) {
      e.kind_ = static_cast<uint8_t>(NvtxKind::kEnd);
      e.range_id = v[0];
      matcher_.End(e.range_id, now);
      kept = keep_ == KeepNvtx::kAll;
    } else {
      e.domain = DomainRef(v[0]);
      e.name = StringRef(v[1]);
      e.category = static_cast<uint32_t>(v[2]);
      if (tag == kMarkTag) {
        e.kind_ = static_cast<uint8_t>(NvtxKind::kMark);
        matcher_.Mark(e.domain, e.name);
        kept = KeepEvent(e.domain);
      } else {
        e.kind_ = static_cast<uint8_t>(NvtxKind::kStart);
        e.range_id = v[3];
        matcher_.Start(e.domain, e.name, e.range_id, now);
        kept = keep_ == KeepNvtx::kAll;
      }
    }
    ++img_.nvtx_events;
    cur.prev_domain = e.domain;
    cur.prev_name = e.name;
    cur.prev_range = e.range_id;
  }
  if (kept) {
    e.time_ns = now;
    e.thread = thread;
    cur.prev_kept = img_.nvtx.size();
    img_.nvtx.push_back(e);
  }
  return true;
}

[[gnu::always_inline]] inline bool Decoder::ReadRecord(ChunkCursor& cur, const uint8_t* rec, uint8_t tag,
                                                       Record* out) {
  const uint8_t*& p = cur.p;
  const uint8_t* const end = cur.end;
  bool whole;
  if (tag == kPushTag && static_cast<uint64_t>(end - p) >= kPushReadAhead) {
    // Most records of a long trace are pushes and pops: their varints without the layout lookup
    // and the loop over its fields (the same values ReadVarints reads).
    out->layout = &kPushLayout;
    whole = format::GetVarintFast(&p, &out->dt) && format::GetVarintFast(&p, &out->f[0]) &&
            format::GetVarintFast(&p, &out->f[1]) && format::GetVarintFast(&p, &out->f[2]);
  } else if (tag == kPopTag && static_cast<uint64_t>(end - p) >= kPopReadAhead) {
    out->layout = &kPopLayout;
    whole = format::GetVarintFast(&p, &out->dt) && format::GetVarintFast(&p, &out->f[0]);
  } else {
    out->layout = format::FindRecord(tag);
    if (out->layout == nullptr || out->layout->since > img_.version) {  // v1 files have no CUDA records
      Error(Loss::bad_record_tags, "bad record tag " + Num(tag) + " at byte " + Num(cur.offset_of(rec)));
      LoseRest(rec, cur.end, cur.thread);
      return false;
    }
    whole = ReadVarints(*out->layout, &p, end, &out->dt, out->f);
  }
  const format::RecordInfo& layout = *out->layout;
  out->timed = layout.cls == format::RecordClass::kTimed;
  out->bytes = {};
  if (whole && layout.has_bytes) {
    const uint64_t length = out->f[layout.field_count - 1];  // an S field is last: its length
    if (length > format::kMaxStringBytes) {
      Error(Loss::malformed_records, "string of " + Num(length) + " bytes at byte " + Num(cur.offset_of(rec)) +
                                         " (longer than kMaxStringBytes " + Num(format::kMaxStringBytes) + ")");
      LoseRest(rec, cur.end, cur.thread);
      return false;
    }
    if (length > static_cast<uint64_t>(end - p)) {
      whole = false;
    } else {
      out->bytes = std::string_view(reinterpret_cast<const char*>(p), length);
      p += length;
    }
  }
  if (!whole) {
    // A record cut by the end of the data is expected where the data was cut (already reported);
    // inside committed bytes it is damage.
    if (!cur.cut) {
      Error(Loss::malformed_records, "malformed record (tag " + Num(tag) + ") at byte " + Num(cur.offset_of(rec)));
      LoseRest(rec, cur.end, cur.thread);
    } else {
      skipped_ += static_cast<uint64_t>(end - rec);
    }
    return false;
  }
  if (out->timed) {
    if (out->dt > UINT64_MAX - cur.ticks) {
      Error(Loss::malformed_records,
            "time overflow (delta " + Num(out->dt) + " ns) at byte " + Num(cur.offset_of(rec)));
      LoseRest(rec, cur.end, cur.thread);
      return false;
    }
    Advance(cur, out->dt);
  }
  return true;
}

template <bool kSink>
[[gnu::always_inline]] inline bool Decoder::DecodeNvtx(ChunkCursor& cur, RecordTag tag, const uint64_t* f, NvtxEvent* e) {
  // An NVTX event with a name (push, mark, start).
  auto named = [&](NvtxKind kind, uint64_t domain, uint64_t name, uint64_t category) __attribute__((always_inline)) {
    e->kind_ = static_cast<uint8_t>(kind);
    e->domain = DomainRef(domain);
    e->name = StringRef(name);
    e->category = static_cast<uint32_t>(category);
  };
  // Every NVTX event: counted, to the sink, and kept as keep_ says (`kept`: KeepEvent's answer).
  auto seen = [&](bool kept) {
    ++img_.nvtx_events;
    if (kept) img_.nvtx.push_back(*e);
    if constexpr (kSink) {
      HandOver(cur);
      cur.pending = *e;
      cur.pending_stack = 0;
      cur.has_pending = true;
    }
    return kSink;
  };
  const uint32_t thread = cur.thread;
  const uint64_t now = cur.now;
  switch (tag) {
    case RecordTag::kRangePush: {
      const auto r = format::Decode<fr::RangePush>(f);
      named(NvtxKind::kPush, r.domain, r.name, r.category);
      if (IsOpsDomain(e->domain)) {
        ops_.Push(thread, e->name, now);
        return false;
      }
      matcher_.Push(thread, e->domain, e->name, now);
      return seen(KeepEvent(e->domain));
    }
    case RecordTag::kMark: {
      const auto r = format::Decode<fr::Mark>(f);
      named(NvtxKind::kMark, r.domain, r.name, r.category);
      matcher_.Mark(e->domain, e->name);
      return seen(KeepEvent(e->domain));
    }
    case RecordTag::kRangeStart: {
      const auto r = format::Decode<fr::RangeStart>(f);
      named(NvtxKind::kStart, r.domain, r.name, r.category);
      e->range_id = r.range_id;
      matcher_.Start(e->domain, e->name, e->range_id, now);
      return seen(keep_ == KeepNvtx::kAll);
    }
    case RecordTag::kRangePop:
      e->kind_ = static_cast<uint8_t>(NvtxKind::kPop);
      e->domain = DomainRef(format::Decode<fr::RangePop>(f).domain);
      if (IsOpsDomain(e->domain)) {
        ops_.Pop(thread, now, &img_.host_ops);
        return false;
      }
      matcher_.Pop(thread, e->domain, now);
      return seen(KeepEvent(e->domain));
    default:  // kRangeEnd
      e->kind_ = static_cast<uint8_t>(NvtxKind::kEnd);
      e->range_id = format::Decode<fr::RangeEnd>(f).range_id;
      matcher_.End(e->range_id, now);
      return seen(keep_ == KeepNvtx::kAll);
  }
}

void Decoder::DecodeDefinition(RecordTag tag, const uint64_t* f, std::string_view bytes) {
  switch (tag) {
    case RecordTag::kString: {
      const auto r = format::Decode<fr::String>(f, bytes);
      if (r.id != 0 && !defined_strings_.contains(r.id)) {
        defined_strings_.Add(r.id, r.bytes);
        if (r.bytes == format::kPhaseDomain) phase_strings_.insert(r.id);
        if (r.bytes == format::kTorchOpsDomain) ops_strings_.insert(r.id);
      }
      break;
    }
    case RecordTag::kDomain: {
      const auto r = format::Decode<fr::Domain>(f);
      if (r.domain != 0) domain_names_[r.domain] = r.name;
      break;
    }
    case RecordTag::kThreadName: {
      const auto r = format::Decode<fr::ThreadName>(f);
      if (r.tid <= UINT32_MAX) thread_names_[static_cast<uint32_t>(r.tid)] = StringRef(r.name);
      break;
    }
    case RecordTag::kRole:
      role_ref_ = StringRef(format::Decode<fr::Role>(f).name);
      break;
    case RecordTag::kProcessEnv:
      env_refs_.push_back(StringRef(format::Decode<fr::ProcessEnv>(f).name));
      break;
    default:  // kCategoryName, kDomainDestroy: counted, not needed by the report yet
      break;
  }
}

void Decoder::DecodeProcessEvent(RecordTag tag, const uint64_t* f, uint64_t now, uint32_t thread) {
  ProcessEvent pe;
  pe.time_ns = now;
  pe.thread = thread;
  auto add = [&](ProcessEventKind kind, uint64_t what, uint64_t value, int64_t code) {
    pe.kind = kind;
    pe.what = static_cast<uint32_t>(std::min<uint64_t>(what, UINT32_MAX));
    pe.value = value;
    pe.code = code;
    img_.process_events.push_back(pe);
  };
  switch (tag) {
    case RecordTag::kProcessEnd: {
      const auto r = format::Decode<fr::ProcessEnd>(f);
      add(ProcessEventKind::kProcessEnd, r.kind, 0, r.code);
      break;
    }
    case RecordTag::kFork:
      add(ProcessEventKind::kFork, 0, format::Decode<fr::Fork>(f).pid, 0);
      break;
    case RecordTag::kExec:
      pe.text = StringRef(format::Decode<fr::Exec>(f).path);
      add(ProcessEventKind::kExec, 0, 0, 0);
      break;
    case RecordTag::kChildExit: {
      const auto r = format::Decode<fr::ChildExit>(f);
      add(ProcessEventKind::kChildExit, r.kind, r.pid, r.code);
      break;
    }
    default: {  // kMisuse
      const auto r = format::Decode<fr::Misuse>(f);
      add(ProcessEventKind::kMisuse, r.what, r.detail, 0);
      break;
    }
  }
}

template <bool kSink>
[[gnu::always_inline]] inline void Decoder::DecodeStackRecord(ChunkCursor& cur, RecordTag tag, const uint64_t* f, std::string_view bytes,
                                const uint8_t* rec) {
  switch (tag) {
    case RecordTag::kStack: {
      const auto r = format::Decode<fr::Stack>(f, bytes);
      AddStack(r.id, r.bytes, cur.offset_of(rec));
      break;
    }
    case RecordTag::kEventStack: {
      const uint64_t stack = format::Decode<fr::EventStack>(f).stack;
      if (stack == 0) break;
      switch (static_cast<RecordTag>(cur.prev_tag)) {
        case RecordTag::kRangePush: matcher_.SetPushStack(cur.thread, cur.prev_domain, stack); break;
        case RecordTag::kRangeStart: matcher_.SetStartStack(cur.prev_range, stack); break;
        case RecordTag::kMark: matcher_.MarkStack(cur.prev_domain, cur.prev_name, stack); break;
        case RecordTag::kCudaApiExit: cuda_.SetExitStack(stack); break;
        default: break;  // at a chunk's start or after another record: nothing to attach to
      }
      if (cur.prev_kept != SIZE_MAX) img_.stacks.nvtx.push_back({cur.prev_kept, stack});
      if (kSink && cur.has_pending && cur.pending_stack == 0) cur.pending_stack = stack;  // the first of them
      break;
    }
    case RecordTag::kModule: {
      const auto r = format::Decode<fr::Module>(f);
      if (r.end <= r.start) {
        Error(Loss::malformed_records, "MODULE at byte " + Num(cur.offset_of(rec)) + ": empty span [" + Num(r.start) +
                                           ", " + Num(r.end) + ") (left out)");
        break;
      }
      img_.stacks.modules.push_back({.bias = r.bias, .start = r.start, .end = r.end, .path = StringRef(r.path),
                                     .build_id = r.build_id == 0 ? 0 : StringRef(r.build_id)});
      break;
    }
    case RecordTag::kSample: {
      const auto r = format::Decode<fr::Sample>(f);
      img_.stacks.samples.push_back(
          {.time_ns = cur.now, .thread = cur.thread, .stack = r.stack, .python_missed = r.python_missed});
      break;
    }
    case RecordTag::kSampleThreadLost: {
      const auto r = format::Decode<fr::SampleThreadLost>(f);
      img_.stacks.threads_not_sampled.push_back({.thread = cur.thread, .reason = static_cast<uint32_t>(r.reason),
                                                 .error = r.error, .limit = r.limit, .queued = r.queued});
      break;
    }
    default: {  // kSamplePaused
      const uint64_t ns = format::Decode<fr::SamplePaused>(f).cpu_ns;
      img_.stacks.paused_cpu_ns =
          ns > UINT64_MAX - img_.stacks.paused_cpu_ns ? UINT64_MAX : img_.stacks.paused_cpu_ns + ns;
      break;
    }
  }
}

template <bool kSink>
[[gnu::always_inline]] inline void Decoder::DecodeRecords(ChunkCursor& cur) {
  Record r;  // the generic path's record: its layout, dt and fields in schema order (records.def)
  while (cur.p < cur.end) {
    const uint8_t* const rec = cur.p;
    const uint8_t tag = *cur.p++;
    if (tag == 0 && cur.cut) {
      // Past a committed count that overran the chunk: zeros are space nobody wrote.
      if (std::all_of(rec, cur.end, [](uint8_t b) { return b == 0; })) return;
    }
    if constexpr (!kSink) {
      if (tag >= kPushTag && tag <= kEndTag && FastNvtx(cur, tag)) continue;
    }
    if (!ReadRecord(cur, rec, tag, &r)) return;
    ++img_.records;
    ++cur.info.events;
    NvtxEvent e;  // filled for an NVTX record (the EVENT_STACK after it needs its domain, name, id)
    e.time_ns = cur.now;
    e.thread = cur.thread;
    const size_t nvtx_before = img_.nvtx.size();
    bool nvtx_event = false;  // handed to the sink (which then holds it, pending)
    switch (static_cast<RecordTag>(tag)) {
      case RecordTag::kRangePush:
      case RecordTag::kRangePop:
      case RecordTag::kMark:
      case RecordTag::kRangeStart:
      case RecordTag::kRangeEnd:
        nvtx_event = DecodeNvtx<kSink>(cur, static_cast<RecordTag>(tag), r.f, &e);
        break;
      case RecordTag::kString:
      case RecordTag::kDomain:
      case RecordTag::kThreadName:
      case RecordTag::kRole:
      case RecordTag::kProcessEnv:
      case RecordTag::kCategoryName:
      case RecordTag::kDomainDestroy:
        DecodeDefinition(static_cast<RecordTag>(tag), r.f, r.bytes);
        break;
      case RecordTag::kProcessEnd:
      case RecordTag::kFork:
      case RecordTag::kExec:
      case RecordTag::kChildExit:
      case RecordTag::kMisuse:
        DecodeProcessEvent(static_cast<RecordTag>(tag), r.f, cur.now, cur.thread);
        break;
      case RecordTag::kStack:
      case RecordTag::kEventStack:
      case RecordTag::kModule:
      case RecordTag::kSample:
      case RecordTag::kSampleThreadLost:
      case RecordTag::kSamplePaused:
        DecodeStackRecord<kSink>(cur, static_cast<RecordTag>(tag), r.f, r.bytes, rec);
        break;
      default:  // CUDA records (the schema's since: only in files of version 2 on)
        cuda_.Add(tag, r.f, cur.now, cur.chunk.gpu_base_ns, cur.thread);
        break;
    }
    if (r.timed) {
      if (kSink && !nvtx_event) HandOver(cur);
      cur.prev_tag = tag;
      cur.prev_domain = e.domain;
      cur.prev_name = e.name;
      cur.prev_range = e.range_id;
      cur.prev_kept = img_.nvtx.size() > nvtx_before ? img_.nvtx.size() - 1 : SIZE_MAX;
    }
  }
}

template <bool kSink>
void Decoder::DecodeChunk(const ChunkDesc& c, uint32_t thread) {
  const std::span<const uint8_t> view = src_->View(c.data_begin, c.data_end - c.data_begin);
  if (view.size() < c.data_end - c.data_begin) shrank_ = true;
  std::optional<TscConverter::Cursor> tsc;
  if (tsc_) tsc.emplace(*tsc_to_ns_);
  ChunkCursor cur{.chunk = c,
                  .thread = thread,
                  .info = img_.threads[thread],
                  .begin = view.data(),
                  .p = view.data(),
                  .end = view.data() + view.size(),
                  .cut = c.cut || view.size() < c.data_end - c.data_begin,
                  .ticks = c.base_ns,
                  .tsc = tsc ? &*tsc : nullptr};
  cur.now = cur.tsc ? cur.tsc->ToNs(cur.ticks) : cur.ticks;
  DecodeRecords<kSink>(cur);
  if constexpr (kSink) HandOver(cur);  // the chunk's last event, also where damage ended it early
}

void Decoder::AddStack(uint64_t id, std::string_view bytes, uint64_t at) {
  if (id == 0 || stack_ids_.contains(id)) return;  // a second definition of an id: the first stays
  Stack stack{.id = id, .frames = {}};
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto* const end = p + bytes.size();
  while (p < end) {
    uint64_t v = 0, file = 0, line = 0;
    bool ok = format::GetVarint(&p, end, &v);
    if (ok && (v & 1) != 0) ok = format::GetVarint(&p, end, &file) && format::GetVarint(&p, end, &line);
    if (!ok) {
      Error(Loss::malformed_records, "STACK " + Num(id) + " at byte " + Num(at) + ": frame " +
                                         Num(stack.frames.size() + 1) + " does not decode (the stack is left out)");
      return;
    }
    StackFrame fr;
    if (v == 0) {  // the cut marker: the part before it had more frames (Python ones, after any)
      fr.cut = true;
      fr.python = !stack.frames.empty() && stack.frames.back().python;
    } else if ((v & 1) == 0) {
      fr.address = v >> 1;
    } else {
      fr.python = true;
      fr.function = StringRef(v >> 1);
      fr.file = StringRef(file);
      fr.line = static_cast<uint32_t>(std::min<uint64_t>(line, UINT32_MAX));
    }
    stack.frames.push_back(fr);
  }
  stack_ids_.insert(id);
  img_.stacks.stacks.push_back(std::move(stack));
}

template void Decoder::DecodeChunk<false>(const ChunkDesc& c, uint32_t thread);
template void Decoder::DecodeChunk<true>(const ChunkDesc& c, uint32_t thread);

}  // namespace trainprof::collector::decode
