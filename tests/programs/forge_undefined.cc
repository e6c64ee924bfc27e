// Writes a forged trace file: BYTES of push/pop records whose name ids no STRING record defines,
// every push a new id (tests/e2e/test_memory.py: what such a file may cost `trainprof report`).
//
//   tp_forge_undefined DIR BYTES   writes DIR/pid-4242.trace, prints its size
#include <cstdio>
#include <cstdlib>
#include <string>

#include "trace_builder.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tp_forge_undefined DIR BYTES\n");
    return 2;
  }
  const std::string dir = argv[1];
  const unsigned long long bytes = std::strtoull(argv[2], nullptr, 10);
  namespace fmt = trainprof::format;
  trainprof::test::TraceBuilder b(4242);
  b.HeaderEnd(fmt::EndKind::kExit, 0, 0);
  const int t = b.Thread(4242);
  uint64_t now = 1'000'000'000 + 1'000;
  // A push is ~6 bytes (tag, dt, domain, 3-byte id, category), a pop ~3: 9 bytes a pair.
  const unsigned long long pairs = bytes / 9;
  for (unsigned long long i = 0; i < pairs; ++i) {
    b.RawFields(t, static_cast<uint8_t>(fmt::RecordTag::kRangePush), {1, 0, 1'000'000 + i, 0});
    b.RawFields(t, static_cast<uint8_t>(fmt::RecordTag::kRangePop), {1, 0});
    now += 2;
  }
  b.HeaderEnd(fmt::EndKind::kExit, 0, now);
  const std::string path = b.WriteTo(dir);
  std::printf("%s\n", path.c_str());
  return 0;
}
