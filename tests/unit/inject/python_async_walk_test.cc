// The sampler's Python-frame walk (inject/stacks/python_async_walk.h) on a made-up interpreter:
// buffers laid out as CPython 3.11's (or 3.12's) thread state, data stack, frames, code, str and
// bytes objects (python_layout.h), so that torn states a real interpreter shows only at the wrong
// instruction can be planted: a code object or a frame in unmapped memory, a frame of another
// type, a name that cannot be interned, a code object freed and another made in its memory.
#include "stacks/python_async_walk.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace trainprof::inject::stacks {
namespace {

constexpr unsigned long kPy311 = 0x030B07F0;  // PY_VERSION_HEX of 3.11.7
constexpr unsigned long kPy312 = 0x030C01F0;  // 3.12.1: code objects carry co_version

template <typename T>
void Put(unsigned char* base, size_t off, T v) {
  memcpy(base + off, &v, sizeof(T));
}
uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

struct FakePython {
  const PyLayout& l;
  alignas(8) unsigned char runtime[2048] = {};
  alignas(8) unsigned char tstate[512] = {};
  alignas(8) unsigned char cframe[32] = {};
  alignas(8) unsigned char chunk[4096] = {};
  alignas(8) unsigned char code_type[8] = {}, str_type[8] = {};
  std::vector<std::vector<unsigned char>*> objects;
  pthread_key_t key;
  size_t chunk_used = 0;
  uint32_t next_version = 1;  // co_version's counter (3.12+)

  explicit FakePython(unsigned long version = kPy311) : l(*PyLayoutFor(version)) {
    pthread_key_create(&key, nullptr);
    Put<int>(runtime, l.runtime_tss, 1);
    Put<pthread_key_t>(runtime, l.runtime_tss + 4, key);
    pthread_setspecific(key, tstate);
    Put<unsigned long>(tstate, l.ts_thread_id, static_cast<unsigned long>(pthread_self()));
    Put<uintptr_t>(tstate, l.ts_frame, Addr(cframe));
    Put<uintptr_t>(tstate, l.ts_datastack_chunk, Addr(chunk));
    Put<uintptr_t>(chunk, l.chunk_size, sizeof(chunk));
    chunk_used = l.chunk_data;
    SetTop();
  }
  ~FakePython() {
    pthread_setspecific(key, nullptr);
    pthread_key_delete(key);
    for (auto* o : objects) delete o;
  }
  PyProcess Process() const {
    PyProcess p;
    p.layout = &l;
    p.runtime = Addr(runtime);
    p.code_type = Addr(code_type);
    p.str_type = Addr(str_type);
    return p;
  }
  unsigned char* Object(size_t n) {
    objects.push_back(new std::vector<unsigned char>(n + 8));
    return objects.back()->data();
  }
  uintptr_t Str(const std::string& s) {
    unsigned char* o = Object(l.str_ascii_size + s.size() + 1);
    Put<uintptr_t>(o, 8, Addr(str_type));
    Put<intptr_t>(o, l.str_length, static_cast<intptr_t>(s.size()));
    Put<uint32_t>(o, l.str_state, (1u << 2) | (1u << 5) | (1u << 6));  // kind 1, compact, ascii
    memcpy(o + l.str_ascii_size, s.data(), s.size());
    return Addr(o);
  }
  /// A code object of `units` code units, lines: first_line + 1 for all of them.
  uintptr_t Code(const std::string& qualname, const std::string& file, int first_line, int units = 8) {
    unsigned char* table = Object(40);
    unsigned char* o = Object(l.code_adaptive + 2 * units);
    Put<uintptr_t>(o, 8, Addr(code_type));
    Put<intptr_t>(o, 16, units);
    Put<uintptr_t>(o, l.code_filename, Str(file));
    Put<uintptr_t>(o, l.code_qualname, Str(qualname));
    Put<uintptr_t>(o, l.code_linetable, Addr(table));
    Remake(Addr(o), qualname, file, first_line);
    return Addr(o);
  }
  /// Code object `code` freed and another made in its memory, as CPython's allocator does: its
  /// name, file and line table objects in their predecessors' memory too (names of the same
  /// lengths), first line first_line, lines first_line + line_step for all of its units, and a
  /// new co_version (3.12+).
  void Remake(uintptr_t code, const std::string& qualname, const std::string& file, int first_line,
              int line_step = 1) {
    auto* o = reinterpret_cast<unsigned char*>(code);
    Put<int32_t>(o, l.code_firstlineno, first_line);
    for (auto [field, text] : {std::pair{l.code_qualname, qualname}, std::pair{l.code_filename, file}}) {
      uintptr_t str;
      intptr_t length;
      memcpy(&str, o + field, sizeof(str));
      memcpy(&length, reinterpret_cast<unsigned char*>(str) + l.str_length, sizeof(length));
      ASSERT_EQ(static_cast<size_t>(length), text.size()) << text;
      memcpy(reinterpret_cast<unsigned char*>(str) + l.str_ascii_size, text.data(), text.size());
    }
    uintptr_t table;
    memcpy(&table, o + l.code_linetable, sizeof(table));
    auto* t = reinterpret_cast<unsigned char*>(table);
    Put<intptr_t>(t, 16, 2);
    t[32] = static_cast<unsigned char>(0x80 | (13 << 3) | 7);  // no columns, 8 units, then the line delta
    t[33] = static_cast<unsigned char>(line_step << 1);        // a signed varint: step * 2
    if (l.code_version != 0) Put<uint32_t>(o, l.code_version, next_version++);
  }
  /// Pushes a frame running `code` at code unit `unit` on the data stack; it becomes the innermost.
  unsigned char* Push(uintptr_t code, int unit) {
    unsigned char* f = chunk + chunk_used;
    chunk_used += l.frame_header + 16;
    Put<uintptr_t>(f, l.frame_code, code);
    Put<uintptr_t>(f, l.frame_previous, Current());
    Put<uintptr_t>(f, l.frame_instr, code + l.code_adaptive + 2 * unit);
    SetCurrent(Addr(f));
    SetTop();
    return f;
  }
  /// A code object of `entries` line table entries of 8 code units each, all on its first line
  /// but the last (+1, its delta byte at *last).
  uintptr_t BigCode(const std::string& qualname, const std::string& file, int first_line, size_t entries,
                    unsigned char** last) {
    unsigned char* table = Object(32 + 2 * entries);
    Put<intptr_t>(table, 16, static_cast<intptr_t>(2 * entries));
    for (size_t i = 0; i < entries; ++i) {
      table[32 + 2 * i] = static_cast<unsigned char>(0x80 | (13 << 3) | 7);
      table[33 + 2 * i] = 0;
    }
    *last = table + 31 + 2 * entries;
    **last = 1 << 1;
    const size_t units = 8 * entries;
    unsigned char* o = Object(l.code_adaptive + 2 * units);
    Put<uintptr_t>(o, 8, Addr(code_type));
    Put<intptr_t>(o, 16, static_cast<intptr_t>(units));
    Put<int32_t>(o, l.code_firstlineno, first_line);
    Put<uintptr_t>(o, l.code_filename, Str(file));
    Put<uintptr_t>(o, l.code_qualname, Str(qualname));
    Put<uintptr_t>(o, l.code_linetable, Addr(table));
    return Addr(o);
  }
  /// Pops the frames from `f` on (f and those pushed after it).
  void Pop(unsigned char* f) {
    uintptr_t previous;
    memcpy(&previous, f + l.frame_previous, sizeof(previous));
    SetCurrent(previous);
    chunk_used = static_cast<size_t>(f - chunk);
    SetTop();
  }
  uintptr_t Current() const {
    uintptr_t f;
    memcpy(&f, cframe + l.cframe_current_frame, 8);
    return f;
  }
  void SetCurrent(uintptr_t f) { Put<uintptr_t>(cframe, l.cframe_current_frame, f); }
  void SetTop() { Put<uintptr_t>(tstate, l.ts_datastack_top, Addr(chunk + chunk_used)); }
};

struct Names {
  std::vector<std::string> s{""};
  bool refuse = false;
  static uint32_t Intern(void* ctx, const char* b, uint32_t n) {
    auto* self = static_cast<Names*>(ctx);
    if (self->refuse) return 0;
    self->s.emplace_back(b, n);
    return static_cast<uint32_t>(self->s.size() - 1);
  }
};

struct Walk {
  std::vector<std::string> frames;  // "function file:line"
  uint32_t missed = 0;
  size_t safe_reads = 0;  // system calls the walk made
};

// Each test: a made-up interpreter, a walker (large: on the heap) and the names it interned.
class AsyncPythonWalk : public ::testing::Test {
 protected:
  explicit AsyncPythonWalk(unsigned long version = kPy311) : py(version) {}

  Walk Walked(uintptr_t epoch = 1, pid_t pid = getpid()) {
    uint64_t out[3 * 64];
    Walk r;
    const SafeReader reader(pid);
    const size_t n = w->Capture(py.Process(), reader, Names::Intern, &names, epoch, out, 3 * 64, &r.missed);
    r.safe_reads = reader.calls();
    for (size_t i = 0; i + 3 <= n; i += 3) {
      r.frames.push_back(names.s[out[i] >> 1] + " " + names.s[out[i + 1]] + ":" + std::to_string(out[i + 2]));
    }
    return r;
  }

  FakePython py;
  std::unique_ptr<AsyncPythonWalker> w = std::make_unique<AsyncPythonWalker>();
  Names names;
};

uintptr_t Unmapped() {
  void* p = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(p, 4096);
  return Addr(p);
}

// The same cases on 3.11 (no co_version: cache hits are proven by content) and 3.12 (by co_version).
class AsyncPythonWalkVersions : public AsyncPythonWalk, public ::testing::WithParamInterface<unsigned long> {
 protected:
  AsyncPythonWalkVersions() : AsyncPythonWalk(GetParam()) {}
};
INSTANTIATE_TEST_SUITE_P(Py, AsyncPythonWalkVersions, ::testing::Values(kPy311, kPy312),
                         [](const auto& info) { return info.param == kPy311 ? "3_11" : "3_12"; });

TEST_P(AsyncPythonWalkVersions, FramesInnermostFirstWithNamesAndLines) {
  py.Push(py.Code("main", "train.py", 40), 3);
  py.Push(py.Code("Model.forward", "model.py", 10), 0);
  Walk r = Walked();
  EXPECT_EQ(r.frames, (std::vector<std::string>{"Model.forward model.py:11", "main train.py:41"}));
  EXPECT_EQ(r.missed, 0u);
  // Again: names and lines come from the cache, and only the innermost frame's objects are read
  // through system calls (its callers' frames are calls in progress: read directly): its code
  // object, and where there is no co_version to prove the cache entry its own (3.11), its name,
  // file and line table, one read each.
  const uint64_t misses = w->name_misses(), lines = w->line_misses();
  for (int i = 0; i < 6; ++i) py.Push(py.Code("layer" + std::to_string(i), "model.py", 100), 0);
  Walked();
  r = Walked();
  EXPECT_EQ(r.frames.size(), 8u);
  EXPECT_EQ(r.frames[7], "main train.py:41");
  EXPECT_EQ(r.safe_reads, py.l.code_version != 0 ? 1u : 4u);
  EXPECT_EQ(w->name_misses(), misses + 6);
  EXPECT_EQ(w->line_misses(), lines + 6);
}

TEST_P(AsyncPythonWalkVersions, CodeMemoryReusedShowsTheNewFunction) {
  // A code object called, freed, and another made in its memory with its name, file and line
  // table objects in its predecessor's (issue 35: 1M short-lived functions): each is shown under
  // its own name, file and line, as the innermost frame (read through system calls) and as a
  // caller (read directly).
  const uintptr_t code = py.Code("gen.f1", "/gen/mod1.py", 10);
  py.Push(code, 0);
  EXPECT_EQ(Walked().frames, std::vector<std::string>{"gen.f1 /gen/mod1.py:11"});
  py.Remake(code, "gen.f2", "/gen/mod2.py", 500);
  EXPECT_EQ(Walked().frames, std::vector<std::string>{"gen.f2 /gen/mod2.py:501"});
  py.Push(py.Code("leaf", "a.py", 1), 0);
  EXPECT_EQ(Walked().frames, (std::vector<std::string>{"leaf a.py:2", "gen.f2 /gen/mod2.py:501"}));
  py.Remake(code, "gen.f3", "/gen/mod3.py", 70);
  EXPECT_EQ(Walked().frames, (std::vector<std::string>{"leaf a.py:2", "gen.f3 /gen/mod3.py:71"}));
  // The same names and first line, another line table: its lines, not the cached ones.
  py.Remake(code, "gen.f3", "/gen/mod3.py", 70, 9);
  EXPECT_EQ(Walked().frames, (std::vector<std::string>{"leaf a.py:2", "gen.f3 /gen/mod3.py:79"}));
  // And the cache still serves the code objects that stay.
  const uint64_t misses = w->name_misses(), lines = w->line_misses();
  EXPECT_EQ(Walked().frames, (std::vector<std::string>{"leaf a.py:2", "gen.f3 /gen/mod3.py:79"}));
  EXPECT_EQ(w->name_misses(), misses);
  EXPECT_EQ(w->line_misses(), lines);
}

TEST_F(AsyncPythonWalk, ContentCheckReadsTheWholeLineTable) {
  // 3.11 (no co_version): a line table changed past its first block (2,000 bytes: the check reads
  // 1 KiB a time) or past the size the check hashes (70,000 bytes: its lines are not cached) gives
  // the new line, as the innermost frame and as a caller.
  for (const size_t entries : {1000u, 35000u}) {
    SCOPED_TRACE(entries);
    unsigned char* last = nullptr;
    const uintptr_t code = py.BigCode("big", "big.py", 1, entries, &last);
    unsigned char* frame = py.Push(code, static_cast<int>(entries * 8 - 1));
    EXPECT_EQ(Walked().frames, std::vector<std::string>{"big big.py:2"});
    *last = 5 << 1;  // the last entry's line delta: +5
    EXPECT_EQ(Walked().frames, std::vector<std::string>{"big big.py:6"});
    py.Push(py.Code("leaf", "a.py", 1), 0);
    EXPECT_EQ(Walked().frames, (std::vector<std::string>{"leaf a.py:2", "big big.py:6"}));
    *last = 7 << 1;
    EXPECT_EQ(Walked().frames, (std::vector<std::string>{"leaf a.py:2", "big big.py:8"}));
    py.Pop(frame);
  }
}

TEST_F(AsyncPythonWalk, NoThreadStateNoFramesNothingMissed) {
  EXPECT_TRUE(Walked().frames.empty());  // no current frame
  py.Push(py.Code("f", "a.py", 1), 0);
  pthread_setspecific(py.key, nullptr);  // a thread that never ran Python
  Walk r = Walked();
  EXPECT_TRUE(r.frames.empty());
  EXPECT_EQ(r.missed, 0u);
  pthread_setspecific(py.key, py.tstate);
  Put<unsigned long>(py.tstate, py.l.ts_thread_id, 12345);  // another thread's state: not used
  EXPECT_TRUE(Walked().frames.empty());
}

TEST_F(AsyncPythonWalk, TornStatesAreMissedNotFaulted) {
  py.Push(py.Code("outer", "a.py", 1), 0);
  unsigned char* inner = py.Push(py.Code("inner", "a.py", 20), 0);
  // The innermost frame names a code object in unmapped memory (a frame caught half-pushed).
  Put<uintptr_t>(inner, py.l.frame_code, Unmapped());
  Walk r = Walked();
  EXPECT_EQ(r.frames, std::vector<std::string>{"outer a.py:2"});
  EXPECT_EQ(r.missed, 1u);
  // Its code pointer names something that is not a code object.
  Put<uintptr_t>(inner, py.l.frame_code, py.Str("not code"));
  r = Walked();
  EXPECT_EQ(r.frames, std::vector<std::string>{"outer a.py:2"});
  EXPECT_EQ(r.missed, 1u);
  // An instruction pointer outside its code.
  const uintptr_t code = py.Code("inner", "a.py", 20);
  Put<uintptr_t>(inner, py.l.frame_code, code);
  Put<uintptr_t>(inner, py.l.frame_instr, code + 4096);
  EXPECT_EQ(Walked().missed, 1u);
  // The chain leads out of the data stack into unmapped memory: the walk stops there.
  Put<uintptr_t>(inner, py.l.frame_instr, code + py.l.code_adaptive);
  Put<uintptr_t>(inner, py.l.frame_previous, Unmapped());
  r = Walked();
  EXPECT_EQ(r.frames, std::vector<std::string>{"inner a.py:21"});
  EXPECT_EQ(r.missed, 1u);
  // The current frame is above the data stack's top (popped), in memory never mapped.
  py.SetCurrent(Unmapped());
  r = Walked();
  EXPECT_TRUE(r.frames.empty());
  EXPECT_EQ(r.missed, 1u);
}

TEST_F(AsyncPythonWalk, RefusedSafeReadsMissEveryFrame) {
  // Where the kernel refuses process_vm_readv (a seccomp filter): no frame checks out, each is
  // counted, nothing is read directly on trust.
  py.Push(py.Code("f", "a.py", 1), 0);
  py.Push(py.Code("g", "a.py", 5), 0);
  py.Push(py.Code("h", "a.py", 9), 0);
  Walk r = Walked(1, 0);
  EXPECT_TRUE(r.frames.empty());
  EXPECT_EQ(r.missed, 3u);
}

TEST_F(AsyncPythonWalk, NamesNotInternedAreMissed) {
  names.refuse = true;  // the string table's lock is held elsewhere
  py.Push(py.Code("f", "a.py", 1), 0);
  py.Push(py.Code("g", "a.py", 5), 0);
  Walk r = Walked();
  EXPECT_TRUE(r.frames.empty());
  EXPECT_EQ(r.missed, 2u);
  names.refuse = false;  // the next sample names them
  EXPECT_EQ(Walked().frames, (std::vector<std::string>{"g a.py:6", "f a.py:2"}));
}

TEST_F(AsyncPythonWalk, CacheFollowsNamesAndStringTables) {
  const uintptr_t code = py.Code("old_name", "a.py", 1);
  py.Push(code, 0);
  EXPECT_EQ(Walked().frames, std::vector<std::string>{"old_name a.py:2"});
  // The same address now a code object of another name (freed, reused): looked up again.
  Put<uintptr_t>(reinterpret_cast<unsigned char*>(code), py.l.code_qualname, py.Str("new_name"));
  EXPECT_EQ(Walked().frames, std::vector<std::string>{"new_name a.py:2"});
  // Another string table (a fork child's trace): ids are interned again.
  const uint64_t misses = w->name_misses();
  Walked(2);
  EXPECT_EQ(w->name_misses(), misses + 1);
}

TEST_F(AsyncPythonWalk, ShimAndIncompleteFramesLeftOut) {
  py.Push(py.Code("user", "train.py", 1), 0);
  py.Push(py.Code("hook", "/usr/lib/python3/dist-packages/_trainprof/phases.py", 1), 0);
  // A frame not started yet (prev_instr before _co_firsttraceable).
  const uintptr_t code = py.Code("starting", "train.py", 9);
  Put<int32_t>(reinterpret_cast<unsigned char*>(code), py.l.code_firsttraceable, 2);
  py.Push(code, 1);
  Walk r = Walked();
  EXPECT_EQ(r.frames, std::vector<std::string>{"user train.py:2"});
  EXPECT_EQ(r.missed, 0u);
}

TEST(AsyncPythonLayout, OnlyVersionsWithATable) {
  EXPECT_EQ(PyLayoutFor(0x03090000), nullptr);  // 3.9
  EXPECT_EQ(PyLayoutFor(0x030E0000), nullptr);  // 3.14: no table yet
  EXPECT_EQ(PyLayoutFor(0x020712F0), nullptr);  // 2.7
  for (unsigned long minor = 10; minor <= 13; ++minor) {
    const PyLayout* l = PyLayoutFor(0x03000000 | minor << 16 | 0x01F0);
    ASSERT_NE(l, nullptr) << minor;
    EXPECT_EQ(l->minor, minor);
    EXPECT_EQ(PyLayoutFor(0x03000000 | minor << 16 | 0x07F0), l);  // the same for every release
  }
}

TEST(AsyncPythonLayout, VersionFromText) {
  EXPECT_EQ(PyVersionFromString("3.10.13 (main, May  9 2026, 07:34:36) [GCC 12.2.0]"), 0x030A0D00u);
  EXPECT_EQ(PyVersionFromString("3.14.0 free-threading build (main, Oct 7 2025)"), 0x030E0000u);
  EXPECT_EQ(PyVersionFromString("3.12"), 0x030C0000u);
  EXPECT_EQ(PyVersionFromString("python"), 0u);
  EXPECT_EQ(PyVersionFromString(nullptr), 0u);
}

// A process's symbols, made up: Py_Version (or none), Py_GetVersion's text, and whether the debug
// build's _Py_NegativeRefcount is there.
struct FakeSymbols {
  static inline unsigned long version = 0;
  static inline bool has_version = true, debug = false;
  static inline const char* text = "";
  static inline unsigned char object[8];
  static const char* GetVersion() { return text; }
  static void* Lookup(const char* name) {
    const std::string n = name;
    if (n == "Py_Version") return has_version ? &version : nullptr;
    if (n == "Py_GetVersion") return reinterpret_cast<void*>(&GetVersion);
    if (n == "_Py_NegativeRefcount") return debug ? object : nullptr;
    if (n == "_PyRuntime" || n == "PyCode_Type" || n == "PyUnicode_Type" || n == "PyFrame_Type") return object;
    return nullptr;
  }
  static PyProcess Resolve(unsigned long v, const char* t, bool with_version = true, bool d = false) {
    version = v;
    text = t;
    has_version = with_version;
    debug = d;
    return ResolvePyProcess(Lookup);
  }
};

TEST(AsyncPythonLayout, PicksTheRunningVersionsLayout) {
  PyProcess p = FakeSymbols::Resolve(0x030C01F0, "3.12.1 (main) [GCC 12.2.0]");
  ASSERT_NE(p.layout, nullptr);
  EXPECT_EQ(p.layout->minor, 12u);
  EXPECT_STREQ(p.unsupported, "");
  // 3.10 has no Py_Version: its version comes from Py_GetVersion's text.
  p = FakeSymbols::Resolve(0, "3.10.13 (main, May  9 2026) [GCC 12.2.0]", false);
  ASSERT_NE(p.layout, nullptr);
  EXPECT_EQ(p.layout->minor, 10u);
  EXPECT_EQ(p.version, 0x030A0D00u);
}

TEST(AsyncPythonLayout, UnsupportedBuildsAreNamed) {
  PyProcess p = FakeSymbols::Resolve(0x030F00A1, "3.15.0a1 (main) [GCC 14]");  // a version too new
  EXPECT_EQ(p.layout, nullptr);
  EXPECT_STREQ(p.unsupported, "CPython 3.15");
  p = FakeSymbols::Resolve(0x030D00F0, "3.13.0 experimental free-threading build (main) [GCC 12]");
  EXPECT_EQ(p.layout, nullptr);
  EXPECT_STREQ(p.unsupported, "CPython 3.13 free-threaded");
  p = FakeSymbols::Resolve(0x030C01F0, "3.12.1 (main) [GCC 12.2.0]", true, true);
  EXPECT_EQ(p.layout, nullptr);
  EXPECT_STREQ(p.unsupported, "CPython 3.12 debug build");
  p = FakeSymbols::Resolve(0, "3.9.18 (main) [GCC 12.2.0]", false);
  EXPECT_EQ(p.layout, nullptr);
  EXPECT_STREQ(p.unsupported, "CPython 3.9");
  // A walk with no layout reads nothing (native frames only), and counts nothing as missed.
  auto w = std::make_unique<AsyncPythonWalker>();
  uint64_t out[6];
  uint32_t missed = 7;
  EXPECT_EQ(w->Capture(p, SafeReader(getpid()), Names::Intern, nullptr, 1, out, 6, &missed), 0u);
  EXPECT_EQ(missed, 0u);
}

}  // namespace
}  // namespace trainprof::inject::stacks
