#ifndef C_COURIER_SYSTEM_H
#define C_COURIER_SYSTEM_H

/// Starts writing a file's dirty pages to the disk without waiting for them: Linux's `sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE` over the whole file, which Swift's Glibc module does not export (it needs
/// `_GNU_SOURCE`). Returns 0, or -1 with `errno` set; elsewhere it does nothing and returns 0.
int courier_start_writeback(int descriptor);

/// Fills `count` bytes at `buffer` from the kernel's random source (`getrandom`, which Swift's Glibc module does
/// not export), in as few calls as it takes. Returns 0, or -1 with `errno` set; elsewhere it returns -1.
int courier_random_bytes(void *buffer, unsigned long count);

/// The connection slot this thread published last (see Courier's `ConnectionSlot`): a retained Swift object, or
/// NULL. Each thread has its own, so a slot is only ever read on the thread of the connection that published it.
extern _Thread_local void *courier_connection_slot_value;

/// The connection slot this thread published last, or NULL.
static inline void *courier_connection_slot(void) { return courier_connection_slot_value; }

/// Makes `slot` this thread's connection slot; returns the one it replaces, for the caller to release.
static inline void *courier_set_connection_slot(void *slot) {
    void *previous = courier_connection_slot_value;
    courier_connection_slot_value = slot;
    return previous;
}

#endif
