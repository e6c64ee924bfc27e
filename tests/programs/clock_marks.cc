// The recording clock checked against clock_gettime, and across threads (tests/e2e/test_clock.py).
// Usage: tp_clock_marks MARKS HANDOFFS.
//
//   MARKS     marks named "clock <B>", B = CLOCK_MONOTONIC ns read just before the mark; after it
//             the program reads the clock again (A) and prints "mark <B> <A>": the mark's time in
//             the trace must lie in [B, A] (within the conversion's tolerance). 200 µs apart.
//   HANDOFFS  two threads take turns under a mutex and condition variable; each turn is a range
//             "turn <i>" started and ended on the thread whose turn it is, so turn i's end (one
//             thread) happens before turn i + 1's start (the other): never reversed in the trace.
#include <nvtx3/nvToolsExt.h>
#include <time.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace {

unsigned long long Mono() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<unsigned long long>(ts.tv_sec) * 1000000000ull + static_cast<unsigned long long>(ts.tv_nsec);
}

std::mutex mu;
std::condition_variable cv;
int turn = 0;

void Player(int me, int handoffs) {
  char name[32];
  for (int i = me; i < handoffs; i += 2) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return turn == i; });
    snprintf(name, sizeof name, "turn %d", i);
    nvtxRangeEnd(nvtxRangeStartA(name));
    turn = i + 1;
    cv.notify_all();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int marks = argc > 1 ? atoi(argv[1]) : 1000;
  const int handoffs = argc > 2 ? atoi(argv[2]) : 1000;
  nvtxMarkA("clock start");  // the library's first event: its start-up is not in the first mark
  char name[48];
  for (int i = 0; i < marks; ++i) {
    const unsigned long long before = Mono();
    snprintf(name, sizeof name, "clock %llu", before);
    nvtxMarkA(name);
    const unsigned long long after = Mono();
    printf("mark %llu %llu\n", before, after);
    const timespec pause{0, 200000};
    nanosleep(&pause, nullptr);
  }
  std::thread a(Player, 0, handoffs), b(Player, 1, handoffs);
  a.join();
  b.join();
  printf("clock_marks done\n");
  return 0;
}
