/*
 * The DevX connect helper on the emulated device, over InfiniBand, RoCEv1
 * and RoCEv2: the QP contexts it programs, the transient AH it uses, and
 * every failure path. Expectations come from the fabric the test declares,
 * never from the library.
 */
#include "uct/ib/ib_emu_test.h"

#include <uct/ib/base/ib_ah.h>
#include <uct/ib/base/ib_gid.h>
#include <uct/ib/mlx5/dv/dv_obj.h>
#include <uct/ib/mlx5/rc/rc_mlx5_common.h>
#include <ucs/config/types.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace {

using namespace ib_test;

constexpr uint16_t op_init2rtr = 0x503;
constexpr uint16_t op_rtr2rts  = 0x504;
constexpr uint16_t op_2rst     = 0x50a;

/* The knobs every side uses, and what the QPC must show for them */
constexpr unsigned sl               = 3;
constexpr unsigned traffic_class    = 106;
constexpr unsigned hop_limit        = 64;
constexpr unsigned path_factor      = 1;
constexpr unsigned max_rd_atomic    = 4;
constexpr unsigned exp_log_rd       = 2;   /* log2(max_rd_atomic) */
constexpr unsigned exp_ack_timeout  = 18;  /* 4.096 us * 2^18 >= 1 s */
constexpr unsigned exp_min_rnr_nak  = 14;  /* 1.28 ms >= 1 ms */

/* One end: a device with its PD, CQ, UAR and QPs */
struct side {
    std::unique_ptr<uct_ib_device>                    dev;
    struct ibv_pd                                     *pd = nullptr;
    uint32_t                                          pdn = 0;
    std::unique_ptr<uct_ib_mlx5_cq>                   cq;
    std::unique_ptr<uct_ib_mlx5_devx_uar>             uar;
    uct_rc_mlx5_iface_common_t                        common = {};
    std::vector<std::unique_ptr<uct_ib_mlx5_devx_qp>> qps;
    int                                               pd_busy = 0;

    ~side()
    {
        qps.clear();
        uar.reset();
        cq.reset();
        if (pd != nullptr) {
            /* EBUSY only after a refused AH destroy: closing reclaims it */
            EXPECT_EQ(pd_busy, uct_ib_glue->dealloc_pd(pd));
        }
    }
};

} // namespace

class test_devx_connect : public link_test {
protected:
    void init() override
    {
        link_test::init();
        open_side(a(), &m_a);
        open_side(b(), &m_b);
    }

    void cleanup() override
    {
        m_a.reset();
        m_b.reset();
        link_test::cleanup();
    }

    void open_side(const peer &p, std::unique_ptr<side> *side_p)
    {
        auto                         s     = std::make_unique<side>();
        uct_ib_device_list           list;
        uct_ib_device                *dev;
        uct_ib_mlx5_cq               *cq;
        uct_ib_mlx5_devx_uar         *uar;
        uct_ib_device_gid_info_t     gid_info;
        uct_ib_path_params_t         path  = {};
        uct_rc_timer_config_t        timers = {1.0, 7, 1e-3, 7};

        ASSERT_NE(nullptr, list.find(p.dev));
        ASSERT_EQ(UCS_OK, uct_ib_device::open(list.find(p.dev), true, &dev));
        s->dev.reset(dev);
        ASSERT_TRUE(dev->devx());

        s->pd = uct_ib_glue->alloc_pd(dev->context());
        ASSERT_NE(nullptr, s->pd);
        ASSERT_EQ(UCS_OK, uct_ib_mlx5_get_pdn(*dev, 1, s->pd, &s->pdn));
        ASSERT_EQ(UCS_OK, uct_ib_mlx5_cq::create(*dev, 1, 64, &cq));
        s->cq.reset(cq);
        ASSERT_EQ(UCS_OK, uct_ib_mlx5_devx_uar::create(*dev, 1, 512, &uar));
        s->uar.reset(uar);

        ASSERT_EQ(UCS_OK, uct_ib_device_select_gid(*dev, 1, s->pd,
                                                   UCS_ULUNITS_AUTO, nullptr,
                                                   &gid_info));
        ASSERT_EQ(expected_gid_index(), gid_info.gid_index);

        path.port_num         = 1;
        path.gid_index        = gid_info.gid_index;
        path.sl               = sl;
        path.traffic_class    = traffic_class;
        path.hop_limit        = hop_limit;
        path.roce_path_factor = path_factor;
        path.subnet_prefix    = 0xfe80000000000000ull;
        ASSERT_EQ(UCS_OK, uct_rc_mlx5_iface_common_init(&s->common, dev, 1,
                                                        s->pd, &gid_info,
                                                        &path, &timers));
        *side_p = std::move(s);
    }

    uct_ib_mlx5_devx_qp *create_qp(side *s)
    {
        uct_ib_mlx5_devx_qp_attr_t attr   = {};
        uct_ib_mlx5_rdma_access_t  access = {true, true, true};
        uct_ib_mlx5_devx_qp        *qp    = nullptr;

        attr.pdn        = s->pdn;
        attr.cqn_snd    = s->cq->cqn();
        attr.cqn_rcv    = s->cq->cqn();
        attr.uar_page   = s->uar->page_id();
        attr.sq_wqe_cnt = 64;
        attr.rq_wqe_cnt = 64;
        EXPECT_EQ(UCS_OK, uct_ib_mlx5_devx_qp::create(*s->dev, 1, &attr, &qp));
        if (qp == nullptr) {
            return nullptr;
        }
        s->qps.emplace_back(qp);
        EXPECT_EQ(UCS_OK, qp->rst2init(0, &access));
        return qp;
    }

    /* The AH attributes a caller builds to reach @a to from @a from */
    struct ibv_ah_attr ah_attr_to(const side &from, const peer &to,
                                  unsigned path_index = 0) const
    {
        uct_ib_address_info_t remote = {};
        struct ibv_ah_attr    attr;

        remote.eth = roce();
        remote.gid = expected_gid(to);
        remote.lid = to.lid;
        remote.roce_info.ver = (GetParam() == link_layer::roce_v2) ?
                               UCT_IB_DEVICE_ROCE_V2 : UCT_IB_DEVICE_ROCE_V1;
        remote.roce_info.addr_family = AF_INET;
        uct_ib_fill_ah_attr(&from.common.path, &remote, path_index, &attr);
        return attr;
    }

    enum ibv_mtu path_mtu() const
    {
        return roce() ? IBV_MTU_1024 : IBV_MTU_4096;
    }

    ucs_status_t connect(side *from, uct_ib_mlx5_devx_qp *qp, const peer &to,
                         uint32_t dest_qpn, unsigned path_index = 0)
    {
        struct ibv_ah_attr ah_attr = ah_attr_to(*from, to, path_index);

        return uct_rc_mlx5_iface_common_devx_connect_qp(&from->common, qp,
                                                        dest_qpn, &ah_attr,
                                                        path_mtu(), path_index,
                                                        max_rd_atomic);
    }

    static uct_ib_emu_qp_info_t qp_info(uint32_t qpn)
    {
        uct_ib_emu_qp_info_t info = {};

        EXPECT_EQ(UCS_OK, uct_ib_emu_qp_info(qpn, &info));
        return info;
    }

    /* The QPC of a QP of side @a from connected to @a to's qp @a dest_qpn */
    void expect_qpc(uint32_t qpn, const peer &from, const peer &to,
                    uint32_t dest_qpn, unsigned path_index = 0) const
    {
        qpc_expect e;

        e.mtu         = path_mtu();
        e.log_rd      = exp_log_rd;
        e.min_rnr_nak = exp_min_rnr_nak;
        e.ack_timeout = exp_ack_timeout;
        e.hop_limit   = hop_limit;
        e.sl          = sl;
        e.tclass      = traffic_class;
        e.udp_sport   = 0xC000 | (path_index * path_factor);
        expect_connected_qpc(qpn, from, to, dest_qpn, e);
    }

    void expect_ah_balanced(uint64_t created) const
    {
        uct_ib_emu_counters_t c = uct_ib_emu_counters();

        EXPECT_EQ(roce() ? created : 0, c.ah_created);
        EXPECT_EQ(c.ah_created, c.ah_destroyed);
        EXPECT_EQ(0u, c.ah_alive);
    }

    std::unique_ptr<side> m_a, m_b;
};

TEST_P(test_devx_connect, qpc_of_both_sides)
{
    uct_ib_mlx5_devx_qp *qa = create_qp(m_a.get());
    uct_ib_mlx5_devx_qp *qb = create_qp(m_b.get());
    ASSERT_TRUE(qa && qb);

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, connect(m_a.get(), qa, b(), qb->qpn()));
    ASSERT_EQ(UCS_OK, connect(m_b.get(), qb, a(), qa->qpn()));

    expect_qpc(qa->qpn(), a(), b(), qb->qpn());
    expect_qpc(qb->qpn(), b(), a(), qa->qpn());
    expect_ah_balanced(2);

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(2u, c.cmd_count(op_init2rtr));
    EXPECT_EQ(2u, c.cmd_count(op_rtr2rts));
    uint64_t total = 0;
    for (const auto &cmd : c.cmds) {
        total += cmd.second;
    }
    EXPECT_EQ(4u, total) << "exactly two DevX commands per connect";
}

TEST_P(test_devx_connect, udp_sport_follows_path_index)
{
    for (unsigned path = 0; path < 3; ++path) {
        uct_ib_mlx5_devx_qp *qa = create_qp(m_a.get());
        uct_ib_mlx5_devx_qp *qb = create_qp(m_b.get());
        ASSERT_TRUE(qa && qb);
        ASSERT_EQ(UCS_OK, connect(m_a.get(), qa, b(), qb->qpn(), path));
        expect_qpc(qa->qpn(), a(), b(), qb->qpn(), path);
    }
}

TEST_P(test_devx_connect, debug_line_per_connect)
{
    uct_ib_mlx5_devx_qp *qa = create_qp(m_a.get());
    uct_ib_mlx5_devx_qp *qb = create_qp(m_b.get());
    ASSERT_TRUE(qa && qb);

    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_DEBUG);
    char                    expected[128];
    ucs_status_t            status;

    {
        ucs::scoped_log_level level(UCS_LOG_LEVEL_DEBUG);
        status = connect(m_a.get(), qa, b(), qb->qpn());
    }
    ASSERT_EQ(UCS_OK, status);

    snprintf(expected, sizeof(expected), "%s: connected qp 0x%x to qp 0x%x: ",
             port_name(a()).c_str(), qa->qpn(), qb->qpn());
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_DEBUG, expected)) << capture.dump();
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_DEBUG,
                                roce() ? ", mtu 1024, path 0" : ", mtu 4096, path 0"))
            << capture.dump();
}

TEST_P(test_devx_connect, stale_mac_is_never_reused)
{
    const uct_ib_emu_mac_t moved = {0x02, 0x11, 0x22, 0x33, 0x44, 0x99};

    if (!roce()) {
        UCS_TEST_SKIP_R("InfiniBand routes by LID: there is no MAC to go stale");
    }

    uct_ib_mlx5_devx_qp *qa1 = create_qp(m_a.get());
    uct_ib_mlx5_devx_qp *qb1 = create_qp(m_b.get());
    ASSERT_TRUE(qa1 && qb1);
    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, connect(m_a.get(), qa1, b(), qb1->qpn()));
    EXPECT_EQ(b().mac, qp_info(qa1->qpn()).primary.rmac);

    /* The peer moves: same GID, new MAC (bond fail-over, VF moved, ...) */
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac(b().dev, 1, moved));

    uct_ib_mlx5_devx_qp *qa2 = create_qp(m_a.get());
    uct_ib_mlx5_devx_qp *qb2 = create_qp(m_b.get());
    ASSERT_TRUE(qa2 && qb2);
    ASSERT_EQ(UCS_OK, connect(m_a.get(), qa2, b(), qb2->qpn()));

    EXPECT_EQ(moved, qp_info(qa2->qpn()).primary.rmac)
            << "the new connection must carry the peer's current MAC";
    EXPECT_EQ(b().mac, qp_info(qa1->qpn()).primary.rmac)
            << "an existing connection keeps what it was given";
    expect_ah_balanced(2);
}

TEST_P(test_devx_connect, ah_destroy_failure_warns_and_connects)
{
    if (!roce()) {
        UCS_TEST_SKIP_R("InfiniBand connects without an AH");
    }

    uct_ib_mlx5_devx_qp *qa = create_qp(m_a.get());
    uct_ib_mlx5_devx_qp *qb = create_qp(m_b.get());
    ASSERT_TRUE(qa && qb);

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("destroy_ah", 1, EBUSY));
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);

    ASSERT_EQ(UCS_OK, connect(m_a.get(), qa, b(), qb->qpn()));

    EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN,
                                "destroy_ah(" + port_name(a()) + ") failed: " +
                                strerror(EBUSY))) << capture.dump();
    expect_qpc(qa->qpn(), a(), b(), qb->qpn());

    /* The provider refused, so the AH lives on until the device closes */
    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(1u, c.ah_created);
    EXPECT_EQ(0u, c.ah_destroyed);
    EXPECT_EQ(1u, c.ah_alive);
    m_a->pd_busy = EBUSY;
}

TEST_P(test_devx_connect, ah_create_failure_leaves_qp_in_init)
{
    const std::pair<int, ucs_status_t> cases[] = {
        {ENOMEM,       UCS_ERR_NO_MEMORY},
        {EHOSTUNREACH, UCS_ERR_UNREACHABLE},
        {ETIMEDOUT,    UCS_ERR_UNREACHABLE}
    };

    if (!roce()) {
        UCS_TEST_SKIP_R("InfiniBand connects without an AH");
    }

    uct_ib_mlx5_devx_qp *qb = create_qp(m_b.get());
    ASSERT_NE(nullptr, qb);

    for (const auto &c : cases) {
        SCOPED_TRACE(strerror(c.first));
        uct_ib_mlx5_devx_qp *qa = create_qp(m_a.get());
        ASSERT_NE(nullptr, qa);

        uct_ib_emu_counters_reset();
        ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("create_ah", 1, c.first));
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);

        EXPECT_EQ(c.second, connect(m_a.get(), qa, b(), qb->qpn()));
        EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                    "create_ah(" + port_name(a()) + ") to " +
                                    "198.18.10.2 failed: " + strerror(c.first)))
                << capture.dump();
        EXPECT_EQ(0x1, qp_info(qa->qpn()).state) << "still INIT";
        EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(op_init2rtr));
        expect_ah_balanced(0);

        /* and it still connects once the fault is gone */
        EXPECT_EQ(UCS_OK, connect(m_a.get(), qa, b(), qb->qpn()));
        expect_qpc(qa->qpn(), a(), b(), qb->qpn());
    }
}

/* The provider fails a port the device lacks with NULL and no errno: the
 * report says so instead of quoting an errno left over from elsewhere */
TEST_P(test_devx_connect, transient_ah_on_a_port_the_device_lacks)
{
    struct ibv_ah_attr      attr = ah_attr_to(*m_a, b());
    uct_ib_transient_ah     ah(*m_a->dev, 1);
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);

    uct_ib_emu_counters_reset();
    attr.is_global = 1;
    attr.port_num  = 7;
    errno          = EHOSTUNREACH;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ah.create(m_a->pd, &attr, UCS_LOG_LEVEL_ERROR));
    EXPECT_EQ(nullptr, ah.ah());
    EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                "create_ah(" + port_name(a()) + ") failed: " +
                                "port 7 is not a port of the device"))
            << capture.dump();
    EXPECT_EQ(0u, capture.count(UCS_LOG_LEVEL_ERROR, strerror(EHOSTUNREACH)))
            << capture.dump();
    EXPECT_EQ(0u, uct_ib_emu_counters().ah_created);
}

TEST_P(test_devx_connect, firmware_failure_is_logged_and_rolled_back)
{
    for (uint16_t opcode : {op_init2rtr, op_rtr2rts}) {
        SCOPED_TRACE(opcode == op_init2rtr ? "INIT2RTR" : "RTR2RTS");
        uct_ib_mlx5_devx_qp *qa = create_qp(m_a.get());
        uct_ib_mlx5_devx_qp *qb = create_qp(m_b.get());
        ASSERT_TRUE(qa && qb);

        uct_ib_emu_counters_reset();
        ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(opcode, 1, 0x3, 0x5a5a01));
        {
            ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);

            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      connect(m_a.get(), qa, b(), qb->qpn()));
            EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
            EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                        "status 0x3 syndrome 0x5a5a01"))
                    << capture.dump();
            EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                        (opcode == op_init2rtr) ? "INIT2RTR qp" :
                                                                  "RTR2RTS qp"))
                    << capture.dump();
        }
        expect_ah_balanced(1);

        /* back in INIT, in the library and in the device: a retry works */
        EXPECT_TRUE(qa->usable());
        EXPECT_EQ(UCT_MLX5_QP_STATE_INIT, qa->state());
        EXPECT_EQ(UCT_MLX5_QP_STATE_INIT, qp_info(qa->qpn()).state);
        ASSERT_EQ(UCS_OK, connect(m_a.get(), qa, b(), qb->qpn()));
        EXPECT_EQ(UCT_MLX5_QP_STATE_RTS, qp_info(qa->qpn()).state);
    }
}

TEST_P(test_devx_connect, qp_that_cannot_be_reset_is_refused_before_any_ah)
{
    uct_ib_mlx5_devx_qp *qa = create_qp(m_a.get());
    uct_ib_mlx5_devx_qp *qb = create_qp(m_b.get());
    ASSERT_TRUE(qa && qb);

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(op_init2rtr, 1, 0x3, 0x5a5a02));
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(op_2rst, 1, 0x1, 0x5a5a03));
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        EXPECT_NE(UCS_OK, connect(m_a.get(), qa, b(), qb->qpn()));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "2RST qp"))
                << capture.dump();
    }
    EXPECT_FALSE(qa->usable());

    uct_ib_emu_counters_reset();
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, connect(m_a.get(), qa, b(), qb->qpn()));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "could not be reset"))
            << capture.dump();
    EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
    expect_ah_balanced(0);
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(op_init2rtr));
}

TEST_P(test_devx_connect, connect_needs_init_state)
{
    uct_ib_mlx5_devx_qp *qa = create_qp(m_a.get());
    uct_ib_mlx5_devx_qp *qb = create_qp(m_b.get());
    ASSERT_TRUE(qa && qb);
    ASSERT_EQ(UCS_OK, connect(m_a.get(), qa, b(), qb->qpn()));

    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
    uct_ib_emu_counters_reset();
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, connect(m_a.get(), qa, b(), qb->qpn()));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "not INIT")) << capture.dump();
    expect_ah_balanced(0);
}

UCT_IB_INSTANTIATE_LINK_TEST(test_devx_connect);
