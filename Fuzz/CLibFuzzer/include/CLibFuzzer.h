#ifndef COURIER_CLIBFUZZER_H
#define COURIER_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver, for a binary that has its own `main` (SwiftPM gives every executable one). Only linked
/// into a build made with `-sanitize=fuzzer`; `courier-fuzz` calls it only in that build.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
