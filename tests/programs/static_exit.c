/* A statically linked program: the dynamic loader never runs, so LD_PRELOAD (and trainprof) does
   not load into it. Exits 7. Built with -static where the C library's static archive exists. */
#include <unistd.h>

int main(void) {
  static const char msg[] = "static child\n";
  write(1, msg, sizeof(msg) - 1);
  return 7;
}
