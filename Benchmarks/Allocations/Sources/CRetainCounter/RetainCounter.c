// Counts retains, releases and object allocations of the benchmark binary by defining the Swift runtime's entry
// points in the executable itself: everything linked into it (Courier, SwiftNIO, AsyncHTTPClient and the
// specialised generics) calls these, and each forwards to the runtime's own through dlsym(RTLD_NEXT).
//
// Why not ordo-one/benchmark's ARC metrics: on Linux with Swift 6.3 they go through the runtime's private hook
// pointers, whose retain path crashes when Objective-C interop is off (swiftlang/swift#88924, fixed in 6.4), and
// the package's workaround, ordo-one/swift-runtime-interposer, is not available here. This is the same idea as
// that interposer, linked instead of preloaded. Calls made inside the runtime and Foundation's shared libraries
// are not counted, the same in every run, so the counts compare from run to run.
//
// Only on x86_64 Linux, where these entry points use the C calling convention; elsewhere nothing is counted.
#if defined(__linux__) && defined(__x86_64__)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#endif
#include <stdatomic.h>

#include "CRetainCounter.h"

static _Atomic int64_t retains;
static _Atomic int64_t releases;
static _Atomic int64_t objects;

courier_retain_counts courier_retain_counts_now(void) {
    courier_retain_counts counts = {
        atomic_load_explicit(&retains, memory_order_relaxed),
        atomic_load_explicit(&releases, memory_order_relaxed),
        atomic_load_explicit(&objects, memory_order_relaxed),
    };
    return counts;
}

#if defined(__linux__) && defined(__x86_64__)

bool courier_retain_counts_supported(void) { return true; }

// The runtime's function, looked up on first use: a shared library's initializer may retain before this
// executable's own initializers run. Two threads that race store the same pointer.
#define RUNTIME_FUNCTION(type, name)                                                                                 \
    static type runtime_##name(void) {                                                                               \
        static _Atomic(type) found;                                                                                  \
        type function = atomic_load_explicit(&found, memory_order_relaxed);                                          \
        if (function == NULL) {                                                                                      \
            function = (type)dlsym(RTLD_NEXT, #name);                                                                \
            atomic_store_explicit(&found, function, memory_order_relaxed);                                           \
        }                                                                                                            \
        return function;                                                                                             \
    }

typedef void *(*retain_function)(void *);
typedef void (*release_function)(void *);
typedef void *(*retain_n_function)(void *, uint32_t);
typedef void (*release_n_function)(void *, uint32_t);
typedef void *(*alloc_function)(const void *, size_t, size_t);

RUNTIME_FUNCTION(retain_function, swift_retain)
RUNTIME_FUNCTION(release_function, swift_release)
RUNTIME_FUNCTION(retain_n_function, swift_retain_n)
RUNTIME_FUNCTION(release_n_function, swift_release_n)
RUNTIME_FUNCTION(retain_function, swift_bridgeObjectRetain)
RUNTIME_FUNCTION(release_function, swift_bridgeObjectRelease)
RUNTIME_FUNCTION(retain_n_function, swift_bridgeObjectRetain_n)
RUNTIME_FUNCTION(release_n_function, swift_bridgeObjectRelease_n)
RUNTIME_FUNCTION(alloc_function, swift_allocObject)

static void count(_Atomic int64_t *counter, int64_t amount) {
    atomic_fetch_add_explicit(counter, amount, memory_order_relaxed);
}

void *swift_retain(void *object) {
    count(&retains, 1);
    return runtime_swift_retain()(object);
}

void swift_release(void *object) {
    count(&releases, 1);
    runtime_swift_release()(object);
}

void *swift_retain_n(void *object, uint32_t n) {
    count(&retains, n);
    return runtime_swift_retain_n()(object, n);
}

void swift_release_n(void *object, uint32_t n) {
    count(&releases, n);
    runtime_swift_release_n()(object, n);
}

void *swift_bridgeObjectRetain(void *object) {
    count(&retains, 1);
    return runtime_swift_bridgeObjectRetain()(object);
}

void swift_bridgeObjectRelease(void *object) {
    count(&releases, 1);
    runtime_swift_bridgeObjectRelease()(object);
}

void *swift_bridgeObjectRetain_n(void *object, uint32_t n) {
    count(&retains, n);
    return runtime_swift_bridgeObjectRetain_n()(object, n);
}

void swift_bridgeObjectRelease_n(void *object, uint32_t n) {
    count(&releases, n);
    runtime_swift_bridgeObjectRelease_n()(object, n);
}

void *swift_allocObject(const void *metadata, size_t size, size_t alignmentMask) {
    count(&objects, 1);
    return runtime_swift_allocObject()(metadata, size, alignmentMask);
}

#else

bool courier_retain_counts_supported(void) { return false; }

#endif
