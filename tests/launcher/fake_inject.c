/* Stand-in for libtrainprof_inject.so in the launcher's shell tests: loads, does nothing.
   A function, not a global variable: the environment case preloads two copies of this file, and
   ASan reports a global defined in two loaded libraries as an ODR violation. */
void trainprof_launcher_fake_inject(void) {}
