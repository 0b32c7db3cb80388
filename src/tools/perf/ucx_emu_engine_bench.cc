/*
 * ucx_emu_engine_bench: the rate at which the emulated device's engine
 * executes 8-byte SENDs between two DevX RC QPs in one process (mlx5_0 ->
 * mlx5_1 of the emulator's default topology), so that a benchmark of the
 * library never measures the emulator instead.
 *
 * The sender writes inline SEND WQEs (one basic block each, every 64th
 * signaled) and rings the doorbell record; the receiver keeps its receive
 * queue full; both poll their CQs as an mlx5dv user does. Two runs:
 *  - thread: the engine on its own thread notices the doorbells;
 *  - step:   the engine runs in the caller's thread after each batch (the
 *            engine alone, without the handoff between threads).
 *
 * Usage: ucx_emu_engine_bench [-n MESSAGES]   (default 2000000)
 * Emulated device only; build without --enable-debug to measure.
 */
#include <uct/ib/glue/glue.h>
#include <uct/ib/mlx5/dv/qp_cmd.h>
#include <uct/ib/mlx5/dv/wqe_ext.h>
#include <uct/ib/mlx5/emu/emu.h>

#include <infiniband/mlx5dv.h>

#include <endian.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>


namespace {

constexpr unsigned LOG_SQ     = 10;  /* 1024 basic blocks */
constexpr unsigned LOG_RQ     = 10;  /* 1024 receive WQEs of 16 bytes */
constexpr unsigned SQ_BBS     = 1u << LOG_SQ;
constexpr unsigned RQ_WQES    = 1u << LOG_RQ;
constexpr unsigned RQ_STRIDE  = 16;
constexpr unsigned CQ_ENTRIES = 4095;
constexpr unsigned BATCH      = 64;  /* SENDs per doorbell, one signaled */
constexpr unsigned MSG_SIZE   = 8;

struct side {
    struct ibv_context      *ctx  = nullptr;
    struct ibv_pd           *pd   = nullptr;
    struct ibv_cq           *cq   = nullptr;
    struct mlx5dv_cq        dvcq  = {};
    struct mlx5dv_devx_uar  *uar  = nullptr;
    void                    *buf  = nullptr; /* RQ, SQ, doorbell record */
    size_t                  len   = 0;
    struct mlx5dv_devx_umem *umem = nullptr;
    struct mlx5dv_devx_obj  *qp   = nullptr;
    uint32_t                qpn   = 0;
    std::vector<uint64_t>   rbuf;
    struct ibv_mr           *mr   = nullptr;
    uint32_t                cq_ci = 0;
    uint16_t                sq_pi = 0;
    uint16_t                rq_pi = 0;

    uint8_t *rq()
    {
        return static_cast<uint8_t*>(buf);
    }

    uint8_t *sq()
    {
        return rq() + size_t(RQ_WQES) * RQ_STRIDE;
    }

    uint32_t *dbrec()
    {
        return reinterpret_cast<uint32_t*>(sq() + size_t(SQ_BBS) * 64);
    }
};

bool fail(const char *what)
{
    fprintf(stderr, "ucx_emu_engine_bench: %s failed: %m\n", what);
    return false;
}

struct ibv_device *find_device(const char *name)
{
    int num = 0;
    struct ibv_device **list = uct_ib_glue->get_device_list(&num);
    struct ibv_device *found = nullptr;

    for (int i = 0; (list != nullptr) && (i < num); ++i) {
        if (!strcmp(uct_ib_glue->get_device_name(list[i]), name)) {
            found = list[i];
        }
    }
    if (list != nullptr) {
        uct_ib_glue->free_device_list(list);
    }
    return found;
}

uint32_t pdn_of(struct ibv_pd *pd)
{
    struct mlx5dv_pd dvpd = {};
    struct mlx5dv_obj obj = {};

    obj.pd.in  = pd;
    obj.pd.out = &dvpd;
    return (uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD) == 0) ?
           dvpd.pdn : 0;
}

bool setup(side &s, const char *dev_name)
{
    struct ibv_device *dev = find_device(dev_name);
    struct mlx5dv_obj obj  = {};
    uct_ib_mlx5_create_qp_params_t params = {};
    uct_ib_mlx5_create_qp_in_t in;
    uct_ib_mlx5_create_qp_out_t out;

    if ((dev == nullptr) ||
        (uct_ib_glue_open_device(dev, 1, &s.ctx, nullptr) != UCS_OK)) {
        return fail("open_device");
    }
    s.pd = uct_ib_glue->alloc_pd(s.ctx);
    s.cq = uct_ib_glue->create_cq(s.ctx, CQ_ENTRIES, nullptr, nullptr, 0);
    s.uar = uct_ib_glue->devx_alloc_uar(s.ctx, MLX5DV_UAR_ALLOC_TYPE_BF);
    if ((s.pd == nullptr) || (s.cq == nullptr) || (s.uar == nullptr)) {
        return fail("pd/cq/uar");
    }
    obj.cq.in  = s.cq;
    obj.cq.out = &s.dvcq;
    if (uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ) != 0) {
        return fail("mlx5dv_init_obj(cq)");
    }

    s.len = size_t(RQ_WQES) * RQ_STRIDE + size_t(SQ_BBS) * 64 + 64;
    if (posix_memalign(&s.buf, 4096, s.len) != 0) {
        return fail("posix_memalign");
    }
    memset(s.buf, 0, s.len);
    s.umem = uct_ib_glue->devx_umem_reg(s.ctx, s.buf, s.len,
                                        IBV_ACCESS_LOCAL_WRITE);
    s.rbuf.assign(RQ_WQES, 0);
    s.mr = uct_ib_glue->reg_mr(s.pd, s.rbuf.data(), s.rbuf.size() * 8,
                               IBV_ACCESS_LOCAL_WRITE);
    if ((s.umem == nullptr) || (s.mr == nullptr)) {
        return fail("umem/mr");
    }

    params.pdn           = pdn_of(s.pd);
    params.cqn_snd       = s.dvcq.cqn;
    params.cqn_rcv       = s.dvcq.cqn;
    params.uar_page      = s.uar->page_id;
    params.log_sq_size   = LOG_SQ;
    params.log_rq_size   = LOG_RQ;
    params.log_rq_stride = 0;
    params.has_rq        = true;
    params.umem_id       = s.umem->umem_id;
    params.dbr_offset    = size_t(RQ_WQES) * RQ_STRIDE + size_t(SQ_BBS) * 64;
    if (uct_ib_mlx5_build_create_qp("mlx5_0:1", &params, &in) != UCS_OK) {
        return fail("CREATE_QP parameters");
    }
    s.qp = uct_ib_glue->devx_obj_create(s.ctx, in.data(), in.size(),
                                        out.data(), out.size());
    if (s.qp == nullptr) {
        return fail("CREATE_QP");
    }
    s.qpn = static_cast<uint32_t>(
            uct_mlx5_prm_get<uct_mlx5_prm::create_qp_out::qpn>(out.data()));
    return true;
}

bool connect(side &s, const side &peer, const uct_ib_emu_mac_t &peer_mac)
{
    const uct_ib_mlx5_rdma_access_t access = {true, true, true};
    uct_ib_mlx5_init2rtr_params_t rtr = {};
    uct_ib_mlx5_rtr2rts_params_t rts  = {};
    uct_ib_mlx5_rst2init_in_t init_in;
    uct_ib_mlx5_init2rtr_in_t rtr_in;
    uct_ib_mlx5_rtr2rts_in_t rts_in;
    uct_ib_mlx5_modify_qp_out_t out;
    struct ibv_gid_entry gid = {};

    if (uct_ib_glue->query_gid_ex(peer.ctx, 1, 3, &gid, 0) != 0) {
        return fail("query_gid_ex");
    }

    if (uct_ib_mlx5_build_rst2init("mlx5_0:1", s.qpn, 1, 0, &access,
                                   &init_in) != UCS_OK) {
        return fail("RST2INIT parameters");
    }
    rtr.qpn                 = s.qpn;
    rtr.remote_qpn          = peer.qpn;
    rtr.port_num            = 1;
    rtr.mtu                 = UCT_MLX5_MTU_1024;
    rtr.log_msg_max         = 30;
    rtr.log_rra_max         = 2;
    rtr.min_rnr_nak         = 1;
    rtr.access              = access;
    rtr.path.eth            = true;
    rtr.path.roce_v2        = true;
    rtr.path.udp_sport      = 0xc000;
    rtr.path.src_addr_index = 3;
    rtr.path.hop_limit      = 64;
    memcpy(rtr.path.rmac, peer_mac.data(), 6);
    memcpy(rtr.path.rgid, gid.gid.raw, 16);
    if (uct_ib_mlx5_build_init2rtr("mlx5_0:1", &rtr, &rtr_in) != UCS_OK) {
        return fail("INIT2RTR parameters");
    }
    rts.qpn         = s.qpn;
    rts.retry_count = 7;
    rts.rnr_retry   = 7;
    rts.ack_timeout = 14;
    rts.log_sra_max = 2;
    if (uct_ib_mlx5_build_rtr2rts("mlx5_0:1", &rts, &rts_in) != UCS_OK) {
        return fail("RTR2RTS parameters");
    }

    if ((uct_ib_glue->devx_obj_modify(s.qp, init_in.data(), init_in.size(),
                                      out.data(), out.size()) != 0) ||
        (uct_ib_glue->devx_obj_modify(s.qp, rtr_in.data(), rtr_in.size(),
                                      out.data(), out.size()) != 0) ||
        (uct_ib_glue->devx_obj_modify(s.qp, rts_in.data(), rts_in.size(),
                                      out.data(), out.size()) != 0)) {
        return fail("modify_qp");
    }
    return true;
}

void teardown(side &s)
{
    if (s.qp != nullptr) {
        uct_ib_glue->devx_obj_destroy(s.qp);
    }
    if (s.mr != nullptr) {
        uct_ib_glue->dereg_mr(s.mr);
    }
    if (s.umem != nullptr) {
        uct_ib_glue->devx_umem_dereg(s.umem);
    }
    if (s.uar != nullptr) {
        uct_ib_glue->devx_free_uar(s.uar);
    }
    if (s.cq != nullptr) {
        uct_ib_glue->destroy_cq(s.cq);
    }
    if (s.pd != nullptr) {
        uct_ib_glue->dealloc_pd(s.pd);
    }
    if (s.ctx != nullptr) {
        uct_ib_glue_close_device(s.ctx);
    }
    free(s.buf);
    s = side();
}

/* Receive WQEs up to a full queue, then the doorbell record */
void refill(side &s, uint32_t received)
{
    uint16_t target = static_cast<uint16_t>(received + RQ_WQES);

    if (s.rq_pi == target) {
        return;
    }
    while (s.rq_pi != target) {
        struct mlx5_wqe_data_seg d;
        unsigned slot = s.rq_pi & (RQ_WQES - 1);

        d.byte_count = htobe32(MSG_SIZE);
        d.lkey       = htobe32(s.mr->lkey);
        d.addr       = htobe64(reinterpret_cast<uintptr_t>(&s.rbuf[slot]));
        memcpy(s.rq() + slot * RQ_STRIDE, &d, sizeof(d));
        ++s.rq_pi;
    }
    __atomic_store_n(&s.dbrec()[MLX5_RCV_DBR], htobe32(s.rq_pi),
                     __ATOMIC_RELEASE);
}

void post_batch(side &s, uint64_t seq)
{
    for (unsigned i = 0; i < BATCH; ++i) {
        uint8_t *wqe = s.sq() + size_t(s.sq_pi & (SQ_BBS - 1)) * 64;
        struct mlx5_wqe_ctrl_seg ctrl = {};
        uint32_t hdr = htobe32(MSG_SIZE | MLX5_INLINE_SEG);
        uint64_t payload = seq + i;

        ctrl.opmod_idx_opcode = htobe32((uint32_t(s.sq_pi) << 8) |
                                        MLX5_OPCODE_SEND);
        ctrl.qpn_ds           = htobe32((s.qpn << 8) | 2);
        ctrl.fm_ce_se         = (i == BATCH - 1) ? MLX5_WQE_CTRL_CQ_UPDATE : 0;
        memcpy(wqe, &ctrl, sizeof(ctrl));
        memcpy(wqe + 16, &hdr, 4);
        memcpy(wqe + 20, &payload, MSG_SIZE);
        ++s.sq_pi;
    }
    __atomic_store_n(&s.dbrec()[MLX5_SND_DBR], htobe32(s.sq_pi),
                     __ATOMIC_RELEASE);
}

/* CQEs polled now; *errors counts the error ones */
unsigned poll(side &s, unsigned *errors)
{
    unsigned n = 0;

    for (;;) {
        uint8_t *cqe = static_cast<uint8_t*>(s.dvcq.buf) +
                       size_t(s.cq_ci & (s.dvcq.cqe_cnt - 1)) * 64;
        uint8_t op_own = __atomic_load_n(cqe + 63, __ATOMIC_ACQUIRE);

        if (((op_own >> 4) == MLX5_CQE_INVALID) ||
            ((op_own & MLX5_CQE_OWNER_MASK) !=
             !!(s.cq_ci & s.dvcq.cqe_cnt))) {
            break;
        }
        if (((op_own >> 4) == MLX5_CQE_REQ_ERR) ||
            ((op_own >> 4) == MLX5_CQE_RESP_ERR)) {
            ++*errors;
        }
        ++s.cq_ci;
        ++n;
    }
    if (n > 0) {
        __atomic_store_n(&s.dvcq.dbrec[UCT_MLX5_CQ_DBR_SET_CI],
                         htobe32(s.cq_ci & 0xffffff), __ATOMIC_RELEASE);
    }
    return n;
}

/* Messages per second, or a negative value on failure */
double run(side &a, side &b, uint64_t messages, bool step)
{
    using clock = std::chrono::steady_clock;
    uint64_t sent = 0, received = 0, acked_batches = 0;
    unsigned errors = 0;
    clock::time_point t0 = clock::now(), last_progress = t0;

    refill(b, 0);
    while (received < messages) {
        /* the send queue holds at most SQ_BBS / BATCH - 1 batches */
        if ((sent < messages) &&
            ((sent / BATCH) - acked_batches < SQ_BBS / BATCH - 1)) {
            post_batch(a, sent);
            sent += BATCH;
        }
        if (step) {
            uct_ib_emu_engine_run();
        }
        unsigned got = poll(b, &errors);
        acked_batches += poll(a, &errors);
        received      += got;
        refill(b, static_cast<uint32_t>(received));
        if (errors > 0) {
            fprintf(stderr, "ucx_emu_engine_bench: %u error CQEs\n", errors);
            return -1;
        }
        if (got > 0) {
            last_progress = clock::now();
        } else if (clock::now() - last_progress > std::chrono::seconds(10)) {
            fprintf(stderr, "ucx_emu_engine_bench: no progress for 10 s "
                    "(%lu of %lu received)\n", (unsigned long)received,
                    (unsigned long)messages);
            return -1;
        }
    }

    double secs = std::chrono::duration<double>(clock::now() - t0).count();
    return received / secs;
}

} // namespace


int main(int argc, char **argv)
{
    const uct_ib_emu_mac_t mac0 = {0x02, 0xc9, 0x00, 0x00, 0x00, 0x01};
    const uct_ib_emu_mac_t mac1 = {0x02, 0xc9, 0x00, 0x00, 0x00, 0x02};
    uint64_t messages = 2000000;
    side a, b;
    int c, rc = 0;

    while ((c = getopt(argc, argv, "n:h")) != -1) {
        switch (c) {
        case 'n':
            messages = strtoull(optarg, nullptr, 0) / BATCH * BATCH;
            break;
        default:
            printf("usage: %s [-n MESSAGES]\n", argv[0]);
            return (c == 'h') ? 0 : 1;
        }
    }
    if (messages == 0) {
        messages = BATCH;
    }

    if ((uct_ib_emu_reset() != UCS_OK) ||
        (uct_ib_glue_install(&uct_ib_emu_glue_ops) != UCS_OK)) {
        fprintf(stderr, "ucx_emu_engine_bench: cannot install the emulated "
                "device\n");
        return 1;
    }

    for (bool step : {false, true}) {
        uct_ib_emu_engine_set_step_mode(step);
        if (!setup(a, "mlx5_0") || !setup(b, "mlx5_1") ||
            !connect(a, b, mac1) || !connect(b, a, mac0)) {
            rc = 1;
        } else {
            double rate = run(a, b, messages, step);
            if (rate < 0) {
                rc = 1;
            } else {
                printf("emulated engine, %s: %lu SENDs of %u bytes, "
                       "%.2f M/s\n", step ? "step mode (engine alone)" :
                       "engine thread", (unsigned long)messages, MSG_SIZE,
                       rate / 1e6);
            }
        }
        teardown(a);
        teardown(b);
    }

    uct_ib_emu_engine_set_step_mode(false);
    uct_ib_glue_install(&uct_ib_glue_rdma_core_ops);
    return rc;
}
