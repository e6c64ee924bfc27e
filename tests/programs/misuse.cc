// NVTX used wrongly, in every way the report counts, by a program whose output must not change
// under trainprof. Usage: tp_misuse. Prints "misuse done" and exits 5.
//
//   pops without a push            3 nvtxRangePop() on an empty stack
//   ends of unknown ids            nvtxRangeEnd(12345), nvtxRangeEnd(0)
//   ranges never closed            2 x nvtxRangePushA("never_closed"), nvtxRangeStartA("never_ended")
//   NULL names                     nvtxRangePushA/MarkA/RangeStartA/RangePushW/MarkW(NULL),
//                                  nvtxRangePushEx(NULL)  (6; each push/start is closed again)
//   invalid UTF-8 / control chars  "bad\xff\xfe name", "cut \xc3", "ctrl\x01\x1b[31m\n",
//                                  wide: a lone surrogate, a code point above U+10FFFF
//   names of 1 MiB                 ASCII: a push/pop and a mark; wide: a push/pop and a mark (4 cut)
// The NVTX return values are not printed: they differ with and without a tool attached.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <string>

int main() {
  for (int i = 0; i < 3; ++i) nvtxRangePop();
  nvtxRangeEnd(12345);
  nvtxRangeEnd(0);

  nvtxRangePushA(nullptr);
  nvtxRangePop();
  nvtxMarkA(nullptr);
  nvtxRangeEnd(nvtxRangeStartA(nullptr));
  nvtxRangePushW(nullptr);
  nvtxRangePop();
  nvtxMarkW(nullptr);
  nvtxRangePushEx(nullptr);
  nvtxRangePop();

  const char* bad[] = {"bad\xff\xfe name", "cut \xc3", "ctrl\x01\x1b[31m\n"};
  for (const char* b : bad) {
    nvtxRangePushA(b);
    nvtxRangePop();
  }
  static_assert(sizeof(wchar_t) == 4, "wide names are UTF-32 here");
  const wchar_t surrogate[] = {L'w', L's', static_cast<wchar_t>(0xD800), 0};
  const wchar_t too_big[] = {L'w', L'b', static_cast<wchar_t>(0x110000), 0};
  nvtxRangePushW(surrogate);
  nvtxRangePop();
  nvtxMarkW(too_big);

  std::string big(1 << 20, 'a');
  nvtxRangePushA(big.c_str());
  nvtxRangePop();
  nvtxMarkA(big.c_str());
  std::wstring wide(1 << 20, L'w');
  nvtxRangePushW(wide.c_str());
  nvtxRangePop();
  nvtxMarkW(wide.c_str());

  nvtxRangePushA("never_closed");
  nvtxRangePushA("never_closed");
  nvtxRangeStartA("never_ended");
  printf("misuse done\n");
  return 5;
}
