/*
 * gpu.h - the CUDA engine's internals, shared by its files (built only with
 * SWGPU_HAVE_CUDA; the engine's interface is long.h's swgpu__lgpu_*):
 *   gpu.c         devices, engine setup and teardown, a batch's run;
 *   gpu_plan.c    a batch's split over the partitions (partition.c's rule),
 *                 buffer layout and sizes;
 *   gpu_launch.c  a partition's launch, progress polls, completion;
 *   gpu_rows.c    saved rows: kept on the device, wide-score bases;
 *   gpu_ck.c      a one-region pass with in-pass checkpoints;
 *   gpu_relay.c   a part of a pass split across processes: boundary
 *                 columns between the kernel and the transport.
 * The kernels are in gpu_kernels.cu (gpu_kernels.cuh).
 */
#ifndef SWGPU_LONG_GPU_H
#define SWGPU_LONG_GPU_H

#include "long/gpu_kernels.cuh"
#include "long/long.h"

/* A CUDA call in a function with `int rc` and a `fail:` label: on an error,
 * rc = SWGPU_EDEVICE naming the call, and goto fail. */
#define CU(call)                                                                         \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            (void)cudaGetLastError(); /* clear it, so later checks do not see it again */ \
            rc = swgpu__fail(SWGPU_EDEVICE, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
                             cudaGetErrorString(e_));                                    \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

#define AUTO_COLS 65536  /* automatic slices: at least this many columns each */
#define SPREAD_CELLS ((uint64_t)1 << 36) /* automatic: smaller batches stay on one device */
#define SPREAD_REGION_CELLS ((uint64_t)100000000000000) /* the same for one region (1e14 cells) */
#define NCTR 8           /* part_t.dctr */
#define KEPT_INFO 5      /* part_t.kept_info entries a region */

/* Layout of a batch in a partition's scratch buffer (offsets in bytes). */
typedef struct {
    uint64_t ring, saved, rbase, sbase, progress, zrun, best, end;
    int64_t strips;
} layout_t;

/* Where a partition's region stands in its region's split: slice pp of a
 * (a = 1: a whole region), the boundary columns of the region's a - 1 edges
 * from edge eb on (edge e between slices e - eb and e - eb + 1). */
typedef struct {
    int32_t pp, a;
    size_t eb;
} slot_t;

/* One partition: a device, its copy of the sequences, its buffers, and the
 * batch it runs. */
typedef struct {
    int dev;
    int sms, threads, bps[6];    /* multiprocessors, threads per block, blocks per SM
                                    (of the kernels: whole regions with 16 rows per lane,
                                    slices, whole regions with 8 and with 4, wide scores
                                    whole and in slices: kernel_of()) */
    int dna;                     /* 1: the DNA (byte-select) kernel */
    uint8_t *dseq[4];
    int32_t *dmat;
    cudaStream_t st, st2;        /* the pass; progress reads and best hand-over */
    swgpu__lkreg_t *dregs, *hregs;
    size_t regs_cap;
    char *dbuf;                  /* ring | saved | progress | best, grown as needed */
    uint64_t buf_cap;
    unsigned long long *dctr;    /* [0] ticket, [1] cells done, [2] cells pruned, [3] best
                                    (int32; wide scores: int64), [4] the others' best (int32),
                                    [5] abort (int32), [6] stop (int32), [7] stop_at (see
                                    swgpu__lkargs_t) */
    swgpu__lkbest_t *hbest;
    size_t hbest_cap;
    uint64_t fixed, peak;
    /* the batch in flight: its regions (the part's own copies), layout */
    swgpu__lreg_t *regs;
    slot_t *slot;                /* per region: its place in the split */
    size_t n, cap;
    layout_t L;
    int running;
    unsigned long long done, pruned; /* counters read at the last report */
    double t_end;                /* when the poll first saw the launch ended (0: not yet) */
    int64_t best;
    char *edge;                  /* device: the boundary columns this partition receives */
    uint64_t edge_cap;
    int32_t *kept;               /* saved rows kept on the device (keeps()), region after region */
    uint64_t kept_cap;
    size_t kept_n;               /* regions kept: their index in the batch, where their rows */
    int64_t *kept_info;          /* begin (int32 units), width w (rows of w + 1 pairs {H, F}),
                                    rows, index and (wide scores) the rows' bases' begin
                                    (int64 units), KEPT_INFO a region; kept_n 0: none */
    size_t kept_info_cap;
    /* in-pass checkpoints (swgpu__lgpu_run_ck: one region on this partition) */
    int ck;                      /* the launch may be stopped (dctr[6], [7]) */
    const swgpu__lck_state_t *resume; /* the launch starts from this state (NULL: strip 0) */
    int64_t rows0;               /* saved rows already on the host (not copied back) */
} part_t;

struct swgpu__lgpu {
    swgpu__lscore_t sc;
    int P;                       /* partitions: one per device */
    int want;                    /* slices of a split region (0: automatic) */
    int A;                       /* partitions the batch in flight uses (the first A) */
    int single;                  /* the batch in flight: whole regions on the first partition
                                    (spread < 0: checkpointed passes) */
    part_t *part;
    /* Boundary columns of split regions: in the receiving partition's device
     * memory, written by its left neighbour directly (same device) or through
     * peer access; in host memory that every device maps (host_edges) when a
     * pair of neighbouring devices has no peer access. */
    int host_edges, cross;       /* host_edges; neighbours on different devices */
    char *edge;                  /* host_edges: the host-mapped buffer */
    uint64_t edge_cap;
    int64_t *owner;              /* per region of the batch: the part (whole regions) */
    size_t owner_cap;
    size_t nedges;               /* boundary columns of the batch (split regions) */
    uint64_t peak;
    /* One part of a pass split across processes (gpu_relay.c): per region
     * of the batch in flight, its left boundary column filled from the
     * transport (ext_in[k]) and its right one read for it (ext_out[k]), in
     * host memory the device maps (NULL arrays: none); their buffer, kept
     * for the next batch; split_part: counted in swgpu__lg_sharers. */
    char **ext_in, **ext_out;
    char *ext_mem;
    uint64_t ext_cap;
    int split_part;
};

/* gpu.c */
/** A pinned host buffer every device maps (boundary columns): *mem grown
 *  to `bytes` (its old contents dropped), *cap its size. */
int swgpu__lg_pinned(char **mem, uint64_t *cap, uint64_t bytes);

/* gpu_plan.c */
/** Rows per lane of a batch's strips (16, 8 or 4). */
int swgpu__lg_rows(const swgpu__lreg_t *regs, size_t n, int wide);
/** The index in part_t.bps of the kernel for a batch. */
int swgpu__lg_kernel(int slice, int rows, int wide);
/** Bytes of the saved rows of regions. */
uint64_t swgpu__lg_saved_bytes(const swgpu__lreg_t *regs, size_t n);
/** Bytes a kept batch holds: its saved rows, then (wide scores) their bases. */
uint64_t swgpu__lg_kept_bytes(const swgpu__lreg_t *regs, size_t n, int wide);
/** 1 when a partition's batch keeps its saved rows on the device. */
int swgpu__lg_keeps(const swgpu__lreg_t *regs, size_t n, int wide);
/** A batch's layout in a partition's scratch buffer. */
void swgpu__lg_layout(const swgpu__lreg_t *regs, size_t n, int wide, layout_t *L);
/** Bytes of a boundary column of `strips` strips. */
uint64_t swgpu__lg_edge_bytes(int64_t strips);
/** 1 when the batch goes out as whole regions (else column slices). */
int swgpu__lg_whole(const swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n);
/** The partition that computes slice pp of a split region. */
int swgpu__lg_slice_part(const swgpu__lgpu_t *g, int64_t pp);
/** Every partition's share of a batch (spread as in swgpu__lgpu_run). */
int swgpu__lg_plan(swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n, int spread);

/* gpu_launch.c */
/** A planned partition's buffers for its batch, allocated (no launch). */
int swgpu__lg_buffers(const swgpu__lgpu_t *g, part_t *p);
/** Launch a partition's batch; boundary columns of slices at edge_off[edge]
 *  in the receiving partition's buffer (NULL: whole regions). */
int swgpu__lg_launch(swgpu__lgpu_t *g, part_t *p, const uint64_t *edge_off);
/** Wait for a partition's batch; its regions' bests and saved rows. */
int swgpu__lg_finish(const swgpu__lgpu_t *g, part_t *p);
/** A partition failed: the slices waiting for a boundary column give up. */
void swgpu__lg_abort_all(swgpu__lgpu_t *g);
/** Progress of the running partitions, their bests handed to the others;
 *  0 when every partition is done (*rc: a device that stopped answering). */
int swgpu__lg_poll(swgpu__lgpu_t *g, const swgpu__lprog_t *prog, int *rc);

/* gpu_relay.c */
/** Engines of this process that run split parts on device dev (at least 1). */
int swgpu__lg_sharers(int dev);
/** The engine no longer counts as a split part (its destruction). */
void swgpu__lg_split_part_end(swgpu__lgpu_t *g);

/* gpu_rows.c */
/** Free a partition's kept rows. */
void swgpu__lg_drop(part_t *p);
/** Wide scores: a row of w + 1 pairs relative to the kernel's bases (gb)
 *  moved to the host's format (hb). */
void swgpu__lg_wide_row(int32_t *v, int64_t w, const int64_t *gb, int64_t *hb);
/** Wide scores: saved rows rows0 .. rows1 - 1 of region r, copied to the
 *  host in the host's format. */
int swgpu__lg_wide_rows(part_t *p, swgpu__lreg_t *r, const swgpu__lkreg_t *d, int64_t rows0, int64_t rows1);

#endif
