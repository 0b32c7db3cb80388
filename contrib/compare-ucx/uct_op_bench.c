/*
 * uct_op_bench: the work of ucx_perftest's am_lat, put_bw, am_bw, get_bw and
 * add_lat (8 bytes) through the public UCT API, with callgrind collecting
 * only the library calls that do work (contrib/compare-ucx.sh).
 *
 * Two sides in one process, as perftest's client and server: a on one port
 * and b on another (-d, -D), each with its own worker and interface, and an
 * endpoint of each connected to the other's.
 *   am_lat  a sends an am_short to b, b answers: per round trip two posts
 *           and the two progress calls that deliver them
 *   put_bw  a stream of put_short from a into memory of b; the progress
 *           calls of a that reap the send completions
 *   am_bw   a stream of am_short from a to b, and b's progress calls that
 *           deliver them; every FC_HALF_WINDOW messages b sends a an ack,
 *           as perftest's flow control does
 *   get_bw  a stream of 8-byte get_bcopy from b's memory into a's; every
 *           FC_HALF_WINDOW gets (and at the end) a progresses until all
 *           of them completed: the calls that deliver the data
 *   add_lat a adds 1 to a counter in b's memory (atomic64_post), b waits
 *           for it to change (reading its memory, no library call) and adds
 *           1 to a's, as perftest's ping-pong: per round trip two posts
 * A side whose post is refused for lack of resources progresses its worker
 * and tries again, as perftest does; such posts are reported as "busy".
 *
 * Run with valgrind --tool=callgrind --collect-atstart=no: collection is on
 * only inside each posting call and each progress call, and a progress call
 * is made only after a nap, a syscall, so that the device's thread runs
 * (valgrind runs one thread at a time); the nap is longer by NAP_PER_POST
 * for each operation posted since the last one. A progress call that still
 * finds nothing is reported as "empty" and doubles the nap (a loaded
 * machine), which goes back down while the calls find work; "empty" should
 * stay 0. The cost of the operations is then what the library's objects
 * collected, and two runs that differ in -n give it per operation.
 *
 * It builds unchanged against UCX (cc uct_op_bench.c -luct -lucs) and
 * against this tree's installation (add -I<prefix>/include -L<prefix>/lib).
 *
 *   uct_op_bench -t am_lat|put_bw|am_bw|get_bw|add_lat [-d dev:port] [-D dev:port]
 *                [-x tl] [-n ops] [-w warmup ops] [-u nap usec]
 *
 * ops are messages; for am_lat and add_lat half a round trip (per iteration each side
 * of perftest posts one message and receives one), so -n is even. Prints
 * "done TEST ops N progress P empty E busy B nap U" (U the nap at the
 * end) and exits 0, or says
 * which step failed and exits 1 (2 on a bad command line).
 */
#define _POSIX_C_SOURCE 200809L

#include "../common/bench_iface.h"

#include <valgrind/callgrind.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AM_ID          17
#define FC_HALF_WINDOW 63     /* perftest's default window is 127 */
#define WAIT_LIMIT_SEC 60     /* for one delivery, completion or resource */
#define NAP_MAX_USEC   50000
#define NAP_HOLD       64     /* found work so many times: halve the nap */
#define NAP_PER_POST   20     /* usec: the device works through a backlog */
#define TARGET_SIZE    4096

typedef enum { AM_LAT, PUT_BW, AM_BW, GET_BW, ADD_LAT } test_t;

/* A side's memory that the other side writes, reads or adds to */
typedef struct {
    uint64_t          *buf;
    uct_mem_h         memh;
    void              *rkey_buffer;
    uct_rkey_bundle_t rkey;         /* unpacked by the other side */
    int               rkey_valid;
} target_t;

typedef struct {
    const char             *dev;
    bench_iface_t          i;
    uct_ep_addr_t          *ep_addr;
    uct_ep_h               ep;
    volatile unsigned long received;
    target_t               target;
    uct_completion_t       comp;      /* of get_bw's gets */
    volatile unsigned long completed; /* gets completed */
    uint64_t               got;       /* where get_bw's data lands */
} side_t;

typedef struct {
    uct_component_h   component;
    side_t            a, b;
    unsigned long     nap_base, nap_usec;
    unsigned          found_streak; /* progress calls that found work */
    unsigned long     posted;       /* since the last nap */
    int               collect;      /* measured ops, not warmup */
    unsigned long     progress, empty, busy;
} bench_t;

static int fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "uct_op_bench: %s: %s\n", what,
            ucs_status_string(status));
    return -1;
}

static void collect_toggle(const bench_t *b)
{
    if (b->collect) {
        CALLGRIND_TOGGLE_COLLECT;
    }
}

static void nap(bench_t *b)
{
    unsigned long usec = b->nap_usec + b->posted * NAP_PER_POST;
    struct timespec ts = { .tv_sec  = usec / 1000000,
                           .tv_nsec = (usec % 1000000) * 1000 };

    nanosleep(&ts, NULL);
    b->posted = 0;
}

static ucs_status_t am_received(void *arg, void *data, size_t length,
                                unsigned flags)
{
    side_t *side = arg;

    (void)data;
    (void)length;
    (void)flags;
    ++side->received;
    return UCS_OK;
}

static void get_done(uct_completion_t *comp)
{
    side_t *side = (side_t*)((char*)comp - offsetof(side_t, comp));

    ++side->completed;
    comp->count = 1;
}

/* 8 bytes are copied inline, so that no libc call of ours is counted */
static void get_unpack(void *arg, const void *data, size_t length)
{
    if (length == sizeof(uint64_t)) {
        memcpy(arg, data, sizeof(uint64_t));
    } else {
        memcpy(arg, data, length);
    }
}

/* One collected progress call of @a side, after giving the device time */
static void progress_once(bench_t *b, side_t *side)
{
    unsigned count;

    nap(b);
    collect_toggle(b);
    count = uct_worker_progress(side->i.worker);
    collect_toggle(b);
    if (count == 0) {
        b->nap_usec    = (2 * b->nap_usec > NAP_MAX_USEC) ? NAP_MAX_USEC :
                         2 * b->nap_usec;
        b->found_streak = 0;
    } else if (++b->found_streak == NAP_HOLD) {
        b->nap_usec    = (b->nap_usec / 2 < b->nap_base) ? b->nap_base :
                         b->nap_usec / 2;
        b->found_streak = 0;
    }
    if (b->collect) {
        ++b->progress;
        b->empty += (count == 0);
    }
}

/* Progress @a side until *@a counter (its messages received, or its gets
 * completed: @a what) reaches @a target */
static int progress_until(bench_t *b, side_t *side,
                          const volatile unsigned long *counter,
                          unsigned long target, const char *what)
{
    double deadline = bench_now_sec() + WAIT_LIMIT_SEC;

    while (*counter < target) {
        if (bench_now_sec() > deadline) {
            fprintf(stderr, "uct_op_bench: %s: %lu of %lu %s in %d seconds\n",
                    side->dev, *counter, target, what, WAIT_LIMIT_SEC);
            return -1;
        }
        progress_once(b, side);
    }
    return 0;
}

static int progress_until_received(bench_t *b, side_t *side,
                                   unsigned long target)
{
    return progress_until(b, side, &side->received, target,
                          "messages received");
}

static int progress_until_completed(bench_t *b, side_t *side,
                                    unsigned long target)
{
    return progress_until(b, side, &side->completed, target,
                          "gets completed");
}

/* add_lat: until @a side's counter reaches @a value, napping only: the
 * device writes it, no library call is needed */
static int wait_for_counter(bench_t *b, side_t *side, uint64_t value)
{
    volatile uint64_t *counter = side->target.buf;
    double deadline = bench_now_sec() + WAIT_LIMIT_SEC;

    while (*counter < value) {
        if (bench_now_sec() > deadline) {
            fprintf(stderr, "uct_op_bench: %s counter at %lu of %lu in %d "
                    "seconds\n", side->dev, (unsigned long)*counter,
                    (unsigned long)value, WAIT_LIMIT_SEC);
            return -1;
        }
        nap(b);
    }
    return 0;
}

/* The side a post of @a side reaches */
static side_t *peer_of(bench_t *b, side_t *side)
{
    return (side == &b->a) ? &b->b : &b->a;
}

static int post(bench_t *b, test_t test, side_t *side, uint64_t sn)
{
    target_t *remote = &peer_of(b, side)->target;
    double deadline = bench_now_sec() + WAIT_LIMIT_SEC;
    ucs_status_t status;

    for (;;) {
        collect_toggle(b);
        if (test == PUT_BW) {
            status = uct_ep_put_short(side->ep, &sn, sizeof(sn),
                                      (uintptr_t)remote->buf,
                                      remote->rkey.rkey);
        } else if (test == GET_BW) {
            status = uct_ep_get_bcopy(side->ep, get_unpack, &side->got,
                                      sizeof(side->got),
                                      (uintptr_t)remote->buf,
                                      remote->rkey.rkey, &side->comp);
        } else if (test == ADD_LAT) {
            status = uct_ep_atomic64_post(side->ep, UCT_ATOMIC_OP_ADD, 1,
                                          (uintptr_t)remote->buf,
                                          remote->rkey.rkey);
        } else {
            /* the 8 bytes are the header, as perftest sends them */
            status = uct_ep_am_short(side->ep, AM_ID, sn, NULL, 0);
        }
        collect_toggle(b);
        if ((status == UCS_OK) || ((test == GET_BW) &&
                                   (status == UCS_INPROGRESS))) {
            ++b->posted;
            return 0;
        } else if (status != UCS_ERR_NO_RESOURCE) {
            return fail("posting", status);
        } else if (bench_now_sec() > deadline) {
            return fail("no send resources for a minute", status);
        }
        if (b->collect) {
            ++b->busy;
        }
        progress_once(b, side);
    }
}

/* Every operation @a side posted completed; collected, so that reaping the
 * last operations' completions counts */
static int flush(bench_t *b, side_t *side)
{
    double deadline = bench_now_sec() + WAIT_LIMIT_SEC;
    ucs_status_t status;

    for (;;) {
        collect_toggle(b);
        status = uct_iface_flush(side->i.iface, 0, NULL);
        collect_toggle(b);
        if (status == UCS_OK) {
            return 0;
        } else if ((status != UCS_INPROGRESS) &&
                   (status != UCS_ERR_NO_RESOURCE)) {
            return fail("flushing", status);
        } else if (bench_now_sec() > deadline) {
            return fail("flush not done after a minute", status);
        }
        progress_once(b, side);
    }
}

static int run_ops(bench_t *b, test_t test, unsigned long ops)
{
    unsigned long to_a = b->a.received, to_b = b->b.received, i;
    unsigned long gets = b->a.completed;
    uint64_t add_a = (b->a.target.buf != NULL) ? *b->a.target.buf : 0;
    uint64_t add_b = (b->b.target.buf != NULL) ? *b->b.target.buf : 0;
    int ret = 0;

    for (i = 0; (ret == 0) && (i < ops); ++i) {
        switch (test) {
        case AM_LAT:
            if (i & 1) {
                ret = post(b, test, &b->b, i) ||
                      progress_until_received(b, &b->a, ++to_a);
            } else {
                ret = post(b, test, &b->a, i) ||
                      progress_until_received(b, &b->b, ++to_b);
            }
            break;
        case PUT_BW:
            ret = post(b, test, &b->a, i);
            break;
        case AM_BW:
            ret = post(b, test, &b->a, i);
            ++to_b;
            if ((ret == 0) && (((i + 1) % FC_HALF_WINDOW) == 0)) {
                ret = progress_until_received(b, &b->b, to_b) ||
                      post(b, test, &b->b, i) ||
                      progress_until_received(b, &b->a, ++to_a);
            }
            break;
        case GET_BW:
            ret = post(b, test, &b->a, i);
            ++gets;
            if ((ret == 0) && (((i + 1) % FC_HALF_WINDOW) == 0)) {
                ret = progress_until_completed(b, &b->a, gets);
            }
            break;
        case ADD_LAT:
            if (i & 1) {
                ret = post(b, test, &b->b, i) ||
                      wait_for_counter(b, &b->a, ++add_a);
            } else {
                ret = post(b, test, &b->a, i) ||
                      wait_for_counter(b, &b->b, ++add_b);
            }
            break;
        }
    }
    return ret || progress_until_received(b, &b->b, to_b) ||
           progress_until_completed(b, &b->a, gets) ||
           flush(b, &b->a) || flush(b, &b->b);
}

static int open_side(bench_t *b, side_t *side, const char *tl)
{
    uct_ep_params_t ep_params;
    ucs_status_t status;
    const char *failed;

    failed = bench_iface_open(&side->i, b->component, side->dev, tl, &status);
    if (failed != NULL) {
        return fail(failed, status);
    }
    status = uct_iface_set_am_handler(side->i.iface, AM_ID, am_received, side,
                                      0);
    if (status != UCS_OK) {
        return fail("setting the am handler", status);
    }
    side->ep_addr = malloc(side->i.attr.ep_addr_len);
    if (side->ep_addr == NULL) {
        return fail("the endpoint address", UCS_ERR_NO_MEMORY);
    }

    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    ep_params.iface      = side->i.iface;
    status = uct_ep_create(&ep_params, &side->ep);
    if (status == UCS_OK) {
        status = uct_ep_get_address(side->ep, side->ep_addr);
    }
    return (status == UCS_OK) ? 0 : fail("creating an endpoint", status);
}

static int connect_sides(bench_t *b)
{
    ucs_status_t status;

    status = uct_ep_connect_to_ep(b->a.ep, b->b.i.dev_addr, b->b.ep_addr);
    if (status == UCS_OK) {
        status = uct_ep_connect_to_ep(b->b.ep, b->a.i.dev_addr, b->a.ep_addr);
    }
    return (status == UCS_OK) ? 0 : fail("connecting the endpoints", status);
}

/* @a side's memory, registered, and its key unpacked for @a peer */
static int register_target(bench_t *b, side_t *side)
{
    target_t *t = &side->target;
    uct_md_attr_t md_attr;
    ucs_status_t status;

    t->buf = calloc(1, TARGET_SIZE);
    if (t->buf == NULL) {
        return fail("target memory", UCS_ERR_NO_MEMORY);
    }
    status = uct_md_query(side->i.md, &md_attr);
    if (status != UCS_OK) {
        return fail("querying the memory domain", status);
    }
    status = uct_md_mem_reg(side->i.md, t->buf, TARGET_SIZE,
                            UCT_MD_MEM_ACCESS_ALL, &t->memh);
    if (status != UCS_OK) {
        t->memh = NULL;
        return fail("registering the target memory", status);
    }
    t->rkey_buffer = malloc(md_attr.rkey_packed_size);
    if (t->rkey_buffer == NULL) {
        return fail("remote key", UCS_ERR_NO_MEMORY);
    }
    status = uct_md_mkey_pack(side->i.md, t->memh, t->rkey_buffer);
    if (status == UCS_OK) {
        status = uct_rkey_unpack(b->component, t->rkey_buffer, &t->rkey);
    }
    if (status != UCS_OK) {
        return fail("remote key", status);
    }
    t->rkey_valid = 1;
    return 0;
}

static void release_target(bench_t *b, side_t *side)
{
    target_t *t = &side->target;

    if (t->rkey_valid) {
        uct_rkey_release(b->component, &t->rkey);
    }
    free(t->rkey_buffer);
    if (t->memh != NULL) {
        uct_md_mem_dereg(side->i.md, t->memh);
    }
    free(t->buf);
}

static void close_side(side_t *side)
{
    if (side->ep != NULL) {
        uct_ep_destroy(side->ep);
    }
    free(side->ep_addr);
    bench_iface_close(&side->i);
}

static void cleanup(bench_t *b)
{
    release_target(b, &b->a);
    release_target(b, &b->b);
    close_side(&b->a);
    close_side(&b->b);
}

static int setup(bench_t *b, test_t test, const char *tl)
{
    b->component = bench_find_ib_component();
    if (b->component == NULL) {
        return fail("no \"ib\" component", UCS_ERR_NO_DEVICE);
    }
    b->a.comp.func  = get_done;
    b->a.comp.count = 1;
    return open_side(b, &b->a, tl) || open_side(b, &b->b, tl) ||
           connect_sides(b) ||
           ((test != AM_LAT) && (test != AM_BW) &&
            (register_target(b, &b->a) || register_target(b, &b->b)));
}

int main(int argc, char **argv)
{
    static const char *names[] = { "am_lat", "put_bw", "am_bw", "get_bw",
                                   "add_lat" };
    const char *tl = "rc_mlx5";
    unsigned long ops = 1000, warmup = 256;
    int c, ret, help = 0, test = -1;
    bench_t b;

    memset(&b, 0, sizeof(b));
    b.a.dev = "mlx5_0:1";
    b.b.dev = "mlx5_1:1";
    /* under valgrind the device's thread may be in its idle sleep (up to a
     * millisecond) when an operation is posted, and runs slowly */
    b.nap_usec = RUNNING_ON_VALGRIND ? 3000 : 50;
    while ((c = getopt(argc, argv, "t:d:D:x:n:w:u:h")) != -1) {
        switch (c) {
        case 't':
            for (test = 4; (test >= 0) && strcmp(optarg, names[test]); --test)
                ;
            break;
        case 'd': b.a.dev    = optarg; break;
        case 'D': b.b.dev    = optarg; break;
        case 'x': tl         = optarg; break;
        case 'n': ops        = strtoul(optarg, NULL, 10); break;
        case 'w': warmup     = strtoul(optarg, NULL, 10); break;
        case 'u': b.nap_usec = strtoul(optarg, NULL, 10); break;
        default:
            help = (c == 'h');
            test = -2;
            break;
        }
    }
    if ((test < 0) || (ops % 2) || (warmup % 2) || (b.nap_usec == 0)) {
        printf("usage: uct_op_bench -t am_lat|put_bw|am_bw|get_bw|add_lat "
               "[-d dev:port] "
               "[-D dev:port] [-x tl] [-n ops] [-w warmup ops] "
               "[-u nap usec]  (ops even, nap > 0)\n");
        return help ? 0 : 2;
    }

    b.nap_base = b.nap_usec;
    ret        = setup(&b, test, tl) || run_ops(&b, test, warmup);
    if (ret == 0) {
        b.collect = 1;
        ret = run_ops(&b, test, ops);
        b.collect = 0;
    }
    cleanup(&b);
    if (ret == 0) {
        printf("done %s ops %lu progress %lu empty %lu busy %lu nap %lu\n",
               names[test], ops, b.progress, b.empty, b.busy, b.nap_usec);
    }
    return ret ? 1 : 0;
}
