// NVTX injection: NVTX (the header-only nvtx3 in any library of the process, or libnvToolsExt)
// reads NVTX_INJECTION64_PATH at its first call, dlopens this library and calls
// InitializeInjectionNvtx2 with its export table; we fill the CORE and CORE2 function tables
// with the handlers below. (NVTX docs, nvtxDetail/nvtxInit.h "Injection library".)
//
// Return values follow the NVTX API docs: nvtxRangePush returns the 0-based level of the range
// being started, nvtxRangePop the level of the range being ended, or a negative value on error
// (a pop with nothing pushed). Levels are per thread and per domain. Misuse is recorded, never
// hidden: a pop on an empty stack is still written to the trace.
#include <nvtx3/nvToolsExt.h>

#include <cstdint>

#include "capture.h"
#include "ranges.h"
#include "recorder.h"
#include "runtime.h"
#include "string_table.h"

namespace trainprof::inject {
namespace {

using format::RecordTag;

// Our handles are small integers: domain ids (1..format::kMaxDomainIds) and string ids.
inline uint32_t DomainId(nvtxDomainHandle_t d) {
  auto v = reinterpret_cast<uintptr_t>(d);
  return v <= format::kMaxDomainIds ? static_cast<uint32_t>(v) : 0;
}

void Misuse(ThreadState* t, format::MisuseKind kind, uint64_t detail) {
  RecordTimed(t, format::rec::Misuse{.what = static_cast<uint64_t>(kind), .detail = detail});
}

// Name and category from event attributes (NVTX_EVENT_ATTRIB_STRUCT_SIZE, nvToolsExt.h).
uint32_t NameFromAttributes(ThreadState* t, const nvtxEventAttributes_t* a, uint32_t* category) {
  *category = 0;
  if (a == nullptr) {
    Misuse(t, format::MisuseKind::kNullName, 0);
    return 0;
  }
  if (a->version < 1 || a->size < sizeof(nvtxEventAttributes_v2)) {
    Misuse(t, format::MisuseKind::kBadAttributes, a->size);
    return 0;
  }
  *category = a->category;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return InternCString(t, a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
      return InternWide(t, a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED: {
      // Our handles are string ids; anything else is not a handle nvtxDomainRegisterString gave.
      uintptr_t id = reinterpret_cast<uintptr_t>(a->message.registered);
      StringTable* table = Rt().strings;
      if (id == 0 || table == nullptr || id > table->MaxId()) {
        Misuse(t, format::MisuseKind::kBadAttributes, id);
        return 0;
      }
      return static_cast<uint32_t>(id);
    }
    case NVTX_MESSAGE_UNKNOWN:
      return 0;
    default:
      Misuse(t, format::MisuseKind::kBadAttributes, static_cast<uint64_t>(a->messageType));
      return 0;
  }
}

inline nvtxRangeId_t Start(ThreadState* t, uint32_t domain, uint32_t name, uint32_t category) {
  // Unique in the process without shared state: thread number in the high bits.
  uint64_t id = (static_cast<uint64_t>(t->thread_index + 1) << 40) | ++t->range_counter;
  if (!CapturingNowLazy()) return id | kUncapturedRangeBit;  // its End is left out too
  const format::rec::RangeStart r{.domain = domain, .name = name, .category = category, .range_id = id};
  if (__builtin_expect(NvtxStacksOn(), 0)) {
    RecordTimedWithStack(t, r);
  } else {
    RecordTimed(t, r);
  }
  return id;
}

inline void End(ThreadState* t, nvtxRangeId_t id) {
  if (CaptureConfigured() && (id & kUncapturedRangeBit) != 0) return;
  RecordTimed(t, format::rec::RangeEnd{.range_id = id});
}

void NameThread(ThreadState* t, uint32_t tid, uint32_t name) {
  RecordDefinition(t, format::rec::ThreadName{.tid = tid, .name = name});
}

#define TP_THREAD_OR(ret)                \
  ThreadState* t = CurrentThread();      \
  if (__builtin_expect(t == nullptr, 0)) return ret

// ---- CORE ----
void NVTX_API MarkEx(const nvtxEventAttributes_t* a) {
  TP_THREAD_OR();
  uint32_t cat;
  uint32_t name = NameFromAttributes(t, a, &cat);
  MarkEvent(t, 0, name, cat);
}
void NVTX_API MarkA(const char* m) {
  TP_THREAD_OR();
  MarkEvent(t, 0, InternCString(t, m), 0);
}
void NVTX_API MarkW(const wchar_t* m) {
  TP_THREAD_OR();
  MarkEvent(t, 0, InternWide(t, m), 0);
}
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) {
  TP_THREAD_OR(0);
  uint32_t cat;
  uint32_t name = NameFromAttributes(t, a, &cat);
  return Start(t, 0, name, cat);
}
nvtxRangeId_t NVTX_API RangeStartA(const char* m) {
  TP_THREAD_OR(0);
  return Start(t, 0, InternCString(t, m), 0);
}
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* m) {
  TP_THREAD_OR(0);
  return Start(t, 0, InternWide(t, m), 0);
}
void NVTX_API RangeEnd(nvtxRangeId_t id) {
  TP_THREAD_OR();
  End(t, id);
}
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) {
  TP_THREAD_OR(-1);
  uint32_t cat;
  uint32_t name = NameFromAttributes(t, a, &cat);
  return PushRange(t, 0, name, cat);
}
int NVTX_API RangePushA(const char* m) {
  TP_THREAD_OR(-1);
  return PushRange(t, 0, InternCString(t, m), 0);
}
int NVTX_API RangePushW(const wchar_t* m) {
  TP_THREAD_OR(-1);
  return PushRange(t, 0, InternWide(t, m), 0);
}
int NVTX_API RangePop() {
  TP_THREAD_OR(-1);
  return PopRange(t, 0);
}
void NVTX_API NameCategoryA(uint32_t category, const char* name) {
  TP_THREAD_OR();
  NameCategory(t, 0, category, InternCString(t, name));
}
void NVTX_API NameCategoryW(uint32_t category, const wchar_t* name) {
  TP_THREAD_OR();
  NameCategory(t, 0, category, InternWide(t, name));
}
void NVTX_API NameOsThreadA(uint32_t tid, const char* name) {
  TP_THREAD_OR();
  NameThread(t, tid, InternCString(t, name));
}
void NVTX_API NameOsThreadW(uint32_t tid, const wchar_t* name) {
  TP_THREAD_OR();
  NameThread(t, tid, InternWide(t, name));
}

// ---- CORE2 (domains) ----
void NVTX_API DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  TP_THREAD_OR();
  uint32_t cat;
  uint32_t name = NameFromAttributes(t, a, &cat);
  MarkEvent(t, DomainId(d), name, cat);
}
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  TP_THREAD_OR(0);
  uint32_t cat;
  uint32_t name = NameFromAttributes(t, a, &cat);
  return Start(t, DomainId(d), name, cat);
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) {
  TP_THREAD_OR();
  End(t, id);
}
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  TP_THREAD_OR(-1);
  uint32_t cat;
  uint32_t name = NameFromAttributes(t, a, &cat);
  return PushRange(t, DomainId(d), name, cat);
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) {
  TP_THREAD_OR(-1);
  return PopRange(t, DomainId(d));
}
nvtxResourceHandle_t NVTX_API DomainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) {
  return nullptr;  // resource naming is not recorded
}
void NVTX_API DomainResourceDestroy(nvtxResourceHandle_t) {}
void NVTX_API DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char* name) {
  TP_THREAD_OR();
  NameCategory(t, DomainId(d), category, InternCString(t, name));
}
void NVTX_API DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
  TP_THREAD_OR();
  NameCategory(t, DomainId(d), category, InternWide(t, name));
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  TP_THREAD_OR(nullptr);
  return reinterpret_cast<nvtxStringHandle_t>(static_cast<uintptr_t>(InternCString(t, s)));
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
  TP_THREAD_OR(nullptr);
  return reinterpret_cast<nvtxStringHandle_t>(static_cast<uintptr_t>(InternWide(t, s)));
}
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) {
  TP_THREAD_OR(nullptr);
  StringTable* table = Rt().strings;
  if (table == nullptr) return nullptr;
  return reinterpret_cast<nvtxDomainHandle_t>(static_cast<uintptr_t>(table->Domain(t, InternCString(t, name))));
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) {
  TP_THREAD_OR(nullptr);
  StringTable* table = Rt().strings;
  if (table == nullptr) return nullptr;
  return reinterpret_cast<nvtxDomainHandle_t>(static_cast<uintptr_t>(table->Domain(t, InternWide(t, name))));
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t d) {
  TP_THREAD_OR();
  RecordTimed(t, format::rec::DomainDestroy{.domain = DomainId(d)});
}
void NVTX_API Initialize(const void*) {}

template <typename F>
void Set(NvtxFunctionTable table, unsigned int size, unsigned int cbid, F fn) {
  if (cbid < size && table[cbid] != nullptr) *table[cbid] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace
}  // namespace trainprof::inject

using namespace trainprof::inject;

// NVTX initialises itself on the first NVTX call of the process and makes every other thread
// spin until it is done. A fork() in that window leaves the child spinning forever: the thread
// that would finish is not there (an NVTX limitation, with or without an injection library).
// Our share of the window is this function, so fork() waits for it (runtime.cc, OnForkPrepare).

namespace {
struct InitScope {
  InitScope() { g_nvtx_initializing.fetch_add(1, std::memory_order_acq_rel); }
  ~InitScope() {
    g_nvtx_init_done_ns.store(NowNs(), std::memory_order_release);
    g_nvtx_initializing.fetch_sub(1, std::memory_order_acq_rel);
  }
};
}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  InitScope scope;
  EnsureInit();
  Runtime& rt = Rt();
  // In a process we do not record, or with --trace without nvtx, decline: NVTX then makes every
  // call a no-op, which is the cheapest thing for the program.
  if (rt.inert.load() || !rt.cfg.trace_nvtx || get_export_table == nullptr) return 0;
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  if (auto* version = static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
      version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) && version->SetInjectionNvtxVersion) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  NvtxFunctionTable core = nullptr;
  unsigned int core_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) || core == nullptr) return 0;
  Set(core, core_size, NVTX_CBID_CORE_MarkEx, MarkEx);
  Set(core, core_size, NVTX_CBID_CORE_MarkA, MarkA);
  Set(core, core_size, NVTX_CBID_CORE_MarkW, MarkW);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartEx, RangeStartEx);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartA, RangeStartA);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartW, RangeStartW);
  Set(core, core_size, NVTX_CBID_CORE_RangeEnd, RangeEnd);
  Set(core, core_size, NVTX_CBID_CORE_RangePushEx, RangePushEx);
  Set(core, core_size, NVTX_CBID_CORE_RangePushA, RangePushA);
  Set(core, core_size, NVTX_CBID_CORE_RangePushW, RangePushW);
  Set(core, core_size, NVTX_CBID_CORE_RangePop, RangePop);
  Set(core, core_size, NVTX_CBID_CORE_NameCategoryA, NameCategoryA);
  Set(core, core_size, NVTX_CBID_CORE_NameCategoryW, NameCategoryW);
  Set(core, core_size, NVTX_CBID_CORE_NameOsThreadA, NameOsThreadA);
  Set(core, core_size, NVTX_CBID_CORE_NameOsThreadW, NameOsThreadW);

  NvtxFunctionTable core2 = nullptr;
  unsigned int core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) && core2 != nullptr) {
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, DomainMarkEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, DomainRangeStartEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, DomainRangeEnd);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, DomainRangePushEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, DomainRangePop);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainResourceCreate, DomainResourceCreate);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainResourceDestroy, DomainResourceDestroy);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, DomainNameCategoryA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryW, DomainNameCategoryW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, DomainRegisterStringA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, DomainRegisterStringW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, DomainCreateA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, DomainCreateW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, DomainDestroy);
    Set(core2, core2_size, NVTX_CBID_CORE2_Initialize, Initialize);
  }
  return 1;
}
