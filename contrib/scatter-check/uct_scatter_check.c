/*
 * uct_scatter_check: the data of the operations whose responses a device
 * may scatter to the CQE, checked byte by byte through the public UCT API:
 * get_bcopy of 1..80 bytes, get_zcopy of 65..80 bytes, 64-bit fetch-add and
 * compare-swap, and active messages (am_short of 0..56 payload bytes after
 * the 8-byte header, am_bcopy of 1..100 bytes). On rc_mlx5 with DevX, UCX
 * creates its QPs with scatter to CQE (cs_req 0x22, cs_res 2, 128-byte
 * CQEs), so the small ones come back in the CQE and the large ones through
 * memory; this checks both land right. One interface, one endpoint pair
 * connected to each other.
 *
 * It builds unchanged against UCX (cc uct_scatter_check.c -luct -lucs) and
 * against this tree's installation (add -I<prefix>/include -L<prefix>/lib).
 *
 *   uct_scatter_check [-d dev:port] [-x tl]
 *
 * Prints "checked N operations" and exits 0, or the first mismatch and
 * exits 1.
 */
#define _POSIX_C_SOURCE 200809L

#include "../common/bench_iface.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AM_ID      3
#define BUF_LEN    256
#define WAIT_SEC   20.0 /* for one operation */

typedef struct {
    uct_component_h     component;
    bench_iface_t       i;
    uct_ep_h            ep_a, ep_b;
    uct_mem_h           memh;
    uct_rkey_bundle_t   rkey;
    uint8_t             remote[BUF_LEN]; /* read and atomics target */
    uint8_t             got[BUF_LEN];    /* what get_bcopy unpacked */
    uint8_t             am[BUF_LEN];     /* what the AM handler received */
    size_t              am_len;
    unsigned            am_count;
    unsigned            checked;
} check_t;

typedef struct {
    uct_completion_t comp;
    int              done;
} waiter_t;

static int fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "uct_scatter_check: %s: %s\n", what,
            ucs_status_string(status));
    return -1;
}

static int mismatch(const char *what, size_t len)
{
    fprintf(stderr, "uct_scatter_check: %s of %zu bytes: wrong data\n", what,
            len);
    return -1;
}

static void waiter_done(uct_completion_t *self)
{
    ((waiter_t*)self)->done = 1;
}

static void waiter_init(waiter_t *w)
{
    memset(w, 0, sizeof(*w));
    w->comp.func   = waiter_done;
    w->comp.count  = 1;
    w->comp.status = UCS_OK;
}

/* Progress until the operation that returned status is done */
static int wait_for(check_t *c, waiter_t *w, ucs_status_t status,
                    const char *what)
{
    double deadline = bench_now_sec() + WAIT_SEC;

    if (status == UCS_OK) {
        return 0;
    }
    if (status != UCS_INPROGRESS) {
        return fail(what, status);
    }
    while (!w->done && (bench_now_sec() < deadline)) {
        uct_worker_progress(c->i.worker);
    }
    if (!w->done) {
        return fail(what, UCS_ERR_TIMED_OUT);
    }
    return (w->comp.status == UCS_OK) ? 0 : fail(what, w->comp.status);
}

static ucs_status_t am_handler(void *arg, void *data, size_t length,
                               unsigned flags)
{
    check_t *c = arg;

    (void)flags;
    c->am_len = (length < sizeof(c->am)) ? length : sizeof(c->am);
    memcpy(c->am, data, c->am_len);
    ++c->am_count;
    return UCS_OK;
}

static int open_iface(check_t *c, const char *dev, const char *tl)
{
    ucs_status_t status;
    const char *failed;

    c->component = bench_find_ib_component();
    if (c->component == NULL) {
        return fail("no \"ib\" component", UCS_ERR_NO_DEVICE);
    }
    failed = bench_iface_open(&c->i, c->component, dev, tl, &status);
    if (failed != NULL) {
        return fail(failed, status);
    }
    status = uct_iface_set_am_handler(c->i.iface, AM_ID, am_handler, c, 0);
    return (status == UCS_OK) ? 0 : fail("setting the AM handler", status);
}

static int connect_pair(check_t *c)
{
    uct_ep_addr_t *addr_a = malloc(c->i.attr.ep_addr_len);
    uct_ep_addr_t *addr_b = malloc(c->i.attr.ep_addr_len);
    uct_ep_params_t params;
    ucs_status_t status = (addr_a && addr_b) ? UCS_OK : UCS_ERR_NO_MEMORY;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = c->i.iface;
    if (status == UCS_OK) {
        status = uct_ep_create(&params, &c->ep_a);
    }
    if (status == UCS_OK) {
        status = uct_ep_create(&params, &c->ep_b);
    }
    if (status == UCS_OK) {
        status = uct_ep_get_address(c->ep_a, addr_a);
    }
    if (status == UCS_OK) {
        status = uct_ep_get_address(c->ep_b, addr_b);
    }
    if (status == UCS_OK) {
        status = uct_ep_connect_to_ep(c->ep_a, c->i.dev_addr, addr_b);
    }
    if (status == UCS_OK) {
        status = uct_ep_connect_to_ep(c->ep_b, c->i.dev_addr, addr_a);
    }
    free(addr_a);
    free(addr_b);
    return (status == UCS_OK) ? 0 : fail("connecting the pair", status);
}

static int register_remote(check_t *c)
{
    uct_md_attr_t md_attr;
    void *packed;
    ucs_status_t status;

    status = uct_md_query(c->i.md, &md_attr);
    if (status != UCS_OK) {
        return fail("querying the md", status);
    }
    status = uct_md_mem_reg(c->i.md, c->remote, sizeof(c->remote),
                            UCT_MD_MEM_ACCESS_ALL, &c->memh);
    if (status != UCS_OK) {
        return fail("registering memory", status);
    }
    packed = malloc(md_attr.rkey_packed_size);
    if (packed == NULL) {
        return fail("packing the rkey", UCS_ERR_NO_MEMORY);
    }
    status = uct_md_mkey_pack(c->i.md, c->memh, packed);
    if (status == UCS_OK) {
        status = uct_rkey_unpack(c->component, packed, &c->rkey);
    }
    free(packed);
    return (status == UCS_OK) ? 0 : fail("unpacking the rkey", status);
}

static void unpack_got(void *arg, const void *data, size_t length)
{
    check_t *c = arg;

    memcpy(c->got, data, length);
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
    size_t i;

    for (i = 0; i < len; ++i) {
        p[i] = (uint8_t)(seed * 31 + i * 7 + 1);
    }
}

static int check_gets(check_t *c)
{
    uint64_t raddr = (uintptr_t)c->remote;
    uint8_t zbuf[BUF_LEN];
    uct_iov_t iov;
    waiter_t w;
    size_t len;

    for (len = 1; len <= 80; ++len) {
        fill(c->remote, len, (unsigned)len);
        memset(c->got, 0, sizeof(c->got));
        waiter_init(&w);
        if (wait_for(c, &w, uct_ep_get_bcopy(c->ep_a, unpack_got, c, len,
                                             raddr, c->rkey.rkey, &w.comp),
                     "get_bcopy") ||
            memcmp(c->got, c->remote, len)) {
            return mismatch("get_bcopy", len);
        }
        ++c->checked;
    }

    /* get_zcopy below 65 bytes is refused where responses go to the CQE */
    for (len = c->i.attr.cap.get.min_zcopy; len <= 80; ++len) {
        if (len == 0) {
            continue;
        }
        fill(c->remote, len, (unsigned)len + 100);
        memset(zbuf, 0, sizeof(zbuf));
        iov.buffer = zbuf;
        iov.length = len;
        iov.stride = 0;
        iov.count  = 1;
        if (uct_md_mem_reg(c->i.md, zbuf, sizeof(zbuf), UCT_MD_MEM_ACCESS_ALL,
                           &iov.memh) != UCS_OK) {
            return fail("registering the zcopy buffer", UCS_ERR_IO_ERROR);
        }
        waiter_init(&w);
        if (wait_for(c, &w, uct_ep_get_zcopy(c->ep_a, &iov, 1, raddr,
                                             c->rkey.rkey, &w.comp),
                     "get_zcopy") ||
            memcmp(zbuf, c->remote, len)) {
            uct_md_mem_dereg(c->i.md, iov.memh);
            return mismatch("get_zcopy", len);
        }
        uct_md_mem_dereg(c->i.md, iov.memh);
        ++c->checked;
    }
    printf("get_zcopy from %zu bytes\n", c->i.attr.cap.get.min_zcopy);
    return 0;
}

static int check_atomics(check_t *c)
{
    uint64_t raddr = (uintptr_t)c->remote, value, result;
    waiter_t w;
    int i;

    if (!(c->i.attr.cap.atomic64.fop_flags & UCS_BIT(UCT_ATOMIC_OP_ADD)) ||
        !(c->i.attr.cap.atomic64.fop_flags & UCS_BIT(UCT_ATOMIC_OP_CSWAP))) {
        printf("no 64-bit fetch-add and compare-swap: atomics skipped\n");
        return 0;
    }

    value = 0x1122334455667788ull;
    memcpy(c->remote, &value, sizeof(value));
    for (i = 0; i < 16; ++i) {
        result = 0;
        waiter_init(&w);
        if (wait_for(c, &w, uct_ep_atomic64_fetch(c->ep_a, UCT_ATOMIC_OP_ADD,
                                                  0x101, &result, raddr,
                                                  c->rkey.rkey, &w.comp),
                     "fetch-add") || (result != value)) {
            fprintf(stderr, "fetch-add: 0x%" PRIx64 ", not 0x%" PRIx64 "\n",
                    result, value);
            return -1;
        }
        value += 0x101;
        ++c->checked;
    }

    result = 0;
    waiter_init(&w);
    if (wait_for(c, &w, uct_ep_atomic_cswap64(c->ep_a, value, 42, raddr,
                                              c->rkey.rkey, &result, &w.comp),
                 "compare-swap") || (result != value)) {
        fprintf(stderr, "compare-swap: 0x%" PRIx64 ", not 0x%" PRIx64 "\n",
                result, value);
        return -1;
    }
    memcpy(&value, c->remote, sizeof(value));
    if (value != 42) {
        fprintf(stderr, "compare-swap did not swap\n");
        return -1;
    }
    ++c->checked;
    return 0;
}

static size_t pack_payload(void *dest, void *arg)
{
    size_t len = *(size_t*)arg;

    fill(dest, len, (unsigned)len + 200);
    return len;
}

/* Progress until the AM handler ran count times */
static int wait_am(check_t *c, unsigned count, const char *what, size_t len)
{
    double deadline = bench_now_sec() + WAIT_SEC;

    while ((c->am_count < count) && (bench_now_sec() < deadline)) {
        uct_worker_progress(c->i.worker);
    }
    if (c->am_count != count) {
        fprintf(stderr, "uct_scatter_check: %s of %zu bytes: received %u "
                "active messages, expected %u\n", what, len, c->am_count,
                count);
        return -1;
    }
    return 0;
}

static int check_ams(check_t *c)
{
    uint8_t expect[BUF_LEN];
    uint64_t header = 0x0102030405060708ull;
    ucs_status_t status;
    ssize_t packed;
    size_t len, max;
    unsigned expected;
    double deadline;

    max = c->i.attr.cap.am.max_short;
    max = (max > 8 + 56) ? 56 : max - 8;
    for (len = 0; len <= max; ++len) {
        fill(expect, len, (unsigned)len + 300);
        /* counted before posting: the progress after a post may already
         * run the handler */
        expected = c->am_count + 1;
        deadline = bench_now_sec() + WAIT_SEC;
        do {
            status = uct_ep_am_short(c->ep_a, AM_ID, header, expect, len);
            uct_worker_progress(c->i.worker);
        } while ((status == UCS_ERR_NO_RESOURCE) &&
                 (bench_now_sec() < deadline));
        if (status != UCS_OK) {
            return fail("am_short", status);
        }
        if (wait_am(c, expected, "am_short", len)) {
            return -1;
        }
        if ((c->am_len != 8 + len) || memcmp(c->am, &header, 8) ||
            memcmp(c->am + 8, expect, len)) {
            return mismatch("am_short", len);
        }
        ++c->checked;
    }

    for (len = 1; len <= 100; ++len) {
        fill(expect, len, (unsigned)len + 200);
        expected = c->am_count + 1;
        deadline = bench_now_sec() + WAIT_SEC;
        do {
            packed = uct_ep_am_bcopy(c->ep_a, AM_ID, pack_payload, &len, 0);
            uct_worker_progress(c->i.worker);
        } while ((packed == UCS_ERR_NO_RESOURCE) &&
                 (bench_now_sec() < deadline));
        if (packed < 0) {
            return fail("am_bcopy", (ucs_status_t)packed);
        }
        if (wait_am(c, expected, "am_bcopy", len)) {
            return -1;
        }
        if ((c->am_len != len) || memcmp(c->am, expect, len)) {
            return mismatch("am_bcopy", len);
        }
        ++c->checked;
    }
    return 0;
}

static void cleanup(check_t *c)
{
    if (c->ep_b != NULL) {
        uct_ep_destroy(c->ep_b);
    }
    if (c->ep_a != NULL) {
        uct_ep_destroy(c->ep_a);
    }
    if (c->rkey.rkey != 0) {
        uct_rkey_release(c->component, &c->rkey);
    }
    if (c->memh != NULL) {
        uct_md_mem_dereg(c->i.md, c->memh);
    }
    bench_iface_close(&c->i);
}

int main(int argc, char **argv)
{
    const char *dev = "mlx5_0:1", *tl = "rc_mlx5";
    static check_t c;
    int opt, ret;

    while ((opt = getopt(argc, argv, "d:x:h")) != -1) {
        switch (opt) {
        case 'd': dev = optarg; break;
        case 'x': tl  = optarg; break;
        default:
            printf("usage: uct_scatter_check [-d dev:port] [-x tl]\n");
            return (opt == 'h') ? 0 : 2;
        }
    }

    ret = open_iface(&c, dev, tl) || connect_pair(&c) ||
          register_remote(&c) || check_gets(&c) || check_atomics(&c) ||
          check_ams(&c);
    cleanup(&c);
    if (ret == 0) {
        printf("checked %u operations\n", c.checked);
    }
    return ret ? 1 : 0;
}
