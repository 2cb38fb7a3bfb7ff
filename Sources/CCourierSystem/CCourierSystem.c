#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#ifdef __linux__
#include <sys/random.h>
#endif
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

int courier_random_bytes(void *buffer, unsigned long count) {
#ifdef __linux__
    unsigned char *bytes = buffer;
    while (count > 0) {
        ssize_t got = getrandom(bytes, count, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        bytes += got;
        count -= (unsigned long)got;
    }
    return 0;
#else
    (void)buffer;
    (void)count;
    return -1;
#endif
}
