/*
 * align.c - swgpu-mpi align: swgpu_align_long() with its passes split
 * across the ranks by target columns (the library's long_split.c does the
 * splitting; this file is its MPI transport).
 *
 * Every rank aligns the same pair with the same options and its share of
 * each pass: the score and reverse passes and the traceback's forward
 * passes are cut into column slices, one per rank, whose boundary columns
 * go from rank to rank with MPI_Send/MPI_Recv, strip by strip, so the
 * ranks work as a pipeline (on the CPU, or on each rank's GPU when every
 * rank has one); the traceback's many small pieces are dealt
 * out whole; outputs every rank needs go round with broadcasts.  Rank 0
 * writes the result.
 */
#include "mpi_cli.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

typedef struct {
    MPI_Comm comm;   /* a communicator of its own: the library's messages apart */
    int fail_recv;   /* SWGPU_MPI_FAIL=RANK:align: this rank's receives fail */
} transport_t;

static int t_send(void *user, int to, int tag, const void *buf, size_t len)
{
    transport_t *t = user;
    if (len > INT_MAX)
        return SWGPU_ERANGE;
    return MPI_Send(buf, (int)len, MPI_BYTE, to, tag, t->comm) == MPI_SUCCESS ? 0 : SWGPU_EIO;
}

static int t_recv(void *user, int from, int tag, void *buf, size_t len)
{
    transport_t *t = user;
    if (len > INT_MAX)
        return SWGPU_ERANGE;
    int rc = MPI_Recv(buf, (int)len, MPI_BYTE, from, tag, t->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return SWGPU_EIO;
    /* an injected failure still takes the message, so that no sender waits */
    return t->fail_recv ? SWGPU_EIO : 0;
}

/* every rank's bytes to every rank: one broadcast per rank, 1 GiB at most each */
static int t_allgather(void *user, void *buf, const size_t *len)
{
    transport_t *t = user;
    int size;
    size_t off = 0;
    MPI_Comm_size(t->comm, &size);
    for (int p = 0; p < size; p++) {
        for (size_t done = 0; done < len[p];) {
            size_t n = len[p] - done < ((size_t)1 << 30) ? len[p] - done : (size_t)1 << 30;
            if (MPI_Bcast((char *)buf + off + done, (int)n, MPI_BYTE, p, t->comm) != MPI_SUCCESS)
                return SWGPU_EIO;
            done += n;
        }
        off += len[p];
    }
    return 0;
}

int mpi_align_long(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                   const swgpu_matrix_t *m, const swgpu_long_opts_t *o, swgpu_aln_t *out,
                   swgpu_long_stats_t *st)
{
    static transport_t t;
    static int have_comm;
    swgpu_comm_t comm;
    swgpu_long_opts_t so = *o;
    int rc;

    if (mpi_agree(0) < 0)
        return mpi_peer_failed();
    if (mpi_g.size == 1)
        return swgpu_align_long(a, alen, b, blen, m, o, out, st);
    if (!have_comm) {
        MPI_Comm_dup(MPI_COMM_WORLD, &t.comm);
        have_comm = 1;
    }
    t.fail_recv = mpi_inject("align");
    /* the passes call send and receive from their worker threads (the CUDA
     * engine from two relay threads at once); without MPI_THREAD_MULTIPLE
     * they run on the CPU, on the calling thread alone */
    if (mpi_g.thread_level < MPI_THREAD_MULTIPLE) {
        if (so.backend == SWGPU_BACKEND_CUDA) {
            cli_error("align: --backend cuda across ranks needs an MPI library that allows calls from "
                      "several threads (MPI_THREAD_MULTIPLE); use --backend cpu");
            return SWGPU_EINVAL;
        }
        if (so.threads != 1 || so.backend == SWGPU_BACKEND_AUTO) {
            if (mpi_g.rank == 0)
                fprintf(stderr, "[swgpu %.2fs] warning: this MPI library does not allow calls from "
                                "several threads: 1 CPU thread a rank\n", cli_elapsed());
            so.threads = 1;
            so.backend = SWGPU_BACKEND_CPU;
        }
    }
    comm = (swgpu_comm_t){mpi_g.rank, mpi_g.size, &t, t_send, t_recv, t_allgather};
    so.comm = &comm;
    rc = swgpu_align_long(a, alen, b, blen, m, &so, out, st);
    if (rc == SWGPU_EPART)
        return mpi_peer_failed();
    return rc;
}
