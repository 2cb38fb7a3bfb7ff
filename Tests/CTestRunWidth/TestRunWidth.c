// How many tests swift-testing runs at once in Courier's test bundle.
//
// swift-testing starts every test at the same moment (390 of them here), all on the cooperative pool of one
// thread per core. On 2 cores that queues seconds of other tests' work in front of every wake-up, so checks whose
// point is a latency (a cancel within 100 ms, a read-idle timeout of 300 ms) fail for a reason that is not
// Courier's. Capped at four tests per core, plain `swift test` runs in parallel and passes: on 2 cores, 92 s,
// against 84 s uncapped with 13 such failures and 240 s one test at a time (widths 4, 6 and 8 all passed, in
// 104 to 97 s; the cap keeps the machine busy and only stops the queue from growing).
//
// swift-testing reads the cap from SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH when it starts; a constructor
// runs before main, so the bundle sets it for itself. A value given in the environment wins.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void courierSetsTheTestRunWidth(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char width[32];
    snprintf(width, sizeof width, "%ld", 4 * (cores > 0 ? cores : 1));
    setenv("SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH", width, 0);
}
