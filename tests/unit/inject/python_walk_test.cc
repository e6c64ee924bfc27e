// The Python frame walk (inject/stacks/python_walk.h) against a fake interpreter: the C API
// functions it calls, over fake frames, code objects and strings that count their references.
#include "stacks/python_walk.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace trainprof::inject::stacks {
namespace {

struct Obj {
  int refs = 1;
};
struct Str : Obj {
  std::string s;
};
struct Code : Obj {
  Str qualname, name, filename;
  bool has_qualname = true;
};
struct Frame : Obj {
  Code* code = nullptr;
  Frame* back = nullptr;
  int line = 0;
  int lasti = -1;  // -1: no PyFrame_GetLasti answer (as 3.10 has none)
};
struct Error : Obj {};

// The fake interpreter's state (one test at a time).
struct Fake {
  bool gil = true;
  bool initialised = true;
  Frame* top = nullptr;
  bool gc_on = true;
  bool gc_off_during_walk = true;  // every frame access saw the collector off
  void* pending = nullptr;         // the exception set (PyErr_Occurred)
  int attr_calls = 0;
  int tstate = 0;
} g;

void* ThreadState() { return g.initialised ? &g.tstate : nullptr; }
int GilCheck() { return g.gil ? 1 : 0; }
// 3.11: thread_state() is the GIL holder's; this thread's own state differs when another holds it.
bool g_other_thread_holds_gil = false;
int g_other_tstate = 0;
void* ThisThreadState() { return g_other_thread_holds_gil ? &g_other_tstate : &g.tstate; }
void IncRef(void* o) {
  if (o != nullptr) ++static_cast<Obj*>(o)->refs;
}
void DecRef(void* o) {
  if (o != nullptr) --static_cast<Obj*>(o)->refs;
}
void* New(Obj* o) {
  IncRef(o);
  return o;
}
void* ThreadFrame(void* t) {
  EXPECT_EQ(t, &g.tstate);
  g.gc_off_during_walk &= !g.gc_on;
  return g.top != nullptr ? New(g.top) : nullptr;
}
void* FrameBack(void* f) {
  g.gc_off_during_walk &= !g.gc_on;
  Frame* b = static_cast<Frame*>(f)->back;
  return b != nullptr ? New(b) : nullptr;
}
void* FrameCode(void* f) { return New(static_cast<Frame*>(f)->code); }
int FrameLine(void* f) { return static_cast<Frame*>(f)->line; }
int FrameLasti(void* f) { return static_cast<Frame*>(f)->lasti; }
Error g_attribute_error;
void* GetAttr(void* o, const char* name) {
  ++g.attr_calls;
  EXPECT_EQ(g.pending, nullptr) << "lookup with an exception set";
  auto* c = static_cast<Code*>(o);
  if (strcmp(name, "co_qualname") == 0 && c->has_qualname) return New(&c->qualname);
  if (strcmp(name, "co_name") == 0) return New(&c->name);
  if (strcmp(name, "co_filename") == 0) return New(&c->filename);
  g.pending = New(&g_attribute_error);
  return nullptr;
}
const char* Utf8(void* s, ssize_t* n) {
  *n = static_cast<ssize_t>(static_cast<Str*>(s)->s.size());
  return static_cast<Str*>(s)->s.data();
}
void ErrFetch(void** type, void** value, void** tb) {
  *type = g.pending;
  *value = nullptr;
  *tb = nullptr;
  g.pending = nullptr;
}
void ErrRestore(void* type, void*, void*) { g.pending = type; }
int GcDisable() {
  bool was = g.gc_on;
  g.gc_on = false;
  return was ? 1 : 0;
}
int GcEnable() {
  bool was = g.gc_on;
  g.gc_on = true;
  return was ? 1 : 0;
}

PyApi FakeApi() {
  return PyApi{.thread_state = ThreadState, .gil_check = GilCheck, .this_thread_state = ThisThreadState,
               .thread_frame = ThreadFrame, .frame_back = FrameBack, .frame_code = FrameCode,
               .frame_line = FrameLine, .frame_lasti = FrameLasti, .get_attr = GetAttr, .utf8 = Utf8, .err_fetch = ErrFetch,
               .err_restore = ErrRestore, .gc_disable = GcDisable, .gc_enable = GcEnable, .incref = IncRef,
               .decref = DecRef, .ok = true};
}

// A string table: ids from 1 in order of first use.
struct Strings {
  std::map<std::string, uint32_t> ids;
  std::vector<std::string> names{""};
  static uint32_t Intern(void* ctx, const char* s, uint32_t n) {
    auto* t = static_cast<Strings*>(ctx);
    auto [it, added] = t->ids.emplace(std::string(s, n), static_cast<uint32_t>(t->names.size()));
    if (added) t->names.emplace_back(s, n);
    return it->second;
  }
};

// A program's stack: frames[0] is the innermost.
struct Program {
  std::vector<Code> codes;
  std::vector<Frame> frames;
  Program(const std::vector<std::pair<std::string, std::string>>& functions, const std::vector<int>& lines) {
    codes.resize(functions.size());
    frames.resize(functions.size());
    for (size_t i = 0; i < functions.size(); ++i) {
      codes[i].qualname.s = functions[i].first;
      codes[i].name.s = functions[i].first.substr(functions[i].first.rfind('.') + 1);
      codes[i].filename.s = functions[i].second;
      frames[i].code = &codes[i];
      frames[i].line = lines[i];
      frames[i].back = i + 1 < frames.size() ? &frames[i + 1] : nullptr;
    }
    g = Fake{};
    g.top = frames.empty() ? nullptr : &frames[0];
  }
};

struct Decoded {
  std::string function, file;
  uint64_t line;
  bool operator==(const Decoded&) const = default;
};

std::vector<Decoded> Decode(const Strings& s, const uint64_t* v, size_t n) {
  std::vector<Decoded> out;
  for (size_t i = 0; i + 3 <= n; i += 3) {
    EXPECT_EQ(v[i] & 1, 1u) << "a Python frame has bit 0 set";
    out.push_back({s.names.at(v[i] >> 1), s.names.at(v[i + 1]), v[i + 2]});
  }
  return out;
}

// One walker (on the heap: its cache is ~230 KB) with a string table and room for a stack.
struct Walk {
  std::unique_ptr<PythonWalker> w = std::make_unique<PythonWalker>();
  Strings s;
  uint64_t out[16] = {};
  PyApi api = FakeApi();
  size_t Run() { return w->Capture(api, Strings::Intern, &s, &s, out, std::size(out)); }
};

TEST(PythonWalk, FramesInnermostFirstWithNamesFilesAndLines) {
  Program p({{"Trainer.load_batch", "/src/train.py"}, {"main", "/src/train.py"}, {"<module>", "/src/run.py"}},
            {42, 17, 3});
  static PythonWalker w;
  Strings s;
  uint64_t out[64 * 3];
  PyApi api = FakeApi();
  size_t n = w.Capture(api, Strings::Intern, &s, &s, out, std::size(out));
  ASSERT_EQ(n, 9u);
  EXPECT_EQ(Decode(s, out, n), (std::vector<Decoded>{{"Trainer.load_batch", "/src/train.py", 42},
                                                      {"main", "/src/train.py", 17},
                                                      {"<module>", "/src/run.py", 3}}));
  // Every new reference given back; the cache keeps one per code object.
  for (const Frame& f : p.frames) EXPECT_EQ(f.refs, 1);
  for (const Code& c : p.codes) EXPECT_EQ(c.refs, 2);
  for (const Code& c : p.codes) EXPECT_EQ(c.qualname.refs + c.filename.refs, 2);
  EXPECT_TRUE(g.gc_off_during_walk);
  EXPECT_TRUE(g.gc_on) << "the collector is back on";
}

TEST(PythonWalk, WithoutTheGilOrBeforeInitialisationNothing) {
  Program p({{"f", "/a.py"}}, {1});
  static PythonWalker w;
  Strings s;
  uint64_t out[8];
  PyApi api = FakeApi();
  g.gil = false;
  EXPECT_EQ(w.Capture(api, Strings::Intern, &s, &s, out, 8), 0u);
  g.gil = true;
  g.initialised = false;
  EXPECT_EQ(w.Capture(api, Strings::Intern, &s, &s, out, 8), 0u);
  g.initialised = true;
  g_other_thread_holds_gil = true;  // and the check turned off by a subinterpreter: says 1
  EXPECT_EQ(w.Capture(api, Strings::Intern, &s, &s, out, 8), 0u);
  g_other_thread_holds_gil = false;
  api.ok = false;
  EXPECT_EQ(w.Capture(api, Strings::Intern, &s, &s, out, 8), 0u);
  EXPECT_EQ(p.frames[0].refs, 1);
  EXPECT_EQ(g.attr_calls, 0);
}

TEST(PythonWalk, AtMost64FramesAndOnlyWholeFramesInTheRoomGiven) {
  std::vector<std::pair<std::string, std::string>> fns;
  std::vector<int> lines;
  for (int i = 0; i < 100; ++i) {
    fns.push_back({"recurse", "/deep.py"});
    lines.push_back(i + 1);
  }
  Program p(fns, lines);
  static PythonWalker w;
  Strings s;
  uint64_t out[200 * 3];
  PyApi api = FakeApi();
  size_t n = w.Capture(api, Strings::Intern, &s, &s, out, std::size(out));
  EXPECT_EQ(n, kMaxPythonFrames * 3);
  EXPECT_EQ(out[n - 1], 64u) << "the innermost 64";
  EXPECT_EQ(w.Capture(api, Strings::Intern, &s, &s, out, 8), 6u) << "two whole frames fit in 8";
  for (const Frame& f : p.frames) EXPECT_EQ(f.refs, 1);
}

TEST(PythonWalk, ShimFramesLeftOutSoThePhaseStartsAtTheUsersLine) {
  Program p({{"Native.push", "/opt/trainprof/python/_trainprof/native.py"},
             {"_phase_wrapper.<locals>.wrapper", "/opt/trainprof/python/_trainprof/torch_phases.py"},
             {"train", "/home/u/train.py"}},
            {99, 54, 12});
  static PythonWalker w;
  Strings s;
  uint64_t out[16];
  PyApi api = FakeApi();
  size_t n = w.Capture(api, Strings::Intern, &s, &s, out, std::size(out));
  EXPECT_EQ(Decode(s, out, n), (std::vector<Decoded>{{"train", "/home/u/train.py", 12}}));
  EXPECT_TRUE(IsOwnPythonFile("/x/_trainprof/a.py", 18));
  EXPECT_FALSE(IsOwnPythonFile("/x/trainprof/a.py", 17));
  for (const std::string own : {"/opt/build/python/sitecustomize.py", "/usr/share/trainprof/python/sitecustomize.py"}) {
    EXPECT_TRUE(IsOwnPythonFile(own.data(), own.size())) << own;
  }
  for (const std::string theirs : {"/venv/lib/python3.11/site-packages/sitecustomize.py", "/home/u/sitecustomize.py",
                                   "/opt/build/python/sitecustomize.pyc"}) {
    EXPECT_FALSE(IsOwnPythonFile(theirs.data(), theirs.size())) << theirs;
  }
}

TEST(PythonWalk, NamesLookedUpOncePerCodeObjectUntilTheStringTableChanges) {
  Program p({{"step", "/t.py"}, {"loop", "/t.py"}}, {5, 6});
  static PythonWalker w;
  Strings s;
  uint64_t out[16];
  PyApi api = FakeApi();
  w.Capture(api, Strings::Intern, &s, &s, out, 16);
  EXPECT_EQ(w.lookups(), 2u);
  p.frames[0].line = 7;
  size_t n = w.Capture(api, Strings::Intern, &s, &s, out, 16);
  EXPECT_EQ(w.lookups(), 2u) << "cached";
  EXPECT_EQ(out[2], 7u) << "the line is read every time";
  EXPECT_EQ(n, 6u);
  // A fork child's string table: ids re-interned there.
  Strings child;
  n = w.Capture(api, Strings::Intern, &child, &child, out, 16);
  EXPECT_EQ(w.lookups(), 4u);
  EXPECT_EQ(Decode(child, out, n), (std::vector<Decoded>{{"step", "/t.py", 7}, {"loop", "/t.py", 6}}));
}

TEST(PythonWalk, LinesRememberedPerInstructionOfACachedCodeObject) {
  Program p({{"step", "/t.py"}, {"loop", "/t.py"}}, {5, 6});
  p.frames[0].lasti = 40;
  p.frames[1].lasti = 12;
  Walk k;
  k.Run();
  EXPECT_EQ(k.w->line_lookups(), 2u);
  k.Run();
  EXPECT_EQ(k.w->line_lookups(), 2u) << "same instructions: lines remembered";
  EXPECT_EQ(k.out[2], 5u);
  EXPECT_EQ(k.out[5], 6u);
  p.frames[0].lasti = 44;  // the next call in step(), on line 7
  p.frames[0].line = 7;
  size_t n = k.Run();
  EXPECT_EQ(k.w->line_lookups(), 3u);
  EXPECT_EQ(Decode(k.s, k.out, n), (std::vector<Decoded>{{"step", "/t.py", 7}, {"loop", "/t.py", 6}}));
  p.frames[0].lasti = 40;  // back to the first instruction: still remembered (another slot)
  p.frames[0].line = 5;
  k.Run();
  EXPECT_EQ(k.w->line_lookups(), 3u);
  EXPECT_EQ(k.out[2], 5u);
  k.api.frame_lasti = nullptr;  // 3.10: every line from the interpreter
  k.Run();
  EXPECT_EQ(k.w->line_lookups(), 5u);
}

TEST(PythonWalk, OldInterpreterWithoutQualnameAndAPendingExceptionKept) {
  Program p({{"Model.forward", "/m.py"}}, {8});
  p.codes[0].has_qualname = false;
  Error user_error;
  g.pending = &user_error;
  static PythonWalker w;
  Strings s;
  uint64_t out[16];
  PyApi api = FakeApi();
  size_t n = w.Capture(api, Strings::Intern, &s, &s, out, 16);
  EXPECT_EQ(Decode(s, out, n), (std::vector<Decoded>{{"forward", "/m.py", 8}}));
  EXPECT_EQ(g.pending, &user_error) << "the program's exception is still set";
  EXPECT_EQ(g_attribute_error.refs, 1) << "the lookup's own exception was dropped";
}

TEST(PythonWalk, CollectorLeftOffWhenTheProgramHadItOff) {
  Program p({{"f", "/a.py"}}, {1});
  g.gc_on = false;
  static PythonWalker w;
  Strings s;
  uint64_t out[8];
  PyApi api = FakeApi();
  EXPECT_EQ(w.Capture(api, Strings::Intern, &s, &s, out, 8), 3u);
  EXPECT_FALSE(g.gc_on);
}

std::map<std::string, void*>* g_symbols;
void* Lookup(const char* name) {
  auto it = g_symbols->find(name);
  return it == g_symbols->end() ? nullptr : it->second;
}

TEST(PythonApi, ResolvedOnlyWhenEveryFunctionIsThere) {
  int dummy[16];  // 15 names, and one for 3.13's
  std::map<std::string, void*> syms;
  const char* names[] = {"_PyThreadState_UncheckedGet", "PyGILState_Check", "PyGILState_GetThisThreadState",
                         "PyThreadState_GetFrame",
                         "PyFrame_GetBack", "PyFrame_GetCode", "PyFrame_GetLineNumber",
                         "PyObject_GetAttrString", "PyUnicode_AsUTF8AndSize", "PyErr_Fetch",
                         "PyErr_Restore", "PyGC_Disable", "PyGC_Enable", "Py_IncRef", "Py_DecRef"};
  for (int i = 0; i < 15; ++i) syms[names[i]] = &dummy[i];
  g_symbols = &syms;
  PyApi a = ResolvePyApi(Lookup);
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(reinterpret_cast<void*>(a.thread_state), &dummy[0]);
  syms["PyThreadState_GetUnchecked"] = &dummy[15];  // 3.13's name wins
  EXPECT_EQ(reinterpret_cast<void*>(ResolvePyApi(Lookup).thread_state), &dummy[15]);
  syms.erase("PyGC_Disable");  // 3.9
  EXPECT_FALSE(ResolvePyApi(Lookup).ok);
  syms.clear();  // no Python in the process
  EXPECT_FALSE(ResolvePyApi(Lookup).ok);
}

}  // namespace
}  // namespace trainprof::inject::stacks
