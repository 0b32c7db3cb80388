/*
 * ucx_emu_engine_bench: the rate at which the emulated device's engine
 * executes 8-byte SENDs between two RC QPs in one process (mlx5_0 ->
 * mlx5_1 of the emulator's default topology, RoCEv2), so that a benchmark
 * of the library never measures the emulator instead. The QPs are verbs
 * QPs whose rings the benchmark writes and reads itself (mlx5dv_init_obj),
 * which the engine executes exactly as those of DevX QPs.
 *
 * The sender writes inline SEND WQEs (one basic block each, every 64th
 * signaled) and rings the doorbell record; the receiver keeps its receive
 * queue full; both poll their CQs as an mlx5dv user does. Two runs:
 *  - thread: the engine on its own thread notices the doorbells;
 *  - step:   the engine runs in the caller's thread after each batch (the
 *            engine alone, without the handoff between threads).
 *
 * Usage: ucx_emu_engine_bench [-n MESSAGES] [-m thread|step]
 *   -n  messages per run (default 2000000)
 *   -m  only this run (default both; "step" is the one to profile)
 * Each run's line says whether it reaches the target of 2 M/s.
 * Emulated device only, private to the process (it sets
 * UCX_IB_EMU_FABRIC=none); build without --enable-debug to measure.
 */
#include <uct/api/tools/ib_mlx5_ring.h>
#include <uct/api/tools/ib_glue.h>
#include <emu/api/emu.h>

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

constexpr unsigned LOG_SQ     = 12;  /* 4096 basic blocks */
constexpr unsigned LOG_RQ     = 12;  /* 4096 receive WQEs of 16 bytes */
constexpr unsigned SQ_BBS     = 1u << LOG_SQ;
constexpr unsigned RQ_WQES    = 1u << LOG_RQ;
constexpr unsigned RQ_STRIDE  = 16;
constexpr unsigned CQ_ENTRIES = 4095;
constexpr unsigned BATCH      = 64;  /* SENDs per doorbell, one signaled */
constexpr unsigned MSG_SIZE   = 8;
constexpr double   TARGET     = 2e6; /* SENDs per second */

struct side {
    struct ibv_context    *ctx  = nullptr;
    struct ibv_pd         *pd   = nullptr;
    struct ibv_cq         *cq   = nullptr;
    struct mlx5dv_cq      dvcq  = {};
    struct ibv_qp         *qp   = nullptr;
    struct mlx5dv_qp      dvqp  = {};
    std::vector<uint64_t> rbuf;
    struct ibv_mr         *mr   = nullptr;
    uint32_t              cq_ci = 0;
    uint16_t              sq_pi = 0;
    uint16_t              rq_pi = 0;

    uint8_t *rq()
    {
        return static_cast<uint8_t*>(dvqp.rq.buf);
    }

    uint8_t *sq()
    {
        return static_cast<uint8_t*>(dvqp.sq.buf);
    }

    uint32_t *dbrec()
    {
        return reinterpret_cast<uint32_t*>(dvqp.dbrec);
    }
};

bool fail(const char *what, const char *dev)
{
    fprintf(stderr, "ucx_emu_engine_bench: %s failed on %s:1: %m\n", what,
            dev);
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

/* A verbs RC QP whose rings the benchmark writes itself (mlx5dv_init_obj),
 * as an mlx5dv user of a verbs QP does */
bool setup(side &s, const char *dev_name)
{
    struct ibv_device *dev = find_device(dev_name);
    struct ibv_qp_init_attr attr = {};
    struct mlx5dv_obj obj  = {};

    if ((dev == nullptr) ||
        (uct_ib_glue_open_device(dev, 1, &s.ctx, nullptr) != UCS_OK)) {
        return fail("open_device", dev_name);
    }
    s.pd = uct_ib_glue->alloc_pd(s.ctx);
    s.cq = uct_ib_glue->create_cq(s.ctx, CQ_ENTRIES, nullptr, nullptr, 0);
    if ((s.pd == nullptr) || (s.cq == nullptr)) {
        return fail("alloc_pd/create_cq", dev_name);
    }

    attr.send_cq             = s.cq;
    attr.recv_cq             = s.cq;
    attr.qp_type             = IBV_QPT_RC;
    attr.cap.max_send_wr     = SQ_BBS;
    attr.cap.max_recv_wr     = RQ_WQES;
    attr.cap.max_send_sge    = 1;
    attr.cap.max_recv_sge    = 1;
    attr.cap.max_inline_data = MSG_SIZE;
    s.qp = uct_ib_glue->create_qp(s.pd, &attr);
    if (s.qp == nullptr) {
        return fail("create_qp", dev_name);
    }

    obj.cq.in  = s.cq;
    obj.cq.out = &s.dvcq;
    obj.qp.in  = s.qp;
    obj.qp.out = &s.dvqp;
    if (uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ | MLX5DV_OBJ_QP) != 0) {
        return fail("mlx5dv_init_obj", dev_name);
    }
    if ((s.dvqp.sq.wqe_cnt != SQ_BBS) || (s.dvqp.rq.wqe_cnt != RQ_WQES) ||
        (s.dvqp.rq.stride != RQ_STRIDE)) {
        errno = EINVAL;
        return fail("queue geometry", dev_name);
    }

    s.rbuf.assign(RQ_WQES, 0);
    s.mr = uct_ib_glue->reg_mr(s.pd, s.rbuf.data(), s.rbuf.size() * 8,
                               IBV_ACCESS_LOCAL_WRITE);
    return (s.mr != nullptr) || fail("reg_mr", dev_name);
}

bool connect(side &s, const side &peer, const char *dev_name)
{
    struct ibv_gid_entry gid = {};
    struct ibv_qp_attr attr  = {};

    if (uct_ib_glue->query_gid_ex(peer.ctx, 1, 3, &gid, 0) != 0) {
        return fail("query_gid_ex", dev_name);
    }

    attr.qp_state        = IBV_QPS_INIT;
    attr.port_num        = 1;
    attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    if (uct_ib_glue->modify_qp(s.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                               IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0) {
        return fail("modify_qp(INIT)", dev_name);
    }

    attr                        = {};
    attr.qp_state               = IBV_QPS_RTR;
    attr.path_mtu               = IBV_MTU_1024;
    attr.dest_qp_num            = peer.qp->qp_num;
    attr.max_dest_rd_atomic     = 4;
    attr.min_rnr_timer          = 1;
    attr.ah_attr.is_global      = 1;
    attr.ah_attr.port_num       = 1;
    attr.ah_attr.grh.dgid       = gid.gid;
    attr.ah_attr.grh.sgid_index = 3;
    attr.ah_attr.grh.hop_limit  = 64;
    if (uct_ib_glue->modify_qp(s.qp, &attr, IBV_QP_STATE | IBV_QP_AV |
                               IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                               IBV_QP_MIN_RNR_TIMER) != 0) {
        return fail("modify_qp(RTR)", dev_name);
    }

    attr               = {};
    attr.qp_state      = IBV_QPS_RTS;
    attr.timeout       = 14;
    attr.retry_cnt     = 7;
    attr.rnr_retry     = 7;
    attr.max_rd_atomic = 4;
    if (uct_ib_glue->modify_qp(s.qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
                               IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT |
                               IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT) != 0) {
        return fail("modify_qp(RTS)", dev_name);
    }
    return true;
}

void teardown(side &s)
{
    if (s.qp != nullptr) {
        uct_ib_glue->destroy_qp(s.qp);
    }
    if (s.mr != nullptr) {
        uct_ib_glue->dereg_mr(s.mr);
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
        ctrl.qpn_ds           = htobe32((s.qp->qp_num << 8) | 2);
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
    unsigned idle = 0;

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
            idle = 0;
        } else if ((++idle % 4096) != 0) {
            continue;
        } else if (idle == 4096) {
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
    uint64_t messages = 2000000;
    bool runs[2]      = {true, true}; /* thread, step */
    side a, b;
    int c, rc = 0;

    while ((c = getopt(argc, argv, "n:m:h")) != -1) {
        switch (c) {
        case 'n':
            messages = strtoull(optarg, nullptr, 0) / BATCH * BATCH;
            break;
        case 'm':
            if (strcmp(optarg, "thread") && strcmp(optarg, "step")) {
                fprintf(stderr, "ucx_emu_engine_bench: -m thread or step\n");
                return 1;
            }
            runs[0] = !strcmp(optarg, "thread");
            runs[1] = !runs[0];
            break;
        default:
            printf("usage: %s [-n MESSAGES] [-m thread|step]\n", argv[0]);
            return (c == 'h') ? 0 : 1;
        }
    }
    if (messages == 0) {
        messages = BATCH;
    }

    /* the engine of one process, on devices of its own: step mode and the
     * default topology are not for a shared fabric */
    setenv("UCX_IB_EMU_FABRIC", "none", 1);
    if ((uct_ib_emu_reset() != UCS_OK) ||
        (uct_ib_glue_install(&uct_ib_emu_glue_ops) != UCS_OK)) {
        fprintf(stderr, "ucx_emu_engine_bench: cannot install the emulated "
                "device\n");
        return 1;
    }

    for (bool step : {false, true}) {
        if (!runs[step]) {
            continue;
        }
        uct_ib_emu_engine_set_step_mode(step);
        if (!setup(a, "mlx5_0") || !setup(b, "mlx5_1") ||
            !connect(a, b, "mlx5_0") || !connect(b, a, "mlx5_1")) {
            rc = 1;
        } else {
            double rate = run(a, b, messages, step);
            if (rate < 0) {
                rc = 1;
            } else {
                printf("emulated engine, %s: %lu SENDs of %u bytes, "
                       "%.2f M/s (target %.0f M/s: %s)\n",
                       step ? "step mode (engine alone)" : "engine thread",
                       (unsigned long)messages, MSG_SIZE, rate / 1e6,
                       TARGET / 1e6, (rate >= TARGET) ? "met" : "not met");
            }
        }
        teardown(a);
        teardown(b);
    }

    uct_ib_emu_engine_set_step_mode(false);
    uct_ib_glue_install(&uct_ib_glue_rdma_core_ops);
    return rc;
}
