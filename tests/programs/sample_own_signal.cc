// A program that uses the real-time signals itself, for `trainprof run --sample`
// (tests/e2e/test_sampling.py): it installs a handler on every signal SIGRTMIN..SIGRTMAX (one
// with signal(), the rest with sigaction), sends itself each one kPerSignal times while it spins
// (so the sampler's timer fires meanwhile), and checks that its handler saw exactly its own
// signals: the count per signal, never a timer's (SI_TIMER), and that sigaction() gives its own
// handler back. Exit status 0 and "own signals ok" when all holds, 1 with what differed.
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>

namespace {

constexpr int kPerSignal = 40;
volatile sig_atomic_t g_count[NSIG];
volatile sig_atomic_t g_timer_seen;
volatile sig_atomic_t g_plain_count;
volatile unsigned long g_sink;

void OnSignal(int sig, siginfo_t* info, void*) {
  if (info->si_code == SI_TIMER) g_timer_seen = g_timer_seen + 1;
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) g_count[sig] = g_count[sig] + 1;
}

void OnPlain(int) { g_plain_count = g_plain_count + 1; }

__attribute__((noinline)) void Spin(long n) {
  unsigned long x = g_sink;
  for (long i = 0; i < n; ++i) {
    x = x * 2862933555777941757ul + 1;
    asm volatile("" : "+r"(x));
  }
  g_sink = x;
}

}  // namespace

int main() {
  const int plain = SIGRTMIN;  // installed with signal()
  if (signal(plain, OnPlain) == SIG_ERR) {
    perror("signal");
    return 1;
  }
  for (int s = SIGRTMIN + 1; s <= SIGRTMAX; ++s) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = OnSignal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(s, &sa, nullptr) != 0) {
      perror("sigaction");
      return 1;
    }
  }
  for (int round = 0; round < kPerSignal; ++round) {
    for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) {
      union sigval v;
      v.sival_int = round;
      if (sigqueue(getpid(), s, v) != 0) {
        perror("sigqueue");
        return 1;
      }
    }
    Spin(3000000);  // ~5 ms of CPU time: the sampler's timer fires in between
  }
  int bad = 0;
  if (g_plain_count != kPerSignal) {
    printf("signal %d (signal()): %d of %d\n", plain, static_cast<int>(g_plain_count), kPerSignal);
    bad = 1;
  }
  for (int s = SIGRTMIN + 1; s <= SIGRTMAX; ++s) {
    if (g_count[s] != kPerSignal) {
      printf("signal %d: %d of %d\n", s, static_cast<int>(g_count[s]), kPerSignal);
      bad = 1;
    }
    struct sigaction now;
    if (sigaction(s, nullptr, &now) != 0 || (now.sa_flags & SA_SIGINFO) == 0 || now.sa_sigaction != OnSignal) {
      printf("signal %d: sigaction does not give the program's handler back\n", s);
      bad = 1;
    }
  }
  struct sigaction p;
  if (sigaction(plain, nullptr, &p) != 0 || p.sa_handler != OnPlain) {
    printf("signal %d: sigaction does not give signal()'s handler back\n", plain);
    bad = 1;
  }
  if (g_timer_seen != 0) {
    printf("the program's handler saw %d timer signals\n", static_cast<int>(g_timer_seen));
    bad = 1;
  }
  if (bad == 0) printf("own signals ok %lu\n", g_sink & 1);
  return bad;
}
