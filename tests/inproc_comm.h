/*
 * inproc_comm.h - an in-process swgpu_comm_t: the parts of a split
 * computation as threads of one process (one part_t each, joined by a
 * hub_t): messages through a mailbox, allgather through a barrier.  Used by
 * tests/test_long_split.c and bench/long_parts.c.  A hub starts with
 * hub_init(h, P) and ends with hub_free(h) (messages no part took freed);
 * fail_recv_part makes that part's receives fail (SWGPU_EIO), fail_send_part
 * its sends, and their receives on the other side (a transport must not
 * leave a receiver waiting for a message whose send failed); bad_lens
 * counts allgathers whose length arrays differed between parts.
 *
 * Sends are buffered (they return at once) unless h->rendezvous is set:
 * then a send returns only once the message has been received, as MPI's
 * large messages (and MPI_Ssend) do, so that a protocol that would
 * deadlock under mpirun deadlocks here too; a send not received within
 * RV_WAIT_S seconds gives up (counted in send_timeouts) and breaks the hub:
 * from then on every send and receive fails at once (SWGPU_EIO), so that
 * the parts end, with errors, instead of hanging the test.
 */
#ifndef SWGPU_TESTS_INPROC_COMM_H
#define SWGPU_TESTS_INPROC_COMM_H

#include "swgpu.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAXP = 8, RV_WAIT_S = 30 };

typedef struct msg {
    struct msg *next;
    int from, to, tag;
    int taken;  /* rendezvous: received (the sender frees it) */
    int failed; /* a failed send: its receive fails too */
    size_t len;
    char data[];
} msg_t;

typedef struct {
    int size;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    msg_t *head, *tail;
    void *bufs[MAXP];
    const size_t *lens[MAXP];
    int arrived, gen;
    int bad_lens;        /* allgathers whose len arrays differed between parts */
    int fail_recv_part;  /* this part's receives fail (-1: none) */
    int fail_send_part;  /* this part's sends fail (-1: none) */
    int rendezvous;      /* a send waits until its message is received */
    int send_timeouts;   /* rendezvous sends never received (a deadlock) */
    int broken;          /* after a send timed out: every send and receive fails */
} hub_t;

/* unlink m from h's queue (h->lock held) */
static void unlink_msg(hub_t *h, msg_t *m)
{
    msg_t *prev = NULL;
    for (msg_t *x = h->head; x; prev = x, x = x->next)
        if (x == m) {
            if (prev)
                prev->next = m->next;
            else
                h->head = m->next;
            if (h->tail == m)
                h->tail = prev;
            return;
        }
}

typedef struct {
    hub_t *hub;
    int rank;
    swgpu_comm_t comm;
} part_t;

static int t_send(void *user, int to, int tag, const void *buf, size_t len)
{
    part_t *p = user;
    hub_t *h = p->hub;
    msg_t *m = malloc(sizeof *m + len);
    if (!m)
        return SWGPU_ENOMEM;
    m->next = NULL;
    m->from = p->rank;
    m->to = to;
    m->tag = tag;
    m->taken = 0;
    m->failed = p->rank == h->fail_send_part; /* the receive fails too */
    m->len = len;
    memcpy(m->data, buf, len);
    pthread_mutex_lock(&h->lock);
    if (h->broken) {
        pthread_mutex_unlock(&h->lock);
        free(m);
        return SWGPU_EIO;
    }
    if (h->tail)
        h->tail->next = m;
    else
        h->head = m;
    h->tail = m;
    pthread_cond_broadcast(&h->cv);
    int rc = m->failed ? SWGPU_EIO : 0;
    if (h->rendezvous && !m->failed) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += RV_WAIT_S;
        while (!m->taken)
            if ((pthread_cond_timedwait(&h->cv, &h->lock, &until) == ETIMEDOUT || h->broken) &&
                !m->taken) {
                unlink_msg(h, m);
                h->send_timeouts += !h->broken;
                h->broken = 1;
                pthread_cond_broadcast(&h->cv);
                rc = SWGPU_EIO;
                break;
            }
        free(m);
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
}


static int t_recv(void *user, int from, int tag, void *buf, size_t len)
{
    part_t *p = user;
    hub_t *h = p->hub;
    if (p->rank == h->fail_recv_part)
        return SWGPU_EIO;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        if (h->broken) {
            pthread_mutex_unlock(&h->lock);
            return SWGPU_EIO;
        }
        for (msg_t *m = h->head; m; m = m->next)
            if (m->to == p->rank && m->from == from && m->tag == tag) {
                unlink_msg(h, m);
                const int rc = m->failed ? SWGPU_EIO : m->len == len ? 0 : SWGPU_EINVAL;
                memcpy(buf, m->data, len < m->len ? len : m->len);
                if (h->rendezvous && !m->failed) { /* the sender frees it */
                    m->taken = 1;
                    pthread_cond_broadcast(&h->cv);
                } else {
                    free(m);
                }
                pthread_mutex_unlock(&h->lock);
                return rc;
            }
        pthread_cond_wait(&h->cv, &h->lock);
    }
}

static void barrier(hub_t *h)
{
    int gen = h->gen;
    if (++h->arrived == h->size) {
        h->arrived = 0;
        h->gen++;
        pthread_cond_broadcast(&h->cv);
    } else {
        while (h->gen == gen)
            pthread_cond_wait(&h->cv, &h->lock);
    }
}

static int t_allgather(void *user, void *buf, const size_t *len)
{
    part_t *p = user;
    hub_t *h = p->hub;
    pthread_mutex_lock(&h->lock);
    h->bufs[p->rank] = buf;
    h->lens[p->rank] = len;
    barrier(h);
    pthread_mutex_unlock(&h->lock);
    /* every part copies the others' contributions out of their buffers */
    size_t off = 0;
    for (int q = 0; q < h->size; q++) {
        if (memcmp(h->lens[q], len, (size_t)h->size * sizeof *len))
            h->bad_lens = 1;
        if (q != p->rank)
            memcpy((char *)buf + off, (const char *)h->bufs[q] + off, len[q]);
        off += len[q];
    }
    pthread_mutex_lock(&h->lock);
    barrier(h);
    pthread_mutex_unlock(&h->lock);
    return 0;
}

static void hub_init(hub_t *h, int P)
{
    memset(h, 0, sizeof *h);
    h->size = P;
    h->fail_recv_part = -1;
    h->fail_send_part = -1;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cv, NULL);
}

static void hub_free(hub_t *h)
{
    while (h->head) { /* messages a failed part never took */
        msg_t *n = h->head->next;
        free(h->head);
        h->head = n;
    }
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->lock);
}

/* part p of hub h: its transport in part->comm */
static void part_init(part_t *part, hub_t *h, int p)
{
    part->hub = h;
    part->rank = p;
    part->comm = (swgpu_comm_t){p, h->size, part, t_send, t_recv, t_allgather};
}

#endif
