#include "stacks/stacks.h"

#include "config.h"
#include "runtime.h"
#include "trace_file.h"
#include "page_new.h"
#include "stacks/modules.h"
#include "stacks/stack_capture.h"
#include "stacks/stack_room.h"
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
  uint8_t* bytes = t->stack_bytes;  // under in_stack (TakeStack, TakeSampleStack)
  static_assert(sizeof(t->stack_bytes) <= format::kMaxStringBytes, "a STACK's bytes fit one record");
  uint8_t* p = bytes;
  for (size_t i = 0; i < n; ++i) p = format::PutVarint(p, words[i]);
  RecordDefinition(t, format::rec::Stack{
                          .id = id, .bytes = std::string_view(reinterpret_cast<char*>(bytes),
                                                              static_cast<size_t>(p - bytes))});
}

// A stack not taken for want of thread stack: counted in the header (saturating at 2^32 - 1).
void CountStackSkipped() {
  TraceFile* f = Rt().file.load(std::memory_order_acquire);
  if (f == nullptr) return;
  std::atomic<uint32_t>& n = f->header()->stacks_skipped;
  uint32_t v = n.load(std::memory_order_relaxed);
  while (v != UINT32_MAX && !n.compare_exchange_weak(v, v + 1, std::memory_order_relaxed)) {
  }
}

// Whether this thread has the stack a capture needs here; counted when not.
bool RoomToCapture() {
  if (HasStackRoom(kStackCaptureBudget)) return true;
  CountStackSkipped();
  return false;
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

namespace {

// Holds the thread's stack scratch (ThreadState::stack_words, stack_bytes) for one capture.
class ScratchScope {
 public:
  explicit ScratchScope(ThreadState* t) : t_(t), held_(t->in_stack == 0) {
    if (!held_) return;
    t->in_stack = 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~ScratchScope() {
    if (!held_) return;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_->in_stack = 0;
  }
  /// False: a capture on this thread (which this one interrupted) holds the scratch.
  bool held() const { return held_; }

 private:
  ThreadState* t_;
  bool held_;
};

uint32_t InternStack(StackTable* table, ThreadState* t, size_t n) {
  return table->Intern(t->stack_words, n, [t](uint32_t id, const uint64_t* w, size_t k) { WriteStack(t, id, w, k); });
}

}  // namespace

uint32_t TakeStack(ThreadState* t) {
  StackTable* table = g_table.load(std::memory_order_acquire);
  if (table == nullptr) return 0;
  ScratchScope scratch(t);
  if (!scratch.held() || !RoomToCapture()) return 0;
  return InternStack(table, t, CaptureStack(t, t->stack_words, kMaxStackWords));
}

uint32_t TakeSampleStack(ThreadState* t, uintptr_t interrupted_pc, uint32_t* missed, bool* busy) {
  *missed = 0;
  *busy = false;
  StackTable* table = g_table.load(std::memory_order_acquire);
  if (table == nullptr) return 0;
  ScratchScope scratch(t);
  *busy = !scratch.held();
  if (*busy || !RoomToCapture()) return 0;
  return InternStack(table, t, CaptureSampleStack(interrupted_pc, t->stack_words, kMaxStackWords, missed, busy));
}

uint64_t UndeduplicatedStacks() {
  StackTable* table = g_table.load(std::memory_order_acquire);
  return table != nullptr ? table->Undeduplicated() : 0;
}

}  // namespace trainprof::inject
