/*
 * The libibverbs and libmlx5 entry points our library does not call, as an
 * unmodified program calls them on the emulated devices (run under the
 * preload by contrib/dropin-check.sh): the GID table, the fork state, the
 * P_Key index, data-in-order, SRQ limits, CQ resize, an AH from an
 * InfiniBand completion and mlx5dv_devx_umem_reg_ex answer as rdma-core
 * documents them, and the operations the model has not got are refused
 * with EOPNOTSUPP, never a crash.
 * Prints one line per check and "checked N entry points"; exit 0 when all
 * passed.
 */
#define _DEFAULT_SOURCE /* htobe16 */

#include <infiniband/mlx5dv.h>
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

/* The address back to the sender of a datagram, from its completion: on
 * InfiniBand its LID, SL and path bits, and with a GRH its GID and our
 * GID's index; on RoCE from the packet's IP header */
static void ah_from_wc(struct ibv_context *ib, struct ibv_context *eth,
                       struct ibv_pd *pd)
{
    struct ibv_wc wc;
    struct ibv_grh grh;
    struct ibv_ah_attr attr;
    struct ibv_ah *ah;

    memset(&wc, 0, sizeof(wc));
    memset(&grh, 0, sizeof(grh));
    wc.slid           = 0x11;
    wc.sl             = 3;
    wc.dlid_path_bits = 1;
    check((ibv_init_ah_from_wc(ib, 1, &wc, &grh, &attr) == 0) &&
          (attr.dlid == 0x11) && (attr.sl == 3) &&
          (attr.src_path_bits == 1) && !attr.is_global,
          "ibv_init_ah_from_wc: LID, SL and path bits");

    wc.wc_flags             = IBV_WC_GRH;
    grh.version_tclass_flow = htobe32((6u << 28) | (0x20u << 20) | 0x12345);
    grh.sgid.raw[0]         = 0xfe;
    grh.sgid.raw[1]         = 0x80;
    grh.sgid.raw[15]        = 0x11;
    check(ibv_query_gid(ib, 1, 0, &grh.dgid) == 0, "ibv_query_gid");
    check((ibv_init_ah_from_wc(ib, 1, &wc, &grh, &attr) == 0) &&
          attr.is_global && (attr.grh.sgid_index == 0) &&
          (attr.grh.flow_label == 0x12345) &&
          (attr.grh.traffic_class == 0x20) &&
          (memcmp(&attr.grh.dgid, &grh.sgid, sizeof(grh.sgid)) == 0),
          "ibv_init_ah_from_wc: the GRH's GIDs, flow label and class");
    ah = ibv_create_ah_from_wc(pd, &wc, &grh, 1);
    check(ah != NULL, "ibv_create_ah_from_wc");
    if (ah != NULL) {
        check(ibv_destroy_ah(ah) == 0, "ibv_destroy_ah");
    }

    /* RoCE, an IPv6-form GRH: its GIDs, our RoCEv1 GID of that address */
    memset(&grh, 0, sizeof(grh));
    grh.version_tclass_flow = htobe32((6u << 28) | (0x08u << 20) | 0x777);
    grh.sgid.raw[0]         = 0xfe;
    grh.sgid.raw[1]         = 0x80;
    grh.sgid.raw[15]        = 0x22;
    check(ibv_query_gid(eth, 1, 0, &grh.dgid) == 0, "ibv_query_gid");
    check((ibv_init_ah_from_wc(eth, 1, &wc, &grh, &attr) == 0) &&
          attr.is_global && (attr.grh.sgid_index == 0) &&
          (attr.grh.flow_label == 0x777) && (attr.grh.traffic_class == 0x08) &&
          (memcmp(&attr.grh.dgid, &grh.sgid, sizeof(grh.sgid)) == 0),
          "ibv_init_ah_from_wc on RoCE, IPv6 GRH: our RoCEv1 GID's index");

    /* RoCEv2 over IPv4: the IPv4 header in the GRH's last 20 bytes */
    {
        union ibv_gid ours, theirs;
        uint8_t *ip = (uint8_t *)&grh + 20;
        uint32_t sum = 0;
        int i;

        check(ibv_query_gid(eth, 1, 3, &ours) == 0, "ibv_query_gid");
        memset(&grh, 0, sizeof(grh));
        ip[0] = 0x45;
        ip[1] = 0x68;                   /* TOS: DSCP 26 */
        ip[8] = 64;                     /* TTL */
        ip[9] = 17;                     /* UDP */
        ip[12] = 198; ip[13] = 18; ip[14] = 7; ip[15] = 9; /* source */
        memcpy(ip + 16, &ours.raw[12], 4);                 /* destination */
        for (i = 0; i < 20; i += 2) {
            sum += ((uint32_t)ip[i] << 8) | ip[i + 1];
        }
        while (sum >> 16) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        ip[10] = (uint8_t)(~sum >> 8);
        ip[11] = (uint8_t)~sum;
        theirs = ours;
        memcpy(&theirs.raw[12], ip + 12, 4);
        check((ibv_init_ah_from_wc(eth, 1, &wc, &grh, &attr) == 0) &&
              attr.is_global && (attr.grh.sgid_index == 3) &&
              (attr.grh.traffic_class == 0x68) &&
              (memcmp(&attr.grh.dgid, &theirs, sizeof(theirs)) == 0),
              "ibv_init_ah_from_wc on RoCE, IPv4 header: our RoCEv2 GID's index");
        ip[11] ^= 1;
        check(ibv_init_ah_from_wc(eth, 1, &wc, &grh, &attr) == EPROTONOSUPPORT,
              "ibv_init_ah_from_wc on RoCE: a header neither IPv4 nor IPv6");
    }
}

/* libmlx5: a umem with a page size bitmap; refusals of DR steering, the
 * clock and the port query */
static void mlx5_entry_points(void)
{
    struct mlx5dv_context_attr dv_attr = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};
    struct ibv_device **list = ibv_get_device_list(NULL);
    struct mlx5dv_devx_umem_in in;
    struct mlx5dv_devx_umem *umem;
    struct mlx5dv_clock_info clock;
    struct mlx5dv_port port;
    struct ibv_context *ctx;
    static char region[8192] __attribute__((aligned(4096)));

    ctx = ((list != NULL) && (list[0] != NULL)) ?
          mlx5dv_open_device(list[0], &dv_attr) : NULL;
    check(ctx != NULL, "mlx5dv_open_device with DevX");
    if (list != NULL) {
        ibv_free_device_list(list);
    }
    if (ctx == NULL) {
        return;
    }

    memset(&in, 0, sizeof(in));
    in.addr        = region;
    in.size        = sizeof(region);
    in.access      = IBV_ACCESS_LOCAL_WRITE;
    in.pgsz_bitmap = ~0ull;
    umem = mlx5dv_devx_umem_reg_ex(ctx, &in);
    check(umem != NULL, "mlx5dv_devx_umem_reg_ex");
    if (umem != NULL) {
        check(mlx5dv_devx_umem_dereg(umem) == 0, "mlx5dv_devx_umem_dereg");
    }
    in.pgsz_bitmap = 1ull << 21; /* only 2 MiB pages */
    check((mlx5dv_devx_umem_reg_ex(ctx, &in) == NULL) && (errno == EINVAL),
          "mlx5dv_devx_umem_reg_ex: EINVAL for pages above the memory's");

    errno = 0;
    check((mlx5dv_dr_domain_create(ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_RX) ==
           NULL) && (errno == EOPNOTSUPP),
          "mlx5dv_dr_domain_create: EOPNOTSUPP");
    check(mlx5dv_get_clock_info(ctx, &clock) == EOPNOTSUPP,
          "mlx5dv_get_clock_info: EOPNOTSUPP");
    check(mlx5dv_query_port(ctx, 1, &port) == EOPNOTSUPP,
          "mlx5dv_query_port: EOPNOTSUPP");
    check(ibv_close_device(ctx) == 0, "ibv_close_device (DevX)");
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
    check((ibv_resize_cq(cq, 64) == 0) && (cq->cqe >= 64),
          "ibv_resize_cq: a larger ring");
    memset(&srq_init, 0, sizeof(srq_init));
    srq_init.attr.max_wr  = 16;
    srq_init.attr.max_sge = 1;
    srq = ibv_create_srq(pd, &srq_init);
    check(srq != NULL, "ibv_create_srq");
    if (srq != NULL) {
        memset(&srq_attr, 0, sizeof(srq_attr));
        check((ibv_query_srq(srq, &srq_attr) == 0) &&
              (srq_attr.max_wr >= 16) && (srq_attr.srq_limit == 0),
              "ibv_query_srq: max_wr, no limit armed");
        srq_attr.srq_limit = 4;
        check(ibv_modify_srq(srq, &srq_attr, IBV_SRQ_LIMIT) == 0,
              "ibv_modify_srq: the limit armed");
        check((ibv_query_srq(srq, &srq_attr) == 0) &&
              (srq_attr.srq_limit == 4), "ibv_query_srq: the limit");
        check(ibv_modify_srq(srq, &srq_attr, IBV_SRQ_MAX_WR) == EINVAL,
              "ibv_modify_srq: EINVAL for a resize, as mlx5");
        check(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
    }
    errno = 0;
    check((ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, 0) == NULL) &&
          (errno == EOPNOTSUPP), "ibv_reg_dmabuf_mr: EOPNOTSUPP");

    ah_from_wc(ib, eth, pd);
    check(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
    mlx5_entry_points();
    check(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
    check((ibv_close_device(eth) == 0) && (ibv_close_device(ib) == 0),
          "ibv_close_device");

    printf("checked %d entry points, %d failed\n", checked, failures);
    return (failures == 0) ? 0 : 1;
}
