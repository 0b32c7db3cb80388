/*
 * The libibverbs entry points our library does not call, as an unmodified
 * program calls them on the emulated devices (run under the preload by
 * contrib/dropin-check.sh): the GID table, the fork state, the P_Key index
 * and data-in-order answer as rdma-core documents them, and the operations
 * the model has not got are refused with EOPNOTSUPP, never a crash.
 * Prints one line per check and "checked N entry points"; exit 0 when all
 * passed.
 */
#define _DEFAULT_SOURCE /* htobe16 */

#include <infiniband/verbs.h>

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static int checked;

static void check(int ok, const char *what)
{
    ++checked;
    if (!ok) {
        ++failures;
        printf("FAILED: %s\n", what);
    }
}

static struct ibv_context *open_named(const char *name)
{
    struct ibv_device **list = ibv_get_device_list(NULL);
    struct ibv_context *ctx  = NULL;

    for (int i = 0; (list != NULL) && (list[i] != NULL); ++i) {
        if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
            ctx = ibv_open_device(list[i]);
        }
    }
    if (list != NULL) {
        ibv_free_device_list(list);
    }
    return ctx;
}

/* The GID table holds exactly the valid entries ibv_query_gid_ex gives */
static void gid_table(struct ibv_context *ctx, int expected)
{
    struct ibv_gid_entry entries[8], one;
    ssize_t n = ibv_query_gid_table(ctx, entries, 8, 0);

    check(n == expected, "ibv_query_gid_table: the valid entries");
    for (ssize_t i = 0; i < n; ++i) {
        check((ibv_query_gid_ex(ctx, entries[i].port_num,
                                entries[i].gid_index, &one, 0) == 0) &&
              (memcmp(&one.gid, &entries[i].gid, sizeof(one.gid)) == 0) &&
              (one.gid_type == entries[i].gid_type),
              "ibv_query_gid_table: an entry as ibv_query_gid_ex has it");
    }
    if (expected > 1) {
        check(ibv_query_gid_table(ctx, entries, expected - 1, 0) == -EINVAL,
              "ibv_query_gid_table: -EINVAL when the array is too small");
    }
    check(ibv_query_gid_table(ctx, entries, 8, 1) == -EINVAL,
          "ibv_query_gid_table: -EINVAL for flags");
}

int main(void)
{
    struct ibv_context *eth = open_named("mlx5_0");
    struct ibv_context *ib  = open_named("mlx5_2");
    struct ibv_qp_init_attr qp_attr;
    struct ibv_srq_init_attr srq_init;
    struct ibv_srq_attr srq_attr;
    struct ibv_srq *srq;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    static char buf[4096];
    union ibv_gid gid;

    if ((eth == NULL) || (ib == NULL)) {
        printf("FAILED: cannot open mlx5_0 and mlx5_2\n");
        return 1;
    }

    gid_table(eth, 4); /* RoCEv1 and v2 on the link-local and IPv4 GIDs */
    gid_table(ib, 1);

    check(ibv_fork_init() == 0, "ibv_fork_init");
    check(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED,
          "ibv_is_fork_initialized: unneeded");
    check(ibv_get_pkey_index(ib, 1, htobe16(0xffff)) == 0,
          "ibv_get_pkey_index: the default P_Key at index 0");
    check((ibv_get_pkey_index(ib, 1, htobe16(0x1234)) == -1) &&
          (errno == ENOENT), "ibv_get_pkey_index: -1 for an unknown P_Key");

    pd = ibv_alloc_pd(ib);
    cq = ibv_create_cq(ib, 16, NULL, NULL, 0);
    if ((pd == NULL) || (cq == NULL)) {
        printf("FAILED: cannot allocate a PD and a CQ on mlx5_2\n");
        return 1;
    }
    memset(&qp_attr, 0, sizeof(qp_attr));
    qp_attr.send_cq          = cq;
    qp_attr.recv_cq          = cq;
    qp_attr.qp_type          = IBV_QPT_RC;
    qp_attr.cap.max_send_wr  = 4;
    qp_attr.cap.max_recv_wr  = 4;
    qp_attr.cap.max_send_sge = 1;
    qp_attr.cap.max_recv_sge = 1;
    qp = ibv_create_qp(pd, &qp_attr);
    check(qp != NULL, "ibv_create_qp");

    mr = ibv_reg_mr_iova(pd, buf, sizeof(buf), (uintptr_t)buf,
                         IBV_ACCESS_LOCAL_WRITE);
    check(mr != NULL, "ibv_reg_mr_iova at the buffer's address");
    if (mr != NULL) {
        check(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
    }

    /* what the model has not got: refused, as by a provider without it */
    if (qp != NULL) {
        check(ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 0) == 0,
              "ibv_query_qp_data_in_order: no order promised");
        memset(&gid, 0, sizeof(gid));
        gid.raw[0] = 0xff;
        check(ibv_attach_mcast(qp, &gid, 0xc001) == EOPNOTSUPP,
              "ibv_attach_mcast: EOPNOTSUPP");
        check(ibv_detach_mcast(qp, &gid, 0xc001) == EOPNOTSUPP,
              "ibv_detach_mcast: EOPNOTSUPP");
        check(ibv_destroy_qp(qp) == 0, "ibv_destroy_qp");
    }
    check(ibv_resize_cq(cq, 64) == EOPNOTSUPP, "ibv_resize_cq: EOPNOTSUPP");
    memset(&srq_init, 0, sizeof(srq_init));
    srq_init.attr.max_wr  = 16;
    srq_init.attr.max_sge = 1;
    srq = ibv_create_srq(pd, &srq_init);
    check(srq != NULL, "ibv_create_srq");
    if (srq != NULL) {
        memset(&srq_attr, 0, sizeof(srq_attr));
        check(ibv_query_srq(srq, &srq_attr) == EOPNOTSUPP,
              "ibv_query_srq: EOPNOTSUPP");
        srq_attr.srq_limit = 4;
        check(ibv_modify_srq(srq, &srq_attr, IBV_SRQ_LIMIT) == EOPNOTSUPP,
              "ibv_modify_srq: EOPNOTSUPP");
        check(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
    }
    errno = 0;
    check((ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, 0) == NULL) &&
          (errno == EOPNOTSUPP), "ibv_reg_dmabuf_mr: EOPNOTSUPP");

    check(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
    check(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
    check((ibv_close_device(eth) == 0) && (ibv_close_device(ib) == 0),
          "ibv_close_device");

    printf("checked %d entry points, %d failed\n", checked, failures);
    return (failures == 0) ? 0 : 1;
}
