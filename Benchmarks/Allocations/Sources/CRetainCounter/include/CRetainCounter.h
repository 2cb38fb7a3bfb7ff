#ifndef C_RETAIN_COUNTER_H
#define C_RETAIN_COUNTER_H

#include <stdbool.h>
#include <stdint.h>

/// What the Swift runtime has done for the benchmark binary's own code since the process started.
typedef struct {
    int64_t retains;
    int64_t releases;
    int64_t objects;
} courier_retain_counts;

/// The counts so far, from every thread.
courier_retain_counts courier_retain_counts_now(void);

/// Whether this platform's runtime entry points are counted (x86_64 Linux, where they use the C convention).
bool courier_retain_counts_supported(void);

#endif
