#ifndef C_COURIER_SYSTEM_H
#define C_COURIER_SYSTEM_H

/// Starts writing a file's dirty pages to the disk without waiting for them: Linux's `sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE` over the whole file, which Swift's Glibc module does not export (it needs
/// `_GNU_SOURCE`). Returns 0, or -1 with `errno` set; elsewhere it does nothing and returns 0.
int courier_start_writeback(int descriptor);

#endif
