// first-entries ENTRIES OUT PROGRAM [ARGUMENT...]
//
// Runs PROGRAM with a breakpoint (int3) on the first byte of every code section listed in ENTRIES (one hexadecimal
// offset from the program's load address per line, as Scripts/hot-code reads them from lld's map) and writes to
// OUT the offsets of the sections the run entered, first entered first. Every thread is traced; a breakpoint is
// removed the first time any thread reaches it, so the run costs one stop per section it enters.
//
// It is Scripts/hot-code's tool and nothing else: a section must begin with an instruction (it does when each
// function has a section of its own, as Scripts/install compiles them).
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

enum { empty, armed, entered };
struct breakpoint { uint64_t offset; unsigned char original; unsigned char state; };

static struct breakpoint *table;
static const size_t capacity = 1u << 21;  // a power of two, at least twice as many sections as a binary has

static struct breakpoint *slot(uint64_t offset, int create) {
    size_t index = (size_t)((offset * 0x9E3779B97F4A7C15ull) >> 40);
    for (;;) {
        index &= capacity - 1;
        if (table[index].state != empty && table[index].offset == offset) return &table[index];
        if (table[index].state == empty) {
            if (!create) return NULL;
            table[index].offset = offset;
            return &table[index];
        }
        index++;
    }
}

static void fail(const char *what) { perror(what); exit(1); }

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: first-entries ENTRIES OUT PROGRAM [ARGUMENT...]\n");
        return 64;
    }
    table = calloc(capacity, sizeof *table);
    FILE *list = fopen(argv[1], "r");
    if (!table || !list) fail("first-entries: entries");
    size_t count = 0, limit = capacity / 2, entered_count = 0;
    uint64_t *offsets = malloc(limit * sizeof *offsets), *order = malloc(limit * sizeof *order);
    unsigned long long value;
    while (count < limit && fscanf(list, "%llx", &value) == 1) offsets[count++] = value;
    fclose(list);

    pid_t child = fork();
    if (child < 0) fail("first-entries: fork");
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        execvp(argv[3], argv + 3);
        _exit(127);
    }
    int status;
    waitpid(child, &status, 0);  // the SIGSTOP before exec
    ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL);
    ptrace(PTRACE_CONT, child, 0, 0);
    waitpid(child, &status, 0);  // the exec: the program is mapped, the loader has not run
    if (!WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_EXEC) {
        fprintf(stderr, "first-entries: %s did not start\n", argv[3]);
        return 1;
    }

    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", child);
    FILE *maps = fopen(path, "r");
    unsigned long long base = 0;
    if (!maps || fscanf(maps, "%llx-", &base) != 1) fail("first-entries: maps");  // the program's lowest mapping
    fclose(maps);
    snprintf(path, sizeof path, "/proc/%d/mem", child);
    int memory = open(path, O_RDWR);
    if (memory < 0) fail("first-entries: mem");
    const unsigned char trap = 0xCC;
    for (size_t i = 0; i < count; i++) {
        struct breakpoint *point = slot(offsets[i], 1);
        if (point->state != empty) continue;
        if (pread(memory, &point->original, 1, base + offsets[i]) != 1) fail("first-entries: read");
        if (pwrite(memory, &trap, 1, base + offsets[i]) != 1) fail("first-entries: write");
        point->state = armed;
    }

    ptrace(PTRACE_CONT, child, 0, 0);
    int exit_status = 1;
    for (;;) {
        pid_t thread = waitpid(-1, &status, __WALL);
        if (thread < 0) break;
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            if (thread == child) {
                exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                break;
            }
            continue;
        }
        if (!WIFSTOPPED(status)) continue;
        int signal = WSTOPSIG(status), deliver = 0;
        if (signal == SIGTRAP && (status >> 16) == 0) {
            struct user_regs_struct registers;
            ptrace(PTRACE_GETREGS, thread, 0, &registers);
            struct breakpoint *point = slot(registers.rip - 1 - base, 0);
            if (point) {  // ours: put the byte back (once) and run the instruction
                if (point->state == armed) {
                    if (pwrite(memory, &point->original, 1, registers.rip - 1) != 1) fail("first-entries: restore");
                    point->state = entered;
                    order[entered_count++] = point->offset;
                }
                registers.rip -= 1;
                ptrace(PTRACE_SETREGS, thread, 0, &registers);
            } else {
                deliver = signal;
            }
        } else if (!(signal == SIGTRAP || (status >> 16) != 0 || signal == SIGSTOP)) {
            deliver = signal;  // the program's own signal; ptrace events and a new thread's first stop are ours
        }
        ptrace(PTRACE_CONT, thread, 0, (void *)(long)deliver);
    }

    FILE *out = fopen(argv[2], "w");
    if (!out) fail("first-entries: out");
    for (size_t i = 0; i < entered_count; i++) fprintf(out, "%llx\n", (unsigned long long)order[i]);
    fclose(out);
    fprintf(stderr, "first-entries: %zu of %zu sections entered\n", entered_count, count);
    return exit_status;
}
