#include "stacks/stacks.h"

#include "config.h"
#include "page_new.h"
#include "stacks/modules.h"
#include "stacks/stack_capture.h"
#include "stacks/stack_table.h"
#include "trainprof/records.h"

namespace trainprof::inject {

std::atomic<bool> g_nvtx_stacks{false};

namespace {

// 64 Ki distinct stacks, 4 Mi words of frames (32 MiB of address space, touched as used).
constexpr uint32_t kTableSlots = 1u << 16;
constexpr size_t kArenaWords = size_t{1} << 22;

BacktraceSettings g_settings;
std::atomic<StackTable*> g_table{nullptr};

void WriteStack(ThreadState* t, uint32_t id, const uint64_t* words, size_t n) {
  EnsureModulesFor(t, words, n);
  uint8_t bytes[kMaxStackWords * format::kMaxVarintBytes];
  static_assert(sizeof(bytes) <= format::kMaxStringBytes, "a STACK's bytes fit one record");
  uint8_t* p = bytes;
  for (size_t i = 0; i < n; ++i) p = format::PutVarint(p, words[i]);
  RecordDefinition(t, format::rec::Stack{
                          .id = id, .bytes = std::string_view(reinterpret_cast<char*>(bytes),
                                                              static_cast<size_t>(p - bytes))});
}

}  // namespace

const BacktraceSettings& Backtraces() { return g_settings; }

void StartStacks(const Config& c, bool ours, bool fork_child) {
  ParseBacktraceSettings(c.backtrace, &g_settings);  // the launcher checked it; bad text: default
  ResetModules();
  if (fork_child) SetNativeStacks(false);  // the parent's InitStackCapture stays valid for the rest
  StackTable* table = nullptr;
  if (ours && (g_settings.any() || c.sample_hz > 0)) {
    if (!fork_child) InitStackCapture();
    table = StackTable::Create(kTableSlots, kArenaWords);
  }
  g_table.store(table, std::memory_order_release);
  g_nvtx_stacks.store(table != nullptr && g_settings.nvtx && c.trace_nvtx, std::memory_order_relaxed);
}

uint32_t TakeStack(ThreadState* t) {
  StackTable* table = g_table.load(std::memory_order_acquire);
  if (table == nullptr) return 0;
  uint64_t words[kMaxStackWords];
  size_t n = CaptureStack(t, words, kMaxStackWords);
  return table->Intern(words, n, [t](uint32_t id, const uint64_t* w, size_t k) { WriteStack(t, id, w, k); });
}

uint32_t TakeSampleStack(ThreadState* t, uintptr_t interrupted_pc, uint32_t* missed, bool* busy) {
  *missed = 0;
  *busy = false;
  StackTable* table = g_table.load(std::memory_order_acquire);
  if (table == nullptr) return 0;
  uint64_t words[kMaxStackWords];
  size_t n = CaptureSampleStack(interrupted_pc, words, kMaxStackWords, missed, busy);
  return table->Intern(words, n, [t](uint32_t id, const uint64_t* w, size_t k) { WriteStack(t, id, w, k); });
}

uint64_t UndeduplicatedStacks() {
  StackTable* table = g_table.load(std::memory_order_acquire);
  return table != nullptr ? table->Undeduplicated() : 0;
}

}  // namespace trainprof::inject
