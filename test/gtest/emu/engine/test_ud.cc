/*
 * UD queue pairs on the emulated device: the verbs state machine, datagrams
 * between two devices of one fabric (mlx5_0 -> mlx5_1 on Ethernet, mlx5_2 ->
 * mlx5_3 on InfiniBand) with the GRH area and the receive completion as
 * hardware fills them, and the ways a datagram is lost (Q_Key, no receive
 * WQE, MTU). Step mode: every outcome is deterministic.
 */
#include "emu/emu_test.h"

#include <iterator>


namespace {

using namespace emu_test;

constexpr uint32_t QKEY     = 0x11111111;
constexpr unsigned GRH_LEN  = 40;
constexpr uint8_t  UNTOUCHED = 0xee;
constexpr uint8_t  HOP_LIMIT = 7;

/* A way to address the peer: link layer, and on it the GID (none: an
 * InfiniBand AV without GRH) */
struct ud_link {
    const char *name;
    const char *src_dev;
    const char *dst_dev;
    int        gid_index;   /* -1: no GRH */
    bool       ipv4;        /* the GIDs are IPv4-mapped (RoCEv2 over IPv4) */
    bool       roce_v2;
    bool       eth;
};

const ud_link links[] = {
    {"roce_v2_ipv4", "mlx5_0", "mlx5_1",  3, true,  true,  true},
    {"roce_v2_ipv6", "mlx5_0", "mlx5_1",  1, false, true,  true},
    {"roce_v1",      "mlx5_0", "mlx5_1",  0, false, false, true},
    {"ib",           "mlx5_2", "mlx5_3", -1, false, false, false},
    {"ib_grh",       "mlx5_2", "mlx5_3",  0, false, false, false}
};

/* gtest names a failing case by the link, not by its bytes */
void PrintTo(const ud_link &link, std::ostream *os)
{
    *os << link.name;
}

/* One device's side: context, PD, CQ, a UD QP, a registered buffer */
struct side {
    struct ibv_context *ctx = nullptr;
    struct ibv_pd      *pd  = nullptr;
    struct ibv_cq      *cq  = nullptr;
    struct ibv_qp      *qp  = nullptr;
    struct ibv_mr      *mr  = nullptr;
    std::vector<uint8_t> buf = std::vector<uint8_t>(8192);
};

class test_emu_ud : public emu_fixture,
                    public testing::WithParamInterface<ud_link> {
protected:
    void init() override
    {
        emu_fixture::init();
        ASSERT_EQ(UCS_OK, uct_ib_emu_engine_set_step_mode(true));
        uct_ib_emu_counters_reset();
        open_side(m_src, GetParam().src_dev);
        open_side(m_dst, GetParam().dst_dev);
    }

    void cleanup() override
    {
        if (m_ah != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->destroy_ah(m_ah));
        }
        close_side(m_src);
        close_side(m_dst);
        emu_fixture::cleanup();
        EXPECT_EQ(UCS_OK, uct_ib_emu_engine_set_step_mode(false));
    }

    void open_side(side &sd, const char *dev)
    {
        sd.ctx = open(dev);
        ASSERT_NE(nullptr, sd.ctx);
        sd.pd = uct_ib_glue->alloc_pd(sd.ctx);
        ASSERT_NE(nullptr, sd.pd);
        sd.cq = uct_ib_glue->create_cq(sd.ctx, 64, nullptr, nullptr, 0);
        ASSERT_NE(nullptr, sd.cq);
        sd.mr = uct_ib_glue->reg_mr(sd.pd, sd.buf.data(), sd.buf.size(),
                                    IBV_ACCESS_LOCAL_WRITE);
        ASSERT_NE(nullptr, sd.mr);
        sd.qp = create_ud_qp(sd);
        ASSERT_NE(nullptr, sd.qp);
    }

    void close_side(side &sd)
    {
        if (sd.qp != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->destroy_qp(sd.qp));
        }
        if (sd.mr != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->dereg_mr(sd.mr));
        }
        if (sd.cq != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->destroy_cq(sd.cq));
        }
        if (sd.pd != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->dealloc_pd(sd.pd));
        }
    }

    static struct ibv_qp *create_ud_qp(side &sd)
    {
        struct ibv_qp_init_attr attr = {};

        attr.send_cq             = sd.cq;
        attr.recv_cq             = sd.cq;
        attr.qp_type             = IBV_QPT_UD;
        attr.cap.max_send_wr     = 16;
        attr.cap.max_recv_wr     = 16;
        attr.cap.max_send_sge    = 2;
        attr.cap.max_recv_sge    = 2;
        attr.cap.max_inline_data = 64;
        return uct_ib_glue->create_qp(sd.pd, &attr);
    }

    static void to_rts(struct ibv_qp *qp, uint32_t qkey = QKEY)
    {
        struct ibv_qp_attr attr = {};

        attr.qp_state   = IBV_QPS_INIT;
        attr.pkey_index = 0;
        attr.port_num   = 1;
        attr.qkey       = qkey;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                            IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                            IBV_QP_QKEY));
        attr.qp_state = IBV_QPS_RTR;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE));
        attr.qp_state = IBV_QPS_RTS;
        attr.sq_psn   = 0x123;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                            IBV_QP_SQ_PSN));
    }

    void connect()
    {
        to_rts(m_src.qp);
        to_rts(m_dst.qp);
        m_ah = create_ah();
        ASSERT_NE(nullptr, m_ah);
    }

    /* dlid_bits and src_path_bits: ORed into the LIDs (InfiniBand) */
    struct ibv_ah *create_ah(uint16_t dlid_bits = 0, uint8_t src_path_bits = 0)
    {
        struct ibv_ah_attr attr = {};
        struct ibv_port_attr port = {};

        EXPECT_EQ(0, uct_ib_glue->query_port(m_dst.ctx, 1, &port));
        attr.port_num = 1;
        attr.sl       = 3;
        if (!GetParam().eth) {
            attr.dlid          = port.lid | dlid_bits;
            attr.src_path_bits = src_path_bits;
        }
        if (GetParam().gid_index >= 0) {
            attr.is_global       = 1;
            attr.grh.sgid_index  = GetParam().gid_index;
            attr.grh.hop_limit   = HOP_LIMIT;
            attr.grh.traffic_class = 0x20;
            attr.grh.flow_label  = 0x12345;
            attr.grh.dgid        = gid_of(m_dst.ctx, 1, GetParam().gid_index);
        }
        return uct_ib_glue->create_ah(m_src.pd, &attr);
    }

    int post_recv(side &sd, uint64_t wr_id, size_t offset, uint32_t length)
    {
        struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&sd.buf[offset]),
                              length, sd.mr->lkey};
        struct ibv_recv_wr wr = {}, *bad = nullptr;

        wr.wr_id   = wr_id;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        return uct_ib_glue->post_recv(sd.qp, &wr, &bad);
    }

    int post_send(uint64_t wr_id, size_t offset, uint32_t length,
                  uint32_t qkey = QKEY, unsigned flags = IBV_SEND_SIGNALED,
                  enum ibv_wr_opcode op = IBV_WR_SEND)
    {
        struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&m_src.buf[offset]),
                              length, m_src.mr->lkey};
        struct ibv_send_wr wr = {}, *bad = nullptr;

        wr.wr_id             = wr_id;
        wr.opcode            = op;
        wr.sg_list           = &sge;
        wr.num_sge           = 1;
        wr.send_flags        = flags;
        wr.imm_data          = htobe32(0xfeed);
        wr.wr.ud.ah          = m_ah;
        wr.wr.ud.remote_qpn  = m_dst.qp->qp_num;
        wr.wr.ud.remote_qkey = qkey;
        return uct_ib_glue->post_send(m_src.qp, &wr, &bad);
    }

    static std::vector<struct ibv_wc> poll(side &sd)
    {
        std::vector<struct ibv_wc> wcs(16);

        uct_ib_emu_engine_run();
        int n = uct_ib_glue->poll_cq(sd.cq, int(wcs.size()), wcs.data());
        EXPECT_GE(n, 0);
        wcs.resize(std::max(n, 0));
        return wcs;
    }

    static enum ibv_qp_state state_of(struct ibv_qp *qp)
    {
        struct ibv_qp_attr attr = {};
        struct ibv_qp_init_attr init = {};

        EXPECT_EQ(0, uct_ib_glue->query_qp(qp, &attr, IBV_QP_STATE, &init));
        return attr.qp_state;
    }

    uint64_t drops(uct_ib_emu_drop_t reason) const
    {
        return uct_ib_emu_counters().drop_count(reason);
    }

    /* What the GRH area of a receive must hold */
    void check_grh(const uint8_t *grh, uint32_t payload_len, bool imm)
    {
        union ibv_gid sgid = gid_of(m_src.ctx, 1, GetParam().gid_index);
        union ibv_gid dgid = gid_of(m_dst.ctx, 1, GetParam().gid_index);
        /* BTH, DETH, payload, ICRC */
        unsigned transport = 12 + 8 + (imm ? 4 : 0) + payload_len + 4;

        if (GetParam().ipv4) {
            const uint8_t *ip = grh + 20;
            uint32_t sum      = 0;

            for (unsigned i = 0; i < 20; ++i) {
                EXPECT_EQ(0, grh[i]) << "byte " << i;
            }
            EXPECT_EQ(0x45, ip[0]);
            EXPECT_EQ(0x20, ip[1]) << "tos";
            EXPECT_EQ(20 + 8 + transport, (ip[2] << 8) | ip[3]);
            EXPECT_EQ(HOP_LIMIT, ip[8]) << "ttl";
            EXPECT_EQ(17, ip[9]) << "udp";
            EXPECT_EQ(0, memcmp(ip + 12, &sgid.raw[12], 4)) << "source IP";
            EXPECT_EQ(0, memcmp(ip + 16, &dgid.raw[12], 4)) << "dest IP";
            for (unsigned i = 0; i < 20; i += 2) {
                sum += (ip[i] << 8) | ip[i + 1];
            }
            while (sum >> 16) {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            EXPECT_EQ(0xffffu, sum) << "IPv4 header checksum";
            return;
        }

        uint32_t vtf;
        memcpy(&vtf, grh, sizeof(vtf));
        vtf = be32toh(vtf);
        EXPECT_EQ(6u, vtf >> 28) << "IP version";
        EXPECT_EQ(0x20u, (vtf >> 20) & 0xff) << "traffic class";
        EXPECT_EQ(0x12345u, vtf & 0xfffff) << "flow label";
        EXPECT_EQ((GetParam().roce_v2 ? 8 : 0) + transport,
                  unsigned((grh[4] << 8) | grh[5])) << "payload length";
        EXPECT_EQ(GetParam().roce_v2 ? 17 : 0x1b, grh[6]) << "next header";
        EXPECT_EQ(HOP_LIMIT, grh[7]);
        EXPECT_EQ(0, memcmp(grh + 8, sgid.raw, 16)) << "sgid";
        EXPECT_EQ(0, memcmp(grh + 24, dgid.raw, 16)) << "dgid";
    }

    bool has_grh() const
    {
        return GetParam().eth || (GetParam().gid_index >= 0);
    }

    side          m_src;
    side          m_dst;
    struct ibv_ah *m_ah = nullptr;
};


TEST_P(test_emu_ud, state_machine)
{
    struct ibv_qp_attr attr = {};
    struct ibv_qp_init_attr init = {};
    struct ibv_qp *qp = m_src.qp;

    /* RST -> INIT needs the Q_Key; an RC attribute is refused */
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    attr.qkey     = 0x42;
    EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                             IBV_QP_PKEY_INDEX | IBV_QP_PORT));
    EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                             IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                             IBV_QP_QKEY |
                                             IBV_QP_ACCESS_FLAGS));
    ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                        IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                        IBV_QP_QKEY));

    /* INIT -> RTR: no address, no destination */
    attr.qp_state    = IBV_QPS_RTR;
    attr.dest_qp_num = 5;
    EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                             IBV_QP_DEST_QPN));
    ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE));

    /* RTR -> RTS needs the send PSN */
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn   = 0x777;
    EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE));
    ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                        IBV_QP_SQ_PSN));

    /* the Q_Key may change in RTS */
    attr.qkey = 0x43;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_QKEY));

    ASSERT_EQ(0, uct_ib_glue->query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_QKEY,
                                       &init));
    EXPECT_EQ(IBV_QPS_RTS, attr.qp_state);
    EXPECT_EQ(0x43u, attr.qkey);
    EXPECT_EQ(0x777u, attr.sq_psn);
    EXPECT_EQ(1, attr.port_num);
    EXPECT_EQ(IBV_QPT_UD, init.qp_type);
    EXPECT_EQ(IBV_QPT_UD, qp->qp_type);
    EXPECT_GE(init.cap.max_inline_data, 64u);

    /* the rings mlx5dv hands out */
    struct mlx5dv_qp dvqp = {};
    struct mlx5dv_obj obj = {};
    obj.qp.in  = qp;
    obj.qp.out = &dvqp;
    ASSERT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
    EXPECT_NE(nullptr, dvqp.sq.buf);
    EXPECT_NE(nullptr, dvqp.rq.buf);
    EXPECT_NE(nullptr, dvqp.dbrec);
    EXPECT_NE(nullptr, dvqp.bf.reg);
    EXPECT_EQ(64u, dvqp.sq.stride);
    EXPECT_GE(dvqp.rq.wqe_cnt, 16u);

    ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                        IBV_QP_CUR_STATE)) << "RTS -> RTS";
    attr.qp_state = IBV_QPS_RESET;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE));
    EXPECT_EQ(IBV_QPS_RESET, state_of(qp));
}

TEST_P(test_emu_ud, send_recv_sizes)
{
    connect();

    unsigned wr = 0;
    for (uint32_t size : {1u, 64u, 333u, 1024u}) {
        SCOPED_TRACE("size " + std::to_string(size));
        bool imm = (size == 64);

        std::fill(m_dst.buf.begin(), m_dst.buf.end(), UNTOUCHED);
        for (uint32_t i = 0; i < size; ++i) {
            m_src.buf[i] = static_cast<uint8_t>(i * 7 + size);
        }

        ASSERT_EQ(0, post_recv(m_dst, 0xd0 + wr, 0, GRH_LEN + size));
        ASSERT_EQ(0, post_send(0xc0 + wr, 0, size, QKEY, IBV_SEND_SIGNALED |
                               ((size <= 64) ? IBV_SEND_INLINE : 0),
                               imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND));

        std::vector<struct ibv_wc> s = poll(m_src), r = poll(m_dst);
        ASSERT_EQ(1u, s.size());
        ASSERT_EQ(1u, r.size());
        EXPECT_EQ(IBV_WC_SUCCESS, s[0].status);
        EXPECT_EQ(0xc0u + wr, s[0].wr_id);
        EXPECT_EQ(IBV_WC_SEND, s[0].opcode);

        EXPECT_EQ(IBV_WC_SUCCESS, r[0].status);
        EXPECT_EQ(0xd0u + wr, r[0].wr_id);
        EXPECT_EQ(IBV_WC_RECV, r[0].opcode);
        EXPECT_EQ(GRH_LEN + size, r[0].byte_len) << "the GRH area counts";
        EXPECT_EQ(m_src.qp->qp_num, r[0].src_qp);
        EXPECT_EQ(m_dst.qp->qp_num, r[0].qp_num);
        EXPECT_EQ(has_grh(), bool(r[0].wc_flags & IBV_WC_GRH));
        EXPECT_EQ(imm, bool(r[0].wc_flags & IBV_WC_WITH_IMM));
        if (imm) {
            EXPECT_EQ(htobe32(0xfeed), r[0].imm_data);
        }
        EXPECT_EQ(0, r[0].pkey_index);
        if (GetParam().eth) {
            /* the packet type: UDP bit and the L3 header */
            EXPECT_EQ(!GetParam().roce_v2 ? 0x0 : GetParam().ipv4 ? 0xa : 0x9,
                      r[0].sl);
        } else {
            struct ibv_port_attr port = {};
            ASSERT_EQ(0, uct_ib_glue->query_port(m_src.ctx, 1, &port));
            EXPECT_EQ(3, r[0].sl);
            EXPECT_EQ(port.lid, r[0].slid);
        }

        EXPECT_TRUE(std::equal(m_src.buf.begin(), m_src.buf.begin() + size,
                               m_dst.buf.begin() + GRH_LEN));
        EXPECT_EQ(UNTOUCHED, m_dst.buf[GRH_LEN + size]);
        if (has_grh()) {
            check_grh(m_dst.buf.data(), size, imm);
        } else {
            EXPECT_TRUE(std::all_of(m_dst.buf.begin(),
                                    m_dst.buf.begin() + GRH_LEN,
                                    [](uint8_t b) { return b == UNTOUCHED; }))
                    << "no GRH: the area is left alone";
        }
        ++wr;
    }

    EXPECT_EQ(0u, uct_ib_emu_counters().retries);
    EXPECT_EQ(4u, uct_ib_emu_counters().packets_delivered);
}

TEST_P(test_emu_ud, qkey_mismatch_drops)
{
    connect();
    ASSERT_EQ(0, post_recv(m_dst, 1, 0, 256));
    ASSERT_EQ(0, post_send(2, 0, 8, QKEY + 1));

    std::vector<struct ibv_wc> s = poll(m_src);
    ASSERT_EQ(1u, s.size());
    EXPECT_EQ(IBV_WC_SUCCESS, s[0].status) << "the sender never knows";
    EXPECT_EQ(0u, poll(m_dst).size());
    EXPECT_EQ(1u, drops(UCT_IB_EMU_DROP_QKEY));

    uct_ib_emu_port_counters_t pc;
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_counters(GetParam().dst_dev, 1, &pc));
    EXPECT_EQ(1u, pc.drop_count(UCT_IB_EMU_DROP_QKEY)) << "on the receiver";

    /* the receive WQE is still there for a datagram with the right key */
    ASSERT_EQ(0, post_send(3, 0, 8));
    std::vector<struct ibv_wc> r = poll(m_dst);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(1u, r[0].wr_id);
    EXPECT_EQ(IBV_WC_SUCCESS, r[0].status);
}

TEST_P(test_emu_ud, controlled_qkey_uses_the_qp_qkey)
{
    connect();
    ASSERT_EQ(0, post_recv(m_dst, 1, 0, 256));
    /* the high bit: the sender's own Q_Key (QKEY) goes on the wire */
    ASSERT_EQ(0, post_send(2, 0, 8, 0x80000000u));
    std::vector<struct ibv_wc> r = poll(m_dst);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(IBV_WC_SUCCESS, r[0].status);
}

TEST_P(test_emu_ud, no_receive_wqe_drops)
{
    connect();
    ASSERT_EQ(0, post_send(1, 0, 8));
    std::vector<struct ibv_wc> s = poll(m_src);
    ASSERT_EQ(1u, s.size());
    EXPECT_EQ(IBV_WC_SUCCESS, s[0].status);
    EXPECT_EQ(1u, drops(UCT_IB_EMU_DROP_NO_RECV));
    EXPECT_EQ(0u, uct_ib_emu_counters().rnr_naks) << "no RNR on UD";

    /* lost for good: a receive posted later gets nothing */
    ASSERT_EQ(0, post_recv(m_dst, 2, 0, 256));
    EXPECT_EQ(0u, poll(m_dst).size());
    EXPECT_EQ(IBV_QPS_RTS, state_of(m_dst.qp));
}

TEST_P(test_emu_ud, above_mtu_is_a_local_length_error)
{
    struct ibv_port_attr port = {};
    struct ibv_qp_attr attr = {};

    connect();
    ASSERT_EQ(0, uct_ib_glue->query_port(m_src.ctx, 1, &port));
    uint32_t mtu = 128u << port.active_mtu;
    ASSERT_LT(mtu + 1, m_src.buf.size());

    ASSERT_EQ(0, post_recv(m_dst, 1, 0, 8192));
    ASSERT_EQ(0, post_send(1, 0, mtu + 1));
    std::vector<struct ibv_wc> s = poll(m_src);
    ASSERT_EQ(1u, s.size());
    EXPECT_EQ(IBV_WC_LOC_LEN_ERR, s[0].status);
    EXPECT_EQ(IBV_QPS_SQE, state_of(m_src.qp)) << "UD: only the send queue";
    EXPECT_EQ(0u, poll(m_dst).size());

    /* back to RTS, and a datagram of the MTU goes */
    attr.qp_state = IBV_QPS_RTS;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(m_src.qp, &attr, IBV_QP_STATE));
    ASSERT_EQ(0, post_send(2, 0, mtu));
    EXPECT_EQ(1u, poll(m_src).size());
    std::vector<struct ibv_wc> r = poll(m_dst);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(GRH_LEN + mtu, r[0].byte_len);
}

TEST_P(test_emu_ud, receive_too_small)
{
    connect();
    ASSERT_EQ(0, post_recv(m_dst, 1, 0, GRH_LEN + 7));
    ASSERT_EQ(0, post_send(2, 0, 8));
    std::vector<struct ibv_wc> r = poll(m_dst);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(IBV_WC_LOC_LEN_ERR, r[0].status);
}

TEST_P(test_emu_ud, rc_opcode_refused)
{
    connect();
    EXPECT_EQ(EINVAL, post_send(1, 0, 8, QKEY, IBV_SEND_SIGNALED,
                                IBV_WR_RDMA_WRITE));
}

/* The WQE as UCX's ud_mlx5 writes it into the ring itself: control segment,
 * the AV (compact, 16 bytes, on InfiniBand without GRH; the AH's 48 on
 * RoCE), inline data; the raw receive CQE's fields */
TEST_P(test_emu_ud, mlx5dv_wqe_and_cqe)
{
    connect();

    struct mlx5dv_qp dvqp = {};
    struct mlx5dv_cq dvcq = {};
    struct mlx5dv_obj obj = {};
    obj.qp.in  = m_src.qp;
    obj.qp.out = &dvqp;
    ASSERT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
    dvcq = dv_cq(m_dst.cq);

    struct mlx5_wqe_av av = av_of(m_ah);
    bool compact          = !has_grh();
    uint8_t wqe[128]      = {};
    const char msg[]      = "datagram by hand";
    unsigned pos          = sizeof(struct mlx5_wqe_ctrl_seg);

    av.dqp_dct       = htobe32(m_dst.qp->qp_num |
                               (compact ? 0u : uint32_t(MLX5_EXTENDED_UD_AV)));
    av.key.qkey.qkey = htobe32(QKEY);
    memcpy(wqe + pos, &av, compact ? 16 : sizeof(av));
    pos += compact ? 16 : sizeof(av);

    uint32_t inl = htobe32(sizeof(msg) | MLX5_INLINE_SEG);
    memcpy(wqe + pos, &inl, sizeof(inl));
    memcpy(wqe + pos + 4, msg, sizeof(msg));
    pos += (4 + sizeof(msg) + 15) / 16 * 16;

    struct mlx5_wqe_ctrl_seg ctrl = {};
    ctrl.opmod_idx_opcode = htobe32(MLX5_OPCODE_SEND);
    ctrl.qpn_ds           = htobe32((m_src.qp->qp_num << 8) | (pos / 16));
    ctrl.fm_ce_se         = MLX5_WQE_CTRL_CQ_UPDATE;
    memcpy(wqe, &ctrl, sizeof(ctrl));
    ASSERT_LE(pos, sizeof(wqe));
    memcpy(dvqp.sq.buf, wqe, sizeof(wqe));

    std::fill(m_dst.buf.begin(), m_dst.buf.end(), UNTOUCHED);
    ASSERT_EQ(0, post_recv(m_dst, 9, 0, 512));
    __atomic_store_n(&dvqp.dbrec[MLX5_SND_DBR], htobe32(pos > 64 ? 2 : 1),
                     __ATOMIC_RELEASE);
    uct_ib_emu_engine_run();

    /* the first CQE of the receiver's ring, read as hardware wrote it */
    const struct mlx5_cqe64 *cqe = static_cast<const struct mlx5_cqe64*>(
            dvcq.buf);
    ASSERT_EQ(MLX5_CQE_RESP_SEND, cqe->op_own >> 4);
    uint32_t flags_rqpn = be32toh(cqe->flags_rqpn);
    EXPECT_EQ(m_src.qp->qp_num, flags_rqpn & 0xffffff);
    EXPECT_EQ(has_grh(), bool(flags_rqpn & (1u << 28))) << "L3 in data";
    EXPECT_EQ(0u, flags_rqpn & (1u << 29)) << "not L3 in CQE";
    EXPECT_EQ(GRH_LEN + sizeof(msg), be32toh(cqe->byte_cnt));
    EXPECT_EQ(m_dst.qp->qp_num, be32toh(cqe->sop_drop_qpn) & 0xffffff);
    EXPECT_EQ(0, memcmp(msg, &m_dst.buf[GRH_LEN], sizeof(msg)));
    if (has_grh()) {
        check_grh(m_dst.buf.data(), sizeof(msg), false);
    }

    std::vector<struct ibv_wc> s = poll(m_src);
    ASSERT_EQ(1u, s.size());
    EXPECT_EQ(IBV_WC_SUCCESS, s[0].status);
}

INSTANTIATE_TEST_SUITE_P(link, test_emu_ud, testing::ValuesIn(links),
                         [](const testing::TestParamInfo<ud_link> &info) {
                             return std::string(info.param.name);
                         });

} // namespace

/* mlx5_3 answers to two LIDs (LMC 1): a datagram to the second arrives
 * with its path bits in the completion, one past the range is not routed */
TEST_P(test_emu_ud, lmc_path_bits)
{
    if (GetParam().eth) {
        UCS_TEST_SKIP_R("LIDs are InfiniBand's");
    }

    struct ibv_port_attr src_port = {}, dst_port = {};
    ASSERT_EQ(0, uct_ib_glue->query_port(m_src.ctx, 1, &src_port));
    ASSERT_EQ(0, uct_ib_glue->query_port(m_dst.ctx, 1, &dst_port));
    ASSERT_EQ(1, dst_port.lmc);
    ASSERT_EQ(0, src_port.lmc);

    to_rts(m_src.qp);
    to_rts(m_dst.qp);
    m_ah = create_ah(1, 0);
    ASSERT_NE(nullptr, m_ah);

    ASSERT_EQ(0, post_recv(m_dst, 1, 0, GRH_LEN + 64));
    ASSERT_EQ(0, post_send(2, 0, 64));
    std::vector<struct ibv_wc> s = poll(m_src), r = poll(m_dst);
    ASSERT_EQ(1u, s.size());
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(IBV_WC_SUCCESS, r[0].status);
    EXPECT_EQ(1, r[0].dlid_path_bits);
    EXPECT_EQ(src_port.lid, r[0].slid);

    /* 2^LMC LIDs and no more: 0x16 is nobody's */
    EXPECT_EQ(0, uct_ib_glue->destroy_ah(m_ah));
    m_ah = create_ah(4, 0);
    ASSERT_NE(nullptr, m_ah);
    ASSERT_EQ(0, post_recv(m_dst, 3, 0, GRH_LEN + 64));
    ASSERT_EQ(0, post_send(4, 0, 64));
    EXPECT_EQ(1u, poll(m_src).size()) << "UD: the sender is not told";
    EXPECT_TRUE(poll(m_dst).empty());
    EXPECT_EQ(1u, drops(UCT_IB_EMU_DROP_NO_ROUTE));
}

