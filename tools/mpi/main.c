/*
 * main.c - main() of swgpu-mpi: MPI set-up, one GPU per rank, the failure
 * agreement, then the swgpu tool's own driver (cli_main) on every rank.
 *
 *   mpirun -np N swgpu-mpi search -q Q -d DB [options]    database split across ranks
 *   mpirun -np N swgpu-mpi align A B [options]            passes split by target columns
 *
 * Subcommands and options are swgpu's.  Rank 0 reads like every rank,
 * writes the outputs and prints (the others' standard output goes to
 * /dev/null, their warnings are off).  makedb runs on rank 0 alone.
 *
 * GPUs: a rank takes the GPU of its local rank (OMPI_COMM_WORLD_LOCAL_RANK)
 * modulo the node's GPUs, by setting CUDA_VISIBLE_DEVICES before anything
 * touches CUDA (a list already in CUDA_VISIBLE_DEVICES is dealt out the
 * same way); SWGPU_MPI_NO_BIND=1 leaves it alone.
 */
#define _POSIX_C_SOURCE 200809L
#include "mpi_cli.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

mpi_state_t mpi_g;

static pthread_mutex_t stash_lock = PTHREAD_MUTEX_INITIALIZER;

/* cli_error() on any thread: keep the first message */
static void stash_error(const char *msg)
{
    pthread_mutex_lock(&stash_lock);
    if (!mpi_g.have_msg) {
        snprintf(mpi_g.msg, sizeof mpi_g.msg, "%s", msg);
        mpi_g.have_msg = 1;
    }
    pthread_mutex_unlock(&stash_lock);
}

int mpi_agree(int failed)
{
    int v[2], r[2];
    if (mpi_g.known)
        return -1;
    v[0] = failed && !mpi_g.consequence ? mpi_g.rank : mpi_g.size; /* lowest origin */
    v[1] = failed ? -1 : 0;                                          /* any failure */
    MPI_Allreduce(v, r, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (r[1] == 0)
        return 0;
    mpi_g.known = 1;
    mpi_g.origin = r[0] < mpi_g.size ? r[0] : 0;
    return -1;
}

int mpi_peer_failed(void)
{
    if (!(mpi_g.have_msg && !mpi_g.consequence))
        mpi_g.consequence = 1;
    return SWGPU_EPART;
}

int mpi_inject(const char *phase)
{
    const char *e = getenv("SWGPU_MPI_FAIL");
    char buf[64];
    if (!e || !*e)
        return 0;
    snprintf(buf, sizeof buf, "%d:%s", mpi_g.rank, phase);
    if (strcmp(e, buf))
        return 0;
    cli_error("injected failure of rank %d at %s (SWGPU_MPI_FAIL)", mpi_g.rank, phase);
    return 1;
}

/* CUDA_VISIBLE_DEVICES: this rank's GPU among the node's */
static void bind_gpu(void)
{
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK"), *vis = getenv("CUDA_VISIBLE_DEVICES");
    char list[64][32], *copy, *tok, *save = NULL;
    int n = 0;
    if (!lr || (getenv("SWGPU_MPI_NO_BIND") && strcmp(getenv("SWGPU_MPI_NO_BIND"), "0")))
        return;
    if (vis && *vis) {
        if (!(copy = strdup(vis)))
            return;
        for (tok = strtok_r(copy, ",", &save); tok && n < 64; tok = strtok_r(NULL, ",", &save))
            snprintf(list[n++], sizeof list[0], "%s", tok);
        free(copy);
    } else {
        /* the driver's list of GPUs, else its device files /dev/nvidia0, 1, ... */
        DIR *d = opendir("/proc/driver/nvidia/gpus");
        struct dirent *de;
        if (d) {
            while ((de = readdir(d)) && n < 64)
                if (de->d_name[0] != '.') {
                    snprintf(list[n], sizeof list[0], "%d", n);
                    n++;
                }
            closedir(d);
        } else {
            char dev[32];
            for (; n < 64; n++) {
                snprintf(dev, sizeof dev, "/dev/nvidia%d", n);
                if (access(dev, F_OK) != 0)
                    break;
                snprintf(list[n], sizeof list[0], "%d", n);
            }
        }
    }
    if (n > 0)
        setenv("CUDA_VISIBLE_DEVICES", list[atoi(lr) % n], 1);
}

static const cli_dist_t dist = {
    0, 0, stash_error, mpi_db_open, mpi_search, mpi_align_long,
};

int main(int argc, char **argv)
{
    cli_dist_t d = dist;
    int status;

    bind_gpu();
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &mpi_g.thread_level) != MPI_SUCCESS) {
        fprintf(stderr, "swgpu: MPI_Init_thread failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_g.size);
    d.writer = mpi_g.rank == 0;
    cli_dist = &d;
    if (mpi_g.rank != 0 && !freopen("/dev/null", "w", stdout))
        cli_error("rank %d: cannot send standard output to /dev/null", mpi_g.rank);

    /* --threads 0 (the default): the node's cores shared by its ranks, rather
     * than every rank taking them all */
    {
        const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        if (ls && atoi(ls) > 1) {
            long cores = sysconf(_SC_NPROCESSORS_ONLN) / atoi(ls);
            d.threads = cores > 1 ? (int)cores : 1;
        }
    }

    if (argc >= 2 && !strcmp(argv[1], "makedb") && mpi_g.rank != 0)
        status = mpi_g.have_msg; /* makedb: rank 0 alone */
    else if (mpi_g.have_msg)
        status = 1;
    else
        status = cli_main(argc, argv);

    if (!mpi_g.known)
        mpi_agree(status != 0);
    if (mpi_g.known) {
        if (mpi_g.rank == mpi_g.origin) {
            const char *msg = mpi_g.have_msg ? mpi_g.msg : "failed (no message)";
            fflush(stdout);
            if (mpi_g.origin == 0)
                fprintf(stderr, "swgpu: %s\n", msg);
            else
                fprintf(stderr, "swgpu: rank %d of %d: %s\n", mpi_g.origin, mpi_g.size, msg);
        }
        status = 1;
    }
    fflush(stdout);
    fflush(stderr);
    MPI_Finalize();
    return status;
}
