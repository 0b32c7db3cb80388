/*
 * The library's declared interface for its tools to rc_mlx5's QPs and
 * connect helper (uct/api/tools/rc_mlx5_connect.h), on the emulated device
 * over InfiniBand, RoCEv1 and RoCEv2: what it says of an interface, and QPs
 * it made connected both ways, by the helper (one transient AH per call) and
 * over an address vector the caller resolved (no AH of the library's).
 */
#include "uct/ib/rc/rc_api_test.h"

#include <uct/api/tools/rc_mlx5_connect.h>
#include <uct/api/tools/ib_glue.h>

#include <memory>
#include <vector>

using namespace ib_test;

class test_rc_mlx5_tools : public rc_api_test {
protected:
    struct qp_deleter {
        void operator()(uct_rc_mlx5_tool_qp_t *qp) const
        {
            uct_rc_mlx5_tool_qp_destroy(qp);
        }
    };

    typedef std::unique_ptr<uct_rc_mlx5_tool_qp_t, qp_deleter> qp_ptr;

    /* @a count QPs of @a iface */
    std::vector<qp_ptr> create_qps(uct_iface_h iface, unsigned count)
    {
        std::vector<qp_ptr> qps;

        for (unsigned i = 0; i < count; ++i) {
            uct_rc_mlx5_tool_qp_t *qp = nullptr;

            EXPECT_EQ(UCS_OK, uct_rc_mlx5_tool_qp_create(iface, 16, 16, &qp));
            qps.emplace_back(qp);
        }
        return qps;
    }

    /* QP i of @a from to QP i of @a to */
    static std::vector<uct_rc_mlx5_qp_peer_t>
    peers(const std::vector<qp_ptr> &from, const std::vector<qp_ptr> &to)
    {
        std::vector<uct_rc_mlx5_qp_peer_t> result;

        for (size_t i = 0; i < from.size(); ++i) {
            result.push_back({from[i].get(),
                              uct_rc_mlx5_tool_qp_num(to[i].get())});
        }
        return result;
    }

    /* rc_mlx5 on a and on b with @a count QPs each, not connected yet,
     * and the AH attributes with which each reaches the other */
    struct two_sides {
        uct_iface_h         ia, ib;
        std::vector<qp_ptr> qa, qb;
        struct ibv_ah_attr  ah_a, ah_b;
    };

    void open_sides(unsigned count, two_sides *s)
    {
        s->ia = open_iface("rc_mlx5", a());
        s->ib = open_iface("rc_mlx5", b());
        ASSERT_NE(nullptr, s->ia);
        ASSERT_NE(nullptr, s->ib);
        s->qa = create_qps(s->ia, count);
        s->qb = create_qps(s->ib, count);

        std::vector<uint8_t> addr_a = device_address(s->ia);
        std::vector<uint8_t> addr_b = device_address(s->ib);
        uct_rc_mlx5_tool_ah_attr(s->ia, reinterpret_cast<uct_device_addr_t*>(
                                         addr_b.data()), 0, &s->ah_a);
        uct_rc_mlx5_tool_ah_attr(s->ib, reinterpret_cast<uct_device_addr_t*>(
                                         addr_a.data()), 0, &s->ah_b);
    }

    /* QP i of a and QP i of b connected to each other */
    void expect_connected(const two_sides &s) const
    {
        for (size_t i = 0; i < s.qa.size(); ++i) {
            const uint32_t qpn_a = uct_rc_mlx5_tool_qp_num(s.qa[i].get());
            const uint32_t qpn_b = uct_rc_mlx5_tool_qp_num(s.qb[i].get());

            SCOPED_TRACE("qp " + std::to_string(i));
            expect_qpc(qpn_a, a(), b(), qpn_b);
            expect_qpc(qpn_b, b(), a(), qpn_a);
        }
    }

    /* The mlx5 address vector of an AH to @a ah_attr, made and destroyed
     * here as the connect benchmark's cached AH would hold it */
    static void resolve_av(const uct_rc_mlx5_tool_iface_info_t &info,
                           const struct ibv_ah_attr &ah_attr,
                           struct mlx5_wqe_av *av)
    {
        struct ibv_ah_attr attr  = ah_attr;
        struct mlx5dv_obj  obj   = {};
        struct mlx5dv_ah   dv_ah = {};
        struct ibv_ah      *ah;

        attr.is_global      = 1;
        attr.port_num       = info.port_num;
        attr.grh.sgid_index = info.gid_index;
        ah = uct_ib_glue->create_ah(info.pd, &attr);
        ASSERT_NE(nullptr, ah);
        obj.ah.in  = ah;
        obj.ah.out = &dv_ah;
        ASSERT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH));
        *av = *dv_ah.av;
        ASSERT_EQ(0, uct_ib_glue->destroy_ah(ah));
    }
};

TEST_P(test_rc_mlx5_tools, iface_info)
{
    uct_iface_h iface = open_iface("rc_mlx5", a());
    ASSERT_NE(nullptr, iface);

    uct_rc_mlx5_tool_iface_info_t info;
    uct_rc_mlx5_tool_iface_info(iface, &info);
    EXPECT_NE(nullptr, info.pd);
    EXPECT_EQ(1, info.port_num);
    EXPECT_EQ(roce(), bool(info.roce));
    if (roce()) {
        EXPECT_EQ(expected_gid_index(), info.gid_index);
        EXPECT_STREQ((GetParam() == link_layer::roce_v2) ? "RoCE v2" :
                     "RoCE v1", info.roce_version);
    }
}

TEST_P(test_rc_mlx5_tools, ep_addr_qpn)
{
    uct_iface_h iface = open_iface("rc_mlx5", a());
    ASSERT_NE(nullptr, iface);
    uct_ep_h ep = create_ep(iface);
    ASSERT_NE(nullptr, ep);

    const ep_address addr = address(iface, ep);
    EXPECT_EQ(qpns(addr).at(0),
              uct_rc_mlx5_tool_ep_addr_qpn(
                      reinterpret_cast<const uct_ep_addr_t*>(addr.ep.data())));
}

TEST_P(test_rc_mlx5_tools, connect_qps)
{
    two_sides s;

    ASSERT_NO_FATAL_FAILURE(open_sides(3, &s));
    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, uct_rc_mlx5_tool_connect_qps(s.ia, peers(s.qa, s.qb).data(),
                                                   s.qa.size(), &s.ah_a));
    ASSERT_EQ(UCS_OK, uct_rc_mlx5_tool_connect_qps(s.ib, peers(s.qb, s.qa).data(),
                                                   s.qb.size(), &s.ah_b));
    expect_ah(roce() ? 2 : 0); /* one destination resolution per call */
    expect_connected(s);
}

TEST_P(test_rc_mlx5_tools, connect_qps_av)
{
    if (!roce()) {
        GTEST_SKIP() << "an address vector is RoCE's";
    }

    two_sides                     s;
    uct_rc_mlx5_tool_iface_info_t info_a, info_b;
    struct mlx5_wqe_av            av_a, av_b;

    ASSERT_NO_FATAL_FAILURE(open_sides(2, &s));
    uct_rc_mlx5_tool_iface_info(s.ia, &info_a);
    uct_rc_mlx5_tool_iface_info(s.ib, &info_b);
    ASSERT_NO_FATAL_FAILURE(resolve_av(info_a, s.ah_a, &av_a));
    ASSERT_NO_FATAL_FAILURE(resolve_av(info_b, s.ah_b, &av_b));

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, uct_rc_mlx5_tool_connect_qps_av(
                              s.ia, peers(s.qa, s.qb).data(), s.qa.size(),
                              &av_a, s.ah_a.sl));
    ASSERT_EQ(UCS_OK, uct_rc_mlx5_tool_connect_qps_av(
                              s.ib, peers(s.qb, s.qa).data(), s.qb.size(),
                              &av_b, s.ah_b.sl));
    expect_ah(0); /* the caller resolved the destination */
    expect_connected(s);
}

UCT_IB_INSTANTIATE_LINK_TEST(test_rc_mlx5_tools);
