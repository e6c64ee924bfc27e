#include "stacks/python_async_walk.h"

#include <pthread.h>

#include <cstdio>
#include <cstring>

#include "stacks/py_linetable.h"
#include "stacks/python_walk.h"  // IsOwnPythonFile, kMaxPythonFrames
#include "string_table.h"         // HashBytes
#include "trainprof/trace_format.h"
#include "utf8.h"

namespace trainprof::inject::stacks {

namespace {

constexpr size_t kNameBytes = 1024;  ///< longest name kept (cut at a character boundary)
constexpr size_t kMaxChunks = 16;    ///< data stack chunks looked at
constexpr char kUnreadable[] = "<unreadable>";
constexpr size_t kStrHeader = 80;  ///< room for a PyCompactUnicodeObject (72 bytes on 3.10, 3.11)
// Line tables longer than this are not hashed for the identity check: their lines are not cached.
constexpr size_t kMaxCheckedTable = 64 << 10;
// Identity checks from co_version have this bit set, content checks have it clear (and bit 0 set:
// never 0, which means "none").
constexpr uint64_t kSerialCheck = uint64_t{1} << 63;

template <typename T>
T At(const unsigned char* base, size_t off) {
  T v;
  memcpy(&v, base + off, sizeof(T));
  return v;
}

template <typename T>
T Direct(uintptr_t addr) {
  T v;
  memcpy(&v, reinterpret_cast<const void*>(addr), sizeof(T));
  return v;
}

bool Aligned(uintptr_t p) { return p >= 4096 && (p & 7) == 0; }

// Reads of the interpreter's objects: through SafeReader (`safe`), or directly where the object
// belongs to a call in progress (see the header); neither touches NULL's page.
struct Mem {
  const SafeReader& reader;
  bool safe;
  bool Read(void* to, uintptr_t from, size_t n) const {
    if (safe) return reader.Read(to, from, n);
    if (from < 4096) return false;
    memcpy(to, reinterpret_cast<const void*>(from), n);
    return true;
  }
  // `least` bytes at `from` (and, through SafeReader, up to `most` as far as from's 4 KiB block
  // goes: a page is readable or not as a whole, so the longer read fails only where the shorter
  // one would): where they are when reads are direct (within the object: nothing past `least`),
  // else read into `scratch`; *got: the bytes there. nullptr when unreadable.
  const unsigned char* View(uintptr_t from, size_t least, size_t most, void* scratch, size_t* got) const {
    *got = least;
    if (!safe) return from >= 4096 ? reinterpret_cast<const unsigned char*>(from) : nullptr;
    const size_t room = 4096 - (from & 4095);
    *got = most <= room ? most : room > least ? room : least;
    return reader.Read(scratch, from, *got) ? static_cast<const unsigned char*>(scratch) : nullptr;
  }
};

// The thread's live data stack: [lo, hi) per chunk, read directly (see the header).
struct Chunks {
  uintptr_t lo[kMaxChunks], hi[kMaxChunks];
  size_t n = 0;
  bool Contains(uintptr_t p, size_t bytes) const {
    for (size_t i = 0; i < n; ++i) {
      if (p >= lo[i] && p + bytes <= hi[i]) return true;
    }
    return false;
  }
};

void FindChunks(const PyLayout& l, const unsigned char* ts, Chunks* c) {
  uintptr_t chunk = At<uintptr_t>(ts, l.ts_datastack_chunk);
  uintptr_t top = At<uintptr_t>(ts, l.ts_datastack_top);
  for (bool first = true; Aligned(chunk) && c->n < kMaxChunks; first = false) {
    const uintptr_t size = Direct<uintptr_t>(chunk + l.chunk_size);
    const uintptr_t lo = chunk + l.chunk_data;
    const uintptr_t hi = first ? top : lo + Direct<uintptr_t>(chunk + l.chunk_top) * sizeof(void*);
    if (hi >= lo && hi <= chunk + size) {
      c->lo[c->n] = lo;
      c->hi[c->n] = hi;
      ++c->n;
    }
    chunk = Direct<uintptr_t>(chunk + l.chunk_previous);
  }
}

// One frame as read: its code object, the byte offset of its instruction in the code (-2: not
// started), its owner, and (3.10, traced) the line the frame itself keeps (0: none).
struct Frame {
  uintptr_t code;
  intptr_t addr;
  int owner;
  int line;
};

// What is read of a code object: its first bytes up to the last field used, one read.
constexpr size_t kCodeHead = 256;

struct Code {
  uintptr_t type, filename, qualname, linetable;
  intptr_t size;  // code units
  int32_t firstlineno, firsttraceable;
  uint32_t version;  // co_version (3.12+; 0: none or run out)
};

size_t Max(size_t a, size_t b) { return a > b ? a : b; }

bool ReadCode(const PyLayout& l, const Mem& m, uintptr_t code, Code* c) {
  unsigned char h[kCodeHead];
  const size_t n =
      Max(Max(Max(l.code_firsttraceable, l.code_code), Max(l.code_linetable, l.code_qualname)), l.code_version) + 8;
  if (n > sizeof(h) || !Aligned(code) || !m.Read(h, code, n)) return false;
  c->type = At<uintptr_t>(h, 8);
  c->firstlineno = At<int32_t>(h, l.code_firstlineno);
  c->filename = At<uintptr_t>(h, l.code_filename);
  c->qualname = At<uintptr_t>(h, l.code_qualname);
  c->linetable = At<uintptr_t>(h, l.code_linetable);
  c->firsttraceable = l.code_firsttraceable != 0 ? At<int32_t>(h, l.code_firsttraceable) : 0;
  c->version = l.code_version != 0 ? At<uint32_t>(h, l.code_version) : 0;
  if (l.code_code == 0) {
    c->size = At<intptr_t>(h, 16);  // 3.11+: a PyVarObject of its code units
    return true;
  }
  // 3.10: the instructions are the bytes object co_code (ob_size at 16: bytes).
  const uintptr_t bytes = At<uintptr_t>(h, l.code_code);
  intptr_t size = -1;
  if (!Aligned(bytes) || !m.Read(&size, bytes + 16, sizeof(size))) return false;
  c->size = size / 2;
  return true;
}

// Appends code point c as UTF-8 if it fits.
size_t PutUtf8(char* out, size_t n, size_t cap, uint32_t c) {
  char e[4];
  const size_t k = EncodeUtf8(c, e);
  if (n + k > cap) return n;
  memcpy(out + n, e, k);
  return n + k;
}

// The UTF-8 of the str at `s` (cut to whole characters within kNameBytes): its length, *text
// pointing to it (in the str's own memory where reads are direct and the str holds it: compact
// ASCII, a UTF-8 copy; else in buf, kNameBytes + 1 bytes); -1 when it is not a readable str. A str
// with neither compact data nor a UTF-8 copy gives kUnreadable.
long ReadStr(const PyProcess& py, const Mem& r, uintptr_t s, char* buf, const char** text) {
  const PyLayout& l = *py.layout;
  *text = buf;
  // The ASCII header first (a short ASCII str may end before the compact header would), and
  // through SafeReader what follows it in the same read: most names are then read whole.
  size_t got = 0;
  const unsigned char* h =
      Aligned(s) && l.str_compact_size <= kStrHeader ? r.View(s, l.str_ascii_size, kNameBytes + 1, buf, &got) : nullptr;
  if (h == nullptr || At<uintptr_t>(h, 8) != py.str_type) return -1;
  const intptr_t length = At<intptr_t>(h, l.str_length);
  const uint32_t state = At<uint32_t>(h, l.str_state);
  const uint32_t kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (length < 0) return -1;
  size_t n = static_cast<size_t>(length);
  if (compact && ascii) {
    if (n > kNameBytes) n = kNameBytes;
    const unsigned char* data = l.str_ascii_size + n <= got ? h + l.str_ascii_size
                                                            : r.View(s + l.str_ascii_size, n, n, buf, &got);
    *text = reinterpret_cast<const char*>(data);
    return data != nullptr ? static_cast<long>(n) : -1;
  }
  unsigned char head[kStrHeader];
  memcpy(head, h, got < sizeof(head) ? got : sizeof(head));
  if (got < l.str_compact_size &&
      !r.Read(head + l.str_ascii_size, s + l.str_ascii_size, l.str_compact_size - l.str_ascii_size)) {
    return -1;
  }
  const uintptr_t utf8 = At<uintptr_t>(head, l.str_utf8);
  if (utf8 != 0) {
    const intptr_t u = At<intptr_t>(head, l.str_utf8_length);
    if (u < 0) return -1;
    n = static_cast<size_t>(u);
    if (n > kNameBytes) {
      n = kNameBytes;
      if (!r.Read(buf, utf8, n + 1)) return -1;
      while (n > 0 && (static_cast<unsigned char>(buf[n]) & 0xC0) == 0x80) --n;
      return static_cast<long>(n);
    }
    const unsigned char* data = r.View(utf8, n, n, buf, &got);
    *text = reinterpret_cast<const char*>(data);
    return data != nullptr ? static_cast<long>(n) : -1;
  }
  if (!compact || (kind != 1 && kind != 2 && kind != 4)) {
    memcpy(buf, kUnreadable, sizeof(kUnreadable) - 1);
    return sizeof(kUnreadable) - 1;
  }
  // Compact, not ASCII, no UTF-8 copy: latin-1, UCS-2 or UCS-4 code units follow the header.
  unsigned char units[kNameBytes];
  size_t count = n < kNameBytes / kind ? n : kNameBytes / kind;
  if (!r.Read(units, s + l.str_compact_size, count * kind)) return -1;
  size_t out = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t c = kind == 1 ? units[i] : kind == 2 ? At<uint16_t>(units, i * 2) : At<uint32_t>(units, i * 4);
    size_t next = PutUtf8(buf, out, kNameBytes, c);
    if (next == out) break;
    out = next;
  }
  return static_cast<long>(out);
}

// The line table's bytes (a bytes object: ob_size at 16, data at 32), read a block at a time.
class LineBytes {
 public:
  LineBytes(const Mem& r, uintptr_t bytes) : r_(r), data_(bytes + 32) {
    intptr_t size = -1;
    if (Aligned(bytes) && r.Read(&size, bytes + 16, sizeof(size)) && size >= 0) size_ = static_cast<size_t>(size);
  }
  size_t size() const { return size_; }
  int operator()(size_t i) {
    if (i < base_ || i >= base_ + have_) {
      base_ = i & ~size_t{255};
      have_ = size_ - base_ < sizeof(block_) ? size_ - base_ : sizeof(block_);
      if (!r_.Read(block_, data_ + base_, have_)) {
        have_ = 0;
        return -1;
      }
    }
    return block_[i - base_];
  }

 private:
  const Mem& r_;
  uintptr_t data_;
  size_t size_ = 0;
  size_t base_ = 0, have_ = 0;
  unsigned char block_[256];
};

uint64_t Mix(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 31);
}

// The content identity check of code object `c` (python_async_walk.h): a hash of its qualname and
// file name as ReadStr gives them (what is interned), its first line, and its line table's bytes
// (a bytes object: ob_size at 16, data at 32). 0 when a name cannot be read. *lines: whether the
// check covers the line table (false past kMaxCheckedTable bytes: the size alone is hashed, and
// the code object's lines must not be cached). buf: kNameBytes + 1 bytes of scratch.
uint64_t ContentCheck(const PyProcess& py, const Mem& m, const Code& c, char* buf, bool* lines) {
  uint64_t h = Mix(0x9E3779B97F4A7C15ull, static_cast<uint32_t>(c.firstlineno));
  for (const uintptr_t s : {c.qualname, c.filename}) {
    const char* text = nullptr;
    const long k = ReadStr(py, m, s, buf, &text);
    if (k < 0) return 0;
    h = Mix(h, HashBytes(text, static_cast<size_t>(k)));
  }
  // ob_size, and through SafeReader the first bytes after it in the same read.
  size_t got = 0;
  const unsigned char* head = Aligned(c.linetable) ? m.View(c.linetable + 16, 8, kNameBytes, buf, &got) : nullptr;
  const intptr_t size = head != nullptr ? At<intptr_t>(head, 0) : -1;
  h = Mix(h, static_cast<uint64_t>(size));
  *lines = size >= 0 && size <= static_cast<intptr_t>(kMaxCheckedTable);
  if (!*lines) return (h & ~kSerialCheck) | 1;
  // The bytes in blocks of kNameBytes from the start, the same whichever way they are read (a
  // table within the first read is one block).
  const size_t total = static_cast<size_t>(size);
  if (got >= 16 + total) {
    return (Mix(h, HashBytes(reinterpret_cast<const char*>(head) + 16, total)) & ~kSerialCheck) | 1;
  }
  for (size_t at = 0, n = 0; at < total; at += n) {
    n = total - at < kNameBytes ? total - at : kNameBytes;
    const unsigned char* block = m.View(c.linetable + 32 + at, n, n, buf, &got);
    if (block == nullptr) {
      h = Mix(h, at);  // unreadable from here on (LineBytes finds no line there either)
      break;
    }
    h = Mix(h, HashBytes(reinterpret_cast<const char*>(block), n));
  }
  return (h & ~kSerialCheck) | 1;
}

// Reads the chain of frames from `f` (the thread state's frame field's value), innermost first,
// into frames[0..kMaxPythonFrames); returns how many, and in *next what followed the last (0:
// the chain ended). A frame that cannot be read counts in *missed and ends the walk.
size_t ReadFrames(const PyProcess& py, const SafeReader& reader, const unsigned char* ts, uintptr_t f,
                  Frame* frames, uintptr_t* next, uint32_t* missed) {
  const PyLayout& l = *py.layout;
  Chunks chunks;
  if (l.chain != PyFrameChain::kFrameObjects) FindChunks(l, ts, &chunks);
  size_t nf = 0;
  unsigned char fh[128];
  static_assert(sizeof(fh) >= 104);
  while (f != 0 && nf < kMaxPythonFrames) {  // the innermost 64, as the GIL path keeps (a cycle ends too)
    if (!Aligned(f) || l.frame_header > sizeof(fh)) {
      ++*missed;
      break;
    }
    if (chunks.Contains(f, l.frame_header)) {
      memcpy(fh, reinterpret_cast<const void*>(f), l.frame_header);
    } else if (!reader.Read(fh, f, l.frame_header)) {
      ++*missed;
      break;
    }
    Frame& fr = frames[nf];
    fr.code = At<uintptr_t>(fh, l.frame_code);
    fr.line = 0;
    if (l.chain == PyFrameChain::kFrameObjects) {
      // A PyFrameObject (a heap object): its type must be PyFrame_Type.
      if (At<uintptr_t>(fh, 8) != py.frame_type) {
        ++*missed;
        break;
      }
      fr.addr = static_cast<intptr_t>(At<int32_t>(fh, l.frame_instr)) * 2;  // f_lasti: -1 not started
      fr.owner = 0;
      if (At<uintptr_t>(fh, l.frame_trace) != 0) fr.line = At<int32_t>(fh, l.frame_lineno);
    } else {
      fr.addr = static_cast<intptr_t>(At<uintptr_t>(fh, l.frame_instr) - (fr.code + l.code_adaptive));
      fr.owner = static_cast<int>(static_cast<signed char>(fh[l.frame_owner]));
    }
    ++nf;
    f = At<uintptr_t>(fh, l.frame_previous);
  }
  *next = f;
  return nf;
}

size_t SlotOf(uintptr_t code) { return static_cast<size_t>((code * 0x9E3779B97F4A7C15ull) >> 52); }
static_assert(AsyncPythonWalker::kSlots == 4096, "SlotOf gives 12 bits");

}  // namespace

unsigned long PyVersionFromString(const char* s) {
  unsigned major = 0, minor = 0, micro = 0;
  if (s == nullptr || sscanf(s, "%u.%u.%u", &major, &minor, &micro) < 2 || major > 255 || minor > 255 ||
      micro > 255) {
    return 0;
  }
  return static_cast<unsigned long>(major) << 24 | static_cast<unsigned long>(minor) << 16 |
         static_cast<unsigned long>(micro) << 8;
}

PyProcess ResolvePyProcess(SymbolLookup lookup) {
  PyProcess p;
  const auto* version = static_cast<const unsigned long*>(lookup("Py_Version"));  // 3.11+
  using GetVersion = const char* (*)();
  const auto get_version = reinterpret_cast<GetVersion>(lookup("Py_GetVersion"));
  const uintptr_t runtime = reinterpret_cast<uintptr_t>(lookup("_PyRuntime"));
  const uintptr_t code_type = reinterpret_cast<uintptr_t>(lookup("PyCode_Type"));
  const uintptr_t str_type = reinterpret_cast<uintptr_t>(lookup("PyUnicode_Type"));
  if (get_version == nullptr || runtime == 0 || code_type == 0 || str_type == 0) return p;  // no CPython
  // Py_GetVersion: "3.10.13 (main, ...) [GCC ...]"; free-threaded builds say so in it ("3.13.0
  // experimental free-threading build (main, ...)", 3.14: "free-threading build").
  const char* text = get_version();
  p.version = version != nullptr ? *version : PyVersionFromString(text);
  const unsigned major = (p.version >> 24) & 0xFF, minor = (p.version >> 16) & 0xFF;
  const char* build = "";
  if (text != nullptr && strstr(text, "free-threading") != nullptr) {
    build = " free-threaded";
  } else if (lookup("_Py_NegativeRefcount") != nullptr) {  // Py_REF_DEBUG: debug builds
    build = " debug build";
  } else {
    p.layout = PyLayoutFor(p.version);
  }
  if (p.layout == nullptr) {
    if (p.version == 0) {
      snprintf(p.unsupported, sizeof(p.unsupported), "CPython of unknown version%s", build);
    } else {
      snprintf(p.unsupported, sizeof(p.unsupported), "CPython %u.%u%s", major, minor, build);
    }
    return p;
  }
  p.runtime = runtime;
  p.code_type = code_type;
  p.str_type = str_type;
  p.frame_type = reinterpret_cast<uintptr_t>(lookup("PyFrame_Type"));
  if (p.layout->chain == PyFrameChain::kFrameObjects && p.frame_type == 0) {
    p.layout = nullptr;
    snprintf(p.unsupported, sizeof(p.unsupported), "CPython %u.%u without PyFrame_Type", major, minor);
  }
  return p;
}

AsyncPythonWalker::Entry* AsyncPythonWalker::Lookup(uintptr_t code, uint64_t check, uintptr_t epoch, Names* n,
                                                    uint32_t* gen) {
  Entry& e = slots_[SlotOf(code)];
  const uint32_t s1 = e.seq.load(std::memory_order_acquire);
  if (s1 & 1) return nullptr;
  const bool same = e.code.load(std::memory_order_relaxed) == code &&
                    e.check.load(std::memory_order_relaxed) == check &&
                    e.epoch.load(std::memory_order_relaxed) == epoch;
  n->function = e.function.load(std::memory_order_relaxed);
  n->file = e.file.load(std::memory_order_relaxed);
  n->own = e.own.load(std::memory_order_relaxed) != 0;
  std::atomic_thread_fence(std::memory_order_acquire);
  if (!same || e.seq.load(std::memory_order_relaxed) != s1) return nullptr;
  *gen = s1;
  return &e;
}

void AsyncPythonWalker::Store(uintptr_t code, uint64_t check, uintptr_t epoch, const Names& n) {
  Entry& e = slots_[SlotOf(code)];
  uint32_t s = e.seq.load(std::memory_order_relaxed);
  if ((s & 1) || !e.seq.compare_exchange_strong(s, s + 1, std::memory_order_acquire)) return;  // busy
  std::atomic_thread_fence(std::memory_order_release);
  e.code.store(code, std::memory_order_relaxed);
  e.check.store(check, std::memory_order_relaxed);
  e.epoch.store(epoch, std::memory_order_relaxed);
  e.function.store(n.function, std::memory_order_relaxed);
  e.file.store(n.file, std::memory_order_relaxed);
  e.own.store(n.own ? 1 : 0, std::memory_order_relaxed);
  for (auto& line : e.lines) line.store(0, std::memory_order_relaxed);
  e.seq.store(s + 2, std::memory_order_release);
}

size_t AsyncPythonWalker::Capture(const PyProcess& py, const SafeReader& reader, AsyncInternFn intern, void* ctx,
                                  uintptr_t epoch, uint64_t* out, size_t max_values, uint32_t* missed,
                                  bool* cut) {
  *missed = 0;
  if (cut != nullptr) *cut = false;
  if (py.layout == nullptr) return 0;
  const PyLayout& l = *py.layout;
  // This thread's PyThreadState (none: a thread that never ran Python, or Python not started).
  const int tss_ready = Direct<int>(py.runtime + l.runtime_tss);
  if (tss_ready == 0) return 0;
  const auto key = Direct<pthread_key_t>(py.runtime + l.runtime_tss + 4);
  const auto tstate = reinterpret_cast<uintptr_t>(pthread_getspecific(key));
  if (tstate == 0) return 0;
  unsigned char ts[512];
  if (l.ts_read > sizeof(ts) || !Aligned(tstate)) return 0;
  memcpy(ts, reinterpret_cast<const void*>(tstate), l.ts_read);
  if (At<unsigned long>(ts, l.ts_thread_id) != static_cast<unsigned long>(pthread_self())) return 0;
  uintptr_t f = At<uintptr_t>(ts, l.ts_frame);
  if (l.chain == PyFrameChain::kCFrame) {
    if (!Aligned(f)) return 0;
    f = Direct<uintptr_t>(f + l.cframe_current_frame);
  }
  if (f == 0) return 0;  // no Python code running on this thread

  // The frames, innermost first.
  Frame frames[kMaxPythonFrames];
  const size_t nf = ReadFrames(py, reader, ts, f, frames, &f, missed);
  if (cut != nullptr) *cut = f != 0 && nf == kMaxPythonFrames;  // frames remained past the limit

  // The innermost frame may be one being pushed or popped (a code object just freed, fields not
  // written yet): its objects are read through SafeReader. Once a frame checks out, its callers'
  // frames are calls in progress, which hold their code objects (and those their names and line
  // tables): read directly. A frame that does not check out is missed, and the walk goes on with
  // safe reads until one does. 3.10's frames are heap objects: all read safely.
  const bool frame_objects = l.chain == PyFrameChain::kFrameObjects;
  size_t n = 0;
  char name[kNameBytes + 1];
  bool trusted = false;
  for (size_t i = 0; i < nf; ++i) {
    const Frame& fr = frames[i];
    // A C-stack shim frame (3.12+: its code field is no user code; 3.13: None).
    if (fr.owner >= l.owner_shim) continue;
    const Mem mem{reader, !trusted || frame_objects};
    Code h;
    if (!ReadCode(l, mem, fr.code, &h) || h.type != py.code_type || h.size <= 0) {
      ++*missed;
      trusted = false;
      continue;
    }
    const intptr_t addr = fr.addr;  // bytes; -2: not started
    if (addr < -2 || addr >= h.size * 2) {
      ++*missed;
      trusted = false;
      continue;
    }
    trusted = true;
    // Not started yet (_PyFrame_IsIncomplete in pycore_frame.h).
    if (fr.owner != l.owner_generator && addr < h.firsttraceable * 2) continue;

    // The identity check (see the header): co_version, else the content read again.
    bool lines_cached = true;
    const uint64_t check = l.code_version != 0 && h.version != 0 ? kSerialCheck | h.version
                                                                 : ContentCheck(py, mem, h, name, &lines_cached);
    Names names;
    uint32_t gen = 0;
    Entry* e = check != 0 ? Lookup(fr.code, check, epoch, &names, &gen) : nullptr;
    if (e == nullptr) {
      name_misses_.fetch_add(1, std::memory_order_relaxed);
      const char* text = nullptr;
      long k = ReadStr(py, mem, h.qualname, name, &text);
      names.function = k >= 0 ? intern(ctx, text, static_cast<uint32_t>(k)) : 0;
      k = ReadStr(py, mem, h.filename, name, &text);
      names.file = k >= 0 ? intern(ctx, text, static_cast<uint32_t>(k)) : 0;
      names.own = k >= 0 && IsOwnPythonFile(text, static_cast<size_t>(k));
      if (names.function == 0 || names.file == 0) {
        ++*missed;
        continue;
      }
      if (check != 0) {
        Store(fr.code, check, epoch, names);
        e = Lookup(fr.code, check, epoch, &names, &gen);
      }
    }
    if (names.own) continue;

    int line = h.firstlineno;
    if (fr.line != 0) {
      line = fr.line;  // 3.10, a traced frame: PyFrame_GetLineNumber's f_lineno
    } else if (addr >= 0) {
      const uint64_t tag = uint64_t{gen & 0xFFFF} << 48 | static_cast<uint64_t>(addr) << 24;
      std::atomic<uint64_t>* slot =
          e != nullptr && lines_cached && addr < (1 << 24) ? &e->lines[(addr >> 1) % kLines] : nullptr;
      const uint64_t seen = slot != nullptr ? slot->load(std::memory_order_relaxed) : 0;
      if (slot != nullptr && (seen & ~uint64_t{0xFFFFFF}) == tag && (seen & 0xFFFFFF) != 0) {
        line = static_cast<int>(seen & 0xFFFFFF) - 1;
      } else {
        line_misses_.fetch_add(1, std::memory_order_relaxed);
        LineBytes bytes(mem, h.linetable);
        line = frame_objects ? PyLineForAddress310(bytes, bytes.size(), h.firstlineno, static_cast<int>(addr))
                             : PyLineForAddress(bytes, bytes.size(), h.firstlineno, static_cast<int>(addr));
        if (slot != nullptr && line >= -1 && line < (1 << 24) - 1) {
          slot->store(tag | static_cast<uint64_t>(line + 1), std::memory_order_relaxed);
        }
      }
    }
    if (n + 3 > max_values) {
      ++*missed;
      continue;
    }
    out[n++] = uint64_t{names.function} * 2 + 1;
    out[n++] = names.file;
    out[n++] = line > 0 ? static_cast<uint64_t>(line) : 0;
  }
  return n;
}

}  // namespace trainprof::inject::stacks
