/* Stand-in for libtrainprof_inject.so in the launcher's shell tests: loads, does nothing. */
int trainprof_launcher_fake_inject;
