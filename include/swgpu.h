/*
 * swgpu.h - the one public header of libswgpu: exact Smith-Waterman local
 * alignment and database search on CPUs and NVIDIA GPUs.
 *
 * Conventions
 *  - Every exported symbol is prefixed swgpu_ / SWGPU_.
 *  - Functions return 0 (SWGPU_OK) or a negative swgpu_status_t.  On failure
 *    swgpu_last_error() gives a one-line message naming the file, record and
 *    problem (thread-local; valid until the next failing call in the thread).
 *  - The library never prints and never exits; diagnostics go to the logger
 *    installed with swgpu_set_logger() (none by default).
 *  - Objects are created by *_create / *_read / *_open and released by the
 *    matching *_destroy, which accepts NULL.
 *  - Gap convention: a gap of length k costs  open + k * extend  (BLAST,
 *    SWIPE, ssearch36).  Both values are given as non-negative penalties.
 *  - Coordinates in structs are 0-based, half-open: [beg, end).
 *  - Thread safety.  Every function may be called from several threads at
 *    once, with these rules:
 *      * a matrix, a sequence set, a database and an output format are
 *        read-only once made, and may be shared by any number of threads
 *        (searches, alignments, writes of the same database); only the
 *        calls that change them (swgpu_seqset_add, swgpu_outfmt_set_dbname,
 *        and *_destroy) need the object to themselves;
 *      * what a call fills in (swgpu_aln_t, swgpu_search_result_t,
 *        swgpu_long_stats_t, an output FILE) belongs to one call at a time;
 *      * swgpu_last_error() is per thread;
 *      * swgpu_set_logger() is set once, before other threads call in, and
 *        the logger it installs is called from any thread, the library's
 *        own worker threads included, and concurrently.
 *    Concurrent searches on a GPU each hold their own copy of the database
 *    in GPU memory (one that no longer fits is streamed).
 *    tests/test_concurrent.c checks that searches (every backend) and
 *    alignments run from several threads on shared objects give exactly
 *    the single-threaded results.
 */
#ifndef SWGPU_H
#define SWGPU_H

/* the library's version (pyproject.toml's must be the same: python/tests/test_wheel.py) */
#define SWGPU_VERSION "0.1.0"

/* The API in three parts (each with its own header under swgpu/) */
#include "swgpu/core.h"
#include "swgpu/search.h"
#include "swgpu/long.h"

#endif /* SWGPU_H */
