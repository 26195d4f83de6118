/*
 * fuzz.h - shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c): the
 * library reads files, so each input is written to one temporary file per
 * process and the harness opens that path.  The harnesses are built two
 * ways: with clang and -fsanitize=fuzzer (make fuzz) and, for the replay of
 * the saved corpus in make check, with any C compiler and replay.c's main.
 */
#ifndef SWGPU_FUZZ_H
#define SWGPU_FUZZ_H

#include "swgpu.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the input as a file; its path (the same file for every input): in
 * /dev/shm when there is one (memory: many times faster than a disk's
 * journal for a file rewritten at every input), else /tmp */
static char fuzz_path[64];

static inline void fuzz_file_remove(void)
{
    unlink(fuzz_path);
}

static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    char *path = fuzz_path;
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof fuzz_path, "%s/swgpu_fuzz_%ld", dir, (long)getpid());
        atexit(fuzz_file_remove); /* libFuzzer ends with exit() */
    }
    FILE *fp = fopen(path, "wb");
    if (!fp)
        abort(); /* the harness cannot work at all */
    if (size && fwrite(data, 1, size, fp) != size)
        abort();
    fclose(fp);
    return path;
}

#endif
