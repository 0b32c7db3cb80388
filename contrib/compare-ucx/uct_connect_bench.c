/*
 * uct_connect_bench: endpoint connects and idle progress calls through the
 * public UCT API, for counting their instructions under callgrind
 * (contrib/compare-ucx.sh). It opens one interface and connects N endpoint
 * pairs of it to each other (create both, exchange addresses, connect both
 * ways, destroy both), then calls uct_worker_progress K times with nothing
 * to do. A run's cost is setup + N connects + K polls, so two runs that
 * differ in one count give the cost of one.
 *
 * It builds unchanged against UCX (cc uct_connect_bench.c -luct -lucs) and
 * against this tree's installation (add -I<prefix>/include -L<prefix>/lib).
 *
 *   uct_connect_bench [-d dev:port] [-x tl] [-n pairs] [-k polls]
 *
 * Prints "connected N pairs, K idle progress calls" and exits 0, or says
 * which step failed and exits 1 (2 on a bad command line).
 */
#define _POSIX_C_SOURCE 200809L

#include "../common/bench_iface.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WARMUP_PAIRS 4  /* first connects allocate what later ones reuse */

typedef bench_iface_t bench_t;

static int fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "uct_connect_bench: %s: %s\n", what,
            ucs_status_string(status));
    return -1;
}

static int open_iface(bench_t *b, const char *dev, const char *tl)
{
    uct_component_h component = bench_find_ib_component();
    ucs_status_t status;
    const char *failed;

    memset(b, 0, sizeof(*b));
    if (component == NULL) {
        return fail("no \"ib\" component", UCS_ERR_NO_DEVICE);
    }
    failed = bench_iface_open(b, component, dev, tl, &status);
    return (failed == NULL) ? 0 : fail(failed, status);
}

/* One endpoint pair of the interface to itself, connected and destroyed */
static int connect_pair(bench_t *b, uct_ep_addr_t *addr_a,
                        uct_ep_addr_t *addr_b)
{
    uct_ep_h ep_a = NULL, ep_b = NULL;
    uct_ep_params_t params;
    ucs_status_t status;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = b->iface;
    status = uct_ep_create(&params, &ep_a);
    if (status == UCS_OK) {
        status = uct_ep_create(&params, &ep_b);
    }
    if (status == UCS_OK) {
        status = uct_ep_get_address(ep_a, addr_a);
    }
    if (status == UCS_OK) {
        status = uct_ep_get_address(ep_b, addr_b);
    }
    if (status == UCS_OK) {
        status = uct_ep_connect_to_ep(ep_a, b->dev_addr, addr_b);
    }
    if (status == UCS_OK) {
        status = uct_ep_connect_to_ep(ep_b, b->dev_addr, addr_a);
    }
    if (ep_b != NULL) {
        uct_ep_destroy(ep_b);
    }
    if (ep_a != NULL) {
        uct_ep_destroy(ep_a);
    }
    return (status == UCS_OK) ? 0 : fail("connecting a pair", status);
}

static int run(bench_t *b, unsigned pairs, unsigned long polls)
{
    uct_ep_addr_t *addr_a = malloc(b->attr.ep_addr_len);
    uct_ep_addr_t *addr_b = malloc(b->attr.ep_addr_len);
    unsigned long i;
    int ret = (addr_a && addr_b) ? 0 : fail("addresses", UCS_ERR_NO_MEMORY);

    for (i = 0; (ret == 0) && (i < WARMUP_PAIRS + pairs); ++i) {
        ret = connect_pair(b, addr_a, addr_b);
    }
    for (i = 0; (ret == 0) && (i < polls); ++i) {
        uct_worker_progress(b->worker);
    }
    free(addr_a);
    free(addr_b);
    return ret;
}

int main(int argc, char **argv)
{
    const char *dev = "mlx5_0:1", *tl = "rc_mlx5";
    unsigned long pairs = 100, polls = 0;
    bench_t b;
    int c, ret;

    while ((c = getopt(argc, argv, "d:x:n:k:h")) != -1) {
        switch (c) {
        case 'd': dev   = optarg; break;
        case 'x': tl    = optarg; break;
        case 'n': pairs = strtoul(optarg, NULL, 10); break;
        case 'k': polls = strtoul(optarg, NULL, 10); break;
        default:
            printf("usage: uct_connect_bench [-d dev:port] [-x tl] "
                   "[-n pairs] [-k polls]\n");
            return (c == 'h') ? 0 : 2;
        }
    }

    memset(&b, 0, sizeof(b));
    ret = open_iface(&b, dev, tl) || run(&b, (unsigned)pairs, polls);
    bench_iface_close(&b);
    if (ret == 0) {
        printf("connected %lu pairs, %lu idle progress calls\n", pairs, polls);
    }
    return ret ? 1 : 0;
}
