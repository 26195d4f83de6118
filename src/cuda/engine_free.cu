/*
 * engine_free.cu - teardown of the CUDA engine (cuda_destroy): every GPU's
 * streams, events and buffers, then the host layout (the pair layout freed
 * on a detached thread).
 */
#include "engine.cuh"

namespace swgpu_cuda {

/* free() of a large buffer returns its pages to the system (about 10 ms
 * for the 207 MB pair layout of a Swiss-Prot-size database), which the
 * search would wait for between its scan and its output: a detached
 * thread does it (inline when no thread can be started) */
static void *free_thread(void *p)
{
    free(p);
    return NULL;
}

static void free_later(void *p)
{
    pthread_t th;
    if (!p)
        return;
    if (pthread_create(&th, NULL, free_thread, p) == 0)
        pthread_detach(th);
    else
        free(p);
}

/* GPU d's streams, events and buffers (the device idle first) */
static void dev_free(gpu_t *d)
{
    if (cudaSetDevice(d->id) != cudaSuccess)
        return;
    cudaDeviceSynchronize();
    for (int b = 0; b < NBUF; b++) {
        cudaFree(d->buf[b].res);
        cudaFree(d->buf[b].woff);
        cudaFree(d->buf[b].len);
        cudaFree(d->buf[b].pres);
        cudaFree(d->buf[b].poff);
        cudaFree(d->buf[b].scores);
        cudaFreeHost(d->buf[b].h_scores);
        if (d->ev_copied[b]) cudaEventDestroy(d->ev_copied[b]);
        if (d->ev_long[b]) cudaEventDestroy(d->ev_long[b]);
        if (d->ev_scored[b]) cudaEventDestroy(d->ev_scored[b]);
        if (d->ev_free[b]) cudaEventDestroy(d->ev_free[b]);
    }
    for (int k = 0; k < NMB; k++) {
        mslot_t *m = &d->ms[k];
        cudaFree(m->d_q);
        cudaFreeHost(m->h_q);
        cudaFree(m->d_prof);
        cudaFree(m->d_profl);
        cudaFree(m->d_mq);
        cudaFreeHost(m->h_mq);
        cudaFree(m->d_sc);
        cudaFreeHost(m->h_sc);
        cudaFree(m->scr);
        cudaFree(m->scrl);
        cudaFree(m->d_qpt);
        cudaFreeHost(m->h_qpt);
        cudaFree(m->d_qprof);
        cudaFree(m->d_ctr);
        if (m->st) cudaStreamDestroy(m->st);
        if (m->stl) cudaStreamDestroy(m->stl);
        if (m->ev_long) cudaEventDestroy(m->ev_long);
        if (m->ev_done) cudaEventDestroy(m->ev_done);
        if (m->ev_ovf) cudaEventDestroy(m->ev_ovf);
        cudaFree(m->d_ovf);
        cudaFreeHost(m->h_ovf);
        if (m->ev_tq) cudaEventDestroy(m->ev_tq);
        if (m->ev_tk) cudaEventDestroy(m->ev_tk);
        if (m->ev_tk1) cudaEventDestroy(m->ev_tk1);
        if (m->ev_tdl) cudaEventDestroy(m->ev_tdl);
    }
    if (d->sto) cudaStreamDestroy(d->sto);
    if (d->ev_t0) cudaEventDestroy(d->ev_t0);
    if (d->ev_k0) cudaEventDestroy(d->ev_k0);
    if (d->ev_k1) cudaEventDestroy(d->ev_k1);
    cudaFree(d->d_q);
    cudaFreeHost(d->h_q);
    cudaFree(d->d_mat);
    cudaFree(d->d_tp_main);
    cudaFree(d->d_tp_long);
    cudaFree(d->d_tp_intra);
    cudaFree(d->d_prof);
    cudaFree(d->d_idx);
    cudaFreeHost(d->h_idx);
    retire_free(d);
    cudaFree(d->d_ctr);
    cudaFree(d->scr_main);
    cudaFree(d->scr_b);
    if (d->st2) cudaStreamDestroy(d->st2);
    if (d->ev_part) cudaEventDestroy(d->ev_part);
    if (d->ev_b) cudaEventDestroy(d->ev_b);
    cudaFree(d->scr_long);
    cudaFree(d->scr_intra);
    if (d->st) cudaStreamDestroy(d->st);
    if (d->stl) cudaStreamDestroy(d->stl);
    if (d->cst) cudaStreamDestroy(d->cst);
}

void cuda_destroy(void *state)
{
    cuda_state_t *S = (cuda_state_t *)state;
    if (!S)
        return;
    for (int i = 0; S->dev && i < S->ndev; i++)
        dev_free(&S->dev[i]);
    cudaGetLastError();
    free(S->dev);
    if (S->h_res_pinned)
        cudaFreeHost(S->h_res);
    else
        free(S->h_res);
    free(S->h_woff);
    free(S->h_len);
    if (S->layout_running)
        pthread_join(S->layout_th, NULL);
    if (S->h_pres_pinned)
        cudaHostUnregister(S->h_pres);
    free_later(S->h_pres);
    free(S->h_gpoff);
    free(S->h_poff);
    free(S->chunks);
    cudaFreeHost(S->h_prof);
    cudaGetLastError();
    pthread_mutex_destroy(&S->lock);
    free(S);
}

} /* namespace swgpu_cuda */
