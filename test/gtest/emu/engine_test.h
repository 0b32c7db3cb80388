/*
 * Shared pieces of the engine's tests: two DevX RC QPs connected over the
 * emulated RoCE fabric (mlx5_0 <-> mlx5_1), WQEs built by the test from the
 * published formats of infiniband/mlx5dv.h, and CQEs polled by the test as
 * an mlx5dv user does. No library transport code is involved.
 */
#ifndef UCT_IB_MLX5_ENGINE_TEST_H_
#define UCT_IB_MLX5_ENGINE_TEST_H_

#include "emu/emu_test.h"

#include <emu/api/dropin.h>

#include <uct/ib/mlx5/dv/wqe_ext.h>

#include <infiniband/mlx5dv.h>

#include <sstream>


namespace emu_test {

/* A QP with its queues, as its user sees them */
struct engine_qp {
    devx_env         env;
    devx_qp          qp;
    struct mlx5dv_cq cq       = {};
    uint16_t         sq_pi    = 0;  /* basic blocks posted */
    uint16_t         rq_pi    = 0;  /* receive WQEs posted */
    uint32_t         cq_ci    = 0;
    uint8_t          port_gid = 1;  /* RoCEv2 */

    static constexpr size_t RQ_BYTES = (size_t(16) << 2) << 6;
    static constexpr unsigned SQ_BBS = 1u << 6;

    uint8_t *sq_buf()
    {
        return env.wq_buf.data() + RQ_BYTES;
    }

    uint8_t *rq_buf()
    {
        return env.wq_buf.data();
    }

    uint32_t *dbrec()
    {
        return reinterpret_cast<uint32_t*>(env.dbr_buf.data());
    }
};

/* A CQE as the test read it: the raw 64 bytes and the decoded fields */
struct polled_cqe {
    uint8_t  raw[64];
    uint8_t  opcode;
    uint8_t  syndrome;
    uint8_t  vendor_syndrome;
    uint8_t  sop;
    uint32_t qpn;
    uint16_t wqe_counter;
    uint32_t byte_cnt;
    uint32_t imm; /* host order */
};

/* What the fixture's connect() puts in the QPC */
struct qp_params {
    uint8_t retry_count = 7;
    uint8_t rnr_retry   = 7;
    uint8_t ack_timeout = 14;
    uint8_t min_rnr_nak = 12;
    uint8_t mtu         = 3;  /* 1024 */
    uint8_t rae         = 1;
    uint8_t log_sra_max = 2;  /* 4 reads/atomics in flight */
    uint8_t log_rra_max = 2;
};

class engine_fixture : public emu_fixture {
protected:
    /* RoCE MTU of the fixture's QPs: 1024 (code 3) */
    static constexpr uint32_t MTU = 1024;

    void init() override
    {
        emu_fixture::init();
        ASSERT_EQ(UCS_OK, uct_ib_emu_engine_set_step_mode(true));
        m_ctx0 = open("mlx5_0");
        m_ctx1 = open("mlx5_1");
        ASSERT_NE(nullptr, m_ctx0);
        ASSERT_NE(nullptr, m_ctx1);
    }

    void cleanup() override
    {
        for (auto &mr : m_mrs) {
            EXPECT_EQ(0, uct_ib_glue->dereg_mr(mr));
        }
        m_mrs.clear();
        for (engine_qp *q : m_qps) {
            destroy(*q);
        }
        m_qps.clear();
        emu_fixture::cleanup();
        EXPECT_EQ(UCS_OK, uct_ib_emu_engine_set_step_mode(false));
    }

    /* The CQ of a DevX QP's set-up, as mlx5dv_create_cq makes it */
    struct dv_cq_spec {
        uint32_t cqe_size = 64;
        uint32_t flags    = 0; /* ibv_create_cq_attr_flags */
    };

    /* A DevX QP on ctx, in RST; prepare may change its CREATE_QP, and
     * cq_spec asks for a CQ of mlx5dv_create_cq instead of ibv_create_cq */
    void create(engine_qp &q, struct ibv_context *ctx,
                const std::function<void(prm_buf&)> &prepare = nullptr,
                const dv_cq_spec *cq_spec = nullptr)
    {
        env_init(q.env, ctx);
        if (cq_spec != nullptr) {
            struct ibv_cq_init_attr_ex attr   = {};
            struct mlx5dv_cq_init_attr mattr = {};

            ASSERT_EQ(0, uct_ib_glue->destroy_cq(q.env.cq));
            attr.cqe        = 128;
            attr.comp_mask  = IBV_CQ_INIT_ATTR_MASK_FLAGS;
            attr.flags      = cq_spec->flags;
            mattr.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
            mattr.cqe_size  = cq_spec->cqe_size;
            struct ibv_cq_ex *cq = uct_ib_emu_dropin_ops.create_cq(ctx, &attr,
                                                                   &mattr);
            ASSERT_NE(nullptr, cq) << strerror(errno);
            q.env.cq  = ibv_cq_ex_to_cq(cq);
            q.env.cqn = dv_cq(q.env.cq).cqn;
        }
        q.cq       = dv_cq(q.env.cq);
        prm_buf in = create_qp_cmd(q.env);
        if (prepare) {
            prepare(in);
        }
        q.qp = create_qp(q.env, in);
        ASSERT_NE(nullptr, q.qp.obj);
        m_qps.push_back(&q);
    }

    void destroy(engine_qp &q)
    {
        if (q.qp.obj != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(q.qp.obj));
            q.qp.obj = nullptr;
        }
        if (q.env.ctx != nullptr) {
            env_cleanup(q.env);
        }
    }


    /* RST -> INIT -> RTR -> RTS towards the peer's current address */
    void connect(engine_qp &q, const engine_qp &peer,
                 const uct_ib_emu_mac_t &peer_mac, const qp_params &p)
    {
        prm_buf init = rst2init_cmd(q.qp.qpn);
        init.set(prm::QPC + prm::qpc::rae, p.rae);
        ASSERT_EQ(0, modify(q.qp, init));

        prm_buf rtr = init2rtr_roce_cmd(q.qp.qpn, peer.qp.qpn, peer_mac,
                                        gid_of(peer.env.ctx, 1, q.port_gid),
                                        q.port_gid);
        rtr.set(prm::QPC + prm::qpc::mtu, p.mtu);
        rtr.set(prm::QPC + prm::qpc::min_rnr_nak, p.min_rnr_nak);
        rtr.set(prm::QPC + prm::qpc::log_rra_max, p.log_rra_max);
        ASSERT_EQ(0, modify(q.qp, rtr));

        prm_buf rts = rtr2rts_cmd(q.qp.qpn);
        rts.set(prm::QPC + prm::qpc::retry_count, p.retry_count);
        rts.set(prm::QPC + prm::qpc::rnr_retry, p.rnr_retry);
        rts.set(prm::QPC + prm::qpc::log_sra_max, p.log_sra_max);
        rts.set(prm::QPC + prm::qpc::PRIMARY_PATH + prm::ads::ack_timeout,
                p.ack_timeout);
        ASSERT_EQ(0, modify(q.qp, rts));
    }

    /* Two connected QPs: a on mlx5_0, b on mlx5_1 */
    void connect_pair(engine_qp &a, engine_qp &b,
                      const qp_params &p = qp_params())
    {
        create(a, m_ctx0);
        create(b, m_ctx1);
        connect(a, b, MAC_MLX5_1, p);
        connect(b, a, MAC_MLX5_0, p);
    }

    struct ibv_mr *reg(engine_qp &q, void *buf, size_t len,
                       int access = IBV_ACCESS_LOCAL_WRITE |
                                    IBV_ACCESS_REMOTE_WRITE |
                                    IBV_ACCESS_REMOTE_READ |
                                    IBV_ACCESS_REMOTE_ATOMIC)
    {
        struct ibv_mr *mr = uct_ib_glue->reg_mr(q.env.pd, buf, len, access);

        EXPECT_NE(nullptr, mr);
        if (mr != nullptr) {
            m_mrs.push_back(mr);
        }
        return mr;
    }

    /* ---- WQE building, by the published formats ---- */

    /* Copy a WQE of whole 16-byte segments into the ring at sq_pi, wrapping
     * at the ring's end, and advance sq_pi by its basic blocks */
    static void post_raw(engine_qp &q, const std::vector<uint8_t> &wqe)
    {
        size_t ring = size_t(engine_qp::SQ_BBS) * MLX5_SEND_WQE_BB;
        size_t at   = size_t(q.sq_pi % engine_qp::SQ_BBS) * MLX5_SEND_WQE_BB;

        for (size_t i = 0; i < wqe.size(); ++i) {
            q.sq_buf()[(at + i) % ring] = wqe[i];
        }
        q.sq_pi += (wqe.size() + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
    }

    /* The doorbell record: release, so the WQEs are visible before it */
    static void ring_sq(engine_qp &q)
    {
        __atomic_store_n(&q.dbrec()[MLX5_SND_DBR], htobe32(q.sq_pi),
                         __ATOMIC_RELEASE);
    }

    static void ring_rq(engine_qp &q)
    {
        __atomic_store_n(&q.dbrec()[MLX5_RCV_DBR], htobe32(q.rq_pi),
                         __ATOMIC_RELEASE);
    }

    template <typename T>
    static void append(std::vector<uint8_t> &wqe, const T &seg)
    {
        const uint8_t *p = reinterpret_cast<const uint8_t*>(&seg);
        wqe.insert(wqe.end(), p, p + sizeof(seg));
    }

    /* A control segment; ds is filled in by finish() */
    static std::vector<uint8_t> ctrl(const engine_qp &q, uint8_t opcode,
                                     bool signaled = true, uint32_t imm = 0,
                                     uint8_t opmod = 0)
    {
        struct mlx5_wqe_ctrl_seg c = {};
        std::vector<uint8_t> wqe;

        c.opmod_idx_opcode = htobe32((uint32_t(opmod) << 24) |
                                     (uint32_t(q.sq_pi) << 8) | opcode);
        c.qpn_ds           = htobe32(q.qp.qpn << 8);
        c.fm_ce_se         = signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0;
        c.imm              = htobe32(imm);
        append(wqe, c);
        return wqe;
    }

    static void raddr(std::vector<uint8_t> &wqe, const void *addr,
                      uint32_t rkey)
    {
        struct mlx5_wqe_raddr_seg r = {};

        r.raddr = htobe64(reinterpret_cast<uintptr_t>(addr));
        r.rkey  = htobe32(rkey);
        append(wqe, r);
    }

    static void data(std::vector<uint8_t> &wqe, const void *addr,
                     uint32_t len, uint32_t lkey)
    {
        struct mlx5_wqe_data_seg d = {};

        d.byte_count = htobe32(len);
        d.lkey       = htobe32(lkey);
        d.addr       = htobe64(reinterpret_cast<uintptr_t>(addr));
        append(wqe, d);
    }

    static void inline_data(std::vector<uint8_t> &wqe, const void *src,
                            uint32_t len)
    {
        uint32_t hdr = htobe32(len | MLX5_INLINE_SEG);
        const uint8_t *p = static_cast<const uint8_t*>(src);

        wqe.insert(wqe.end(), reinterpret_cast<uint8_t*>(&hdr),
                   reinterpret_cast<uint8_t*>(&hdr) + 4);
        wqe.insert(wqe.end(), p, p + len);
        wqe.resize((wqe.size() + 15) / 16 * 16, 0);
    }

    /* Set ds from the WQE's size */
    static std::vector<uint8_t> &finish(std::vector<uint8_t> &wqe,
                                        const engine_qp &q)
    {
        struct mlx5_wqe_ctrl_seg c;

        memcpy(&c, wqe.data(), sizeof(c));
        c.qpn_ds = htobe32((q.qp.qpn << 8) | (wqe.size() / 16));
        memcpy(wqe.data(), &c, sizeof(c));
        return wqe;
    }

    void post(engine_qp &q, std::vector<uint8_t> wqe)
    {
        post_raw(q, finish(wqe, q));
        ring_sq(q);
    }

    /* A SEND of len bytes at src, inline or gathered through lkey */
    void post_send_inline(engine_qp &q, const void *src, uint32_t len)
    {
        auto wqe = ctrl(q, MLX5_OPCODE_SEND);

        inline_data(wqe, src, len);
        post(q, wqe);
    }

    void post_send(engine_qp &q, const void *src, uint32_t len, uint32_t lkey)
    {
        auto wqe = ctrl(q, MLX5_OPCODE_SEND);

        data(wqe, src, len, lkey);
        post(q, wqe);
    }

    /* A receive WQE of data segments, ended by an invalid lkey if short */
    static void post_recv(engine_qp &q,
                          const std::vector<struct mlx5_wqe_data_seg> &sges)
    {
        uint8_t *wqe = q.rq_buf() + size_t(q.rq_pi % 64) * 64;

        memset(wqe, 0, 64);
        for (size_t i = 0; i < sges.size(); ++i) {
            memcpy(wqe + 16 * i, &sges[i], 16);
        }
        if (sges.size() < 4) {
            struct mlx5_wqe_data_seg end = {};
            end.lkey = htobe32(MLX5_INVALID_LKEY);
            memcpy(wqe + 16 * sges.size(), &end, 16);
        }
        ++q.rq_pi;
        ring_rq(q);
    }

    static struct mlx5_wqe_data_seg dseg(const void *addr, uint32_t len,
                                         uint32_t lkey)
    {
        struct mlx5_wqe_data_seg d;

        d.byte_count = htobe32(len);
        d.lkey       = htobe32(lkey);
        d.addr       = htobe64(reinterpret_cast<uintptr_t>(addr));
        return d;
    }

    /* ---- CQ polling, as an mlx5dv user does ---- */

    static bool poll(engine_qp &q, polled_cqe *out)
    {
        uint32_t n    = q.cq.cqe_cnt;
        uint8_t *slot = static_cast<uint8_t*>(q.cq.buf) +
                        size_t(q.cq_ci & (n - 1)) * 64;
        uint8_t op_own = __atomic_load_n(slot + 63, __ATOMIC_ACQUIRE);
        struct mlx5_cqe64 cqe;

        if (((op_own >> 4) == MLX5_CQE_INVALID) ||
            ((op_own & MLX5_CQE_OWNER_MASK) != !!(q.cq_ci & n))) {
            return false;
        }

        memcpy(out->raw, slot, 64);
        memcpy(&cqe, slot, sizeof(cqe));
        out->opcode      = op_own >> 4;
        out->qpn         = be32toh(cqe.sop_drop_qpn) & 0xffffff;
        out->sop         = be32toh(cqe.sop_drop_qpn) >> 24;
        out->wqe_counter = be16toh(cqe.wqe_counter);
        out->byte_cnt    = be32toh(cqe.byte_cnt);
        out->imm         = be32toh(cqe.imm_inval_pkey);
        out->syndrome    = 0;
        out->vendor_syndrome = 0;
        if ((out->opcode == MLX5_CQE_REQ_ERR) ||
            (out->opcode == MLX5_CQE_RESP_ERR)) {
            struct mlx5_err_cqe err;

            memcpy(&err, slot, sizeof(err));
            out->syndrome        = err.syndrome;
            out->vendor_syndrome = err.vendor_err_synd;
        }

        ++q.cq_ci;
        __atomic_store_n(&static_cast<uint32_t*>(
                                 static_cast<void*>(q.cq.dbrec))[0],
                         htobe32(q.cq_ci & 0xffffff), __ATOMIC_RELEASE);
        return true;
    }

    /* Every CQE the QP's CQ holds now */
    static std::vector<polled_cqe> poll_all(engine_qp &q)
    {
        std::vector<polled_cqe> cqes;
        polled_cqe c;

        while (poll(q, &c)) {
            cqes.push_back(c);
        }
        return cqes;
    }

    /* Exactly one CQE, of this opcode */
    static polled_cqe poll_one(engine_qp &q, uint8_t opcode)
    {
        std::vector<polled_cqe> cqes = poll_all(q);
        polled_cqe c = {};

        EXPECT_EQ(1u, cqes.size());
        if (!cqes.empty()) {
            c = cqes.front();
            EXPECT_EQ(int(opcode), int(c.opcode))
                    << "syndrome 0x" << std::hex << int(c.syndrome);
        }
        return c;
    }

    static std::string counters_str()
    {
        uct_ib_emu_counters_t c = uct_ib_emu_counters();
        std::ostringstream os;

        os << "sent " << c.packets_sent << " delivered "
           << c.packets_delivered << " retries " << c.retries << " rnr "
           << c.rnr_naks;
        return os.str();
    }

    /* The QPs a test uses (members, so cleanup outlives the test body) */
    engine_qp                   m_a, m_b, m_c, m_d;

    struct ibv_context         *m_ctx0 = nullptr;
    struct ibv_context         *m_ctx1 = nullptr;
    std::vector<struct ibv_mr*> m_mrs;
    std::vector<engine_qp*>     m_qps;
};

} // namespace emu_test

#endif
