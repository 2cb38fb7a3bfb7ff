#define _GNU_SOURCE
#include <fcntl.h>
#include "CCourierSystem.h"

_Thread_local void *courier_connection_slot_value = 0;

int courier_start_writeback(int descriptor) {
#ifdef __linux__
    return sync_file_range(descriptor, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
    (void)descriptor;
    return 0;
#endif
}
