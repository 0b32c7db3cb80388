/*
 * Address handles of the emulated device: the mlx5_wqe_av bytes for
 * InfiniBand, RoCEv1 and RoCEv2, computed here independently from the
 * configured addresses; MAC resolution frozen at creation; errors; counters.
 */
#include "emu/emu_test.h"

#include <atomic>
#include <thread>

using namespace emu_test;


namespace {

/* The byte layout of struct mlx5_wqe_av, from the rdma-core facts */
struct av_bytes {
    uint8_t raw[48];

    explicit av_bytes(const struct mlx5_wqe_av &av)
    {
        static_assert(sizeof(av) == sizeof(raw), "mlx5_wqe_av is 48 bytes");
        memcpy(raw, &av, sizeof(raw));
    }

    uint32_t be32(size_t off) const
    {
        return (uint32_t(raw[off]) << 24) | (uint32_t(raw[off + 1]) << 16) |
               (uint32_t(raw[off + 2]) << 8) | raw[off + 3];
    }

    uint16_t be16(size_t off) const
    {
        return static_cast<uint16_t>((raw[off] << 8) | raw[off + 1]);
    }

    uint64_t key() const          { return (uint64_t(be32(0)) << 32) | be32(4); }
    uint32_t dqp_dct() const      { return be32(8); }
    uint8_t  stat_rate_sl() const { return raw[12]; }
    uint8_t  fl_mlid() const      { return raw[13]; }
    uint16_t rlid() const         { return be16(14); }
    uct_ib_emu_mac_t rmac() const
    {
        uct_ib_emu_mac_t mac;
        memcpy(mac.data(), &raw[20], 6);
        return mac;
    }
    uint8_t  tclass() const       { return raw[26]; }
    uint8_t  hop_limit() const    { return raw[27]; }
    uint32_t grh_gid_fl() const   { return be32(28); }
    std::string rgid() const      { return gid_hex(&raw[32]); }
};

/* RoCEv2 UDP source port of a non-zero flow label (rdma-core facts) */
uint16_t expected_sport(uint32_t fl)
{
    return static_cast<uint16_t>(((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)) |
                                 0xc000);
}

} // namespace


class test_emu_ah : public emu_fixture {
protected:
    void init() override
    {
        emu_fixture::init();
        m_eth = open("mlx5_0");
        m_ib  = open("mlx5_2");
        ASSERT_NE(nullptr, m_ib);
        m_eth_pd = uct_ib_glue->alloc_pd(m_eth);
        m_ib_pd  = uct_ib_glue->alloc_pd(m_ib);
        ASSERT_NE(nullptr, m_eth_pd);
        ASSERT_NE(nullptr, m_ib_pd);
    }

    void cleanup() override
    {
        for (struct ibv_ah *ah : m_ahs) {
            EXPECT_EQ(0, uct_ib_glue->destroy_ah(ah));
        }
        EXPECT_EQ(0, uct_ib_glue->dealloc_pd(m_eth_pd));
        EXPECT_EQ(0, uct_ib_glue->dealloc_pd(m_ib_pd));
        emu_fixture::cleanup();
    }

    static struct ibv_ah_attr roce_attr(const union ibv_gid &dgid,
                                        uint8_t sgid_index,
                                        uint32_t flow_label)
    {
        struct ibv_ah_attr attr = {};

        attr.is_global         = 1;
        attr.port_num          = 1;
        attr.sl                = 5;
        attr.static_rate       = 0;
        attr.grh.dgid          = dgid;
        attr.grh.sgid_index    = sgid_index;
        attr.grh.flow_label    = flow_label;
        attr.grh.traffic_class = 0x68;
        attr.grh.hop_limit     = 64;
        return attr;
    }

    struct ibv_ah *create(struct ibv_pd *pd, struct ibv_ah_attr attr)
    {
        struct ibv_ah *ah = uct_ib_glue->create_ah(pd, &attr);

        EXPECT_NE(nullptr, ah) << "errno " << errno;
        if (ah != nullptr) {
            m_ahs.push_back(ah);
        }
        return ah;
    }

    void destroy(struct ibv_ah *ah)
    {
        m_ahs.erase(std::remove(m_ahs.begin(), m_ahs.end(), ah), m_ahs.end());
        EXPECT_EQ(0, uct_ib_glue->destroy_ah(ah));
    }

    struct ibv_context         *m_eth    = nullptr;
    struct ibv_context         *m_ib     = nullptr;
    struct ibv_pd              *m_eth_pd = nullptr;
    struct ibv_pd              *m_ib_pd  = nullptr;
    std::vector<struct ibv_ah*> m_ahs;
};

TEST_F(test_emu_ah, roce_v2_av)
{
    /* mlx5_0 -> mlx5_1 over their IPv4 RoCEv2 addresses (GID index 3) */
    union ibv_gid dgid = ipv4_gid(198, 18, 0, 2);
    struct ibv_ah *ah  = create(m_eth_pd, roce_attr(dgid, 3, 0x12345));

    ASSERT_NE(nullptr, ah);
    av_bytes av(av_of(ah));
    EXPECT_EQ(0u, av.key());
    EXPECT_EQ(0u, av.dqp_dct());
    EXPECT_EQ((0 << 4) | (5 << 1), av.stat_rate_sl());
    EXPECT_EQ(0, av.fl_mlid());
    EXPECT_EQ(expected_sport(0x12345), av.rlid());
    EXPECT_EQ(0xe341, av.rlid()) << "(0x2345 ^ 0x4) | 0xc000";
    EXPECT_EQ(MAC_MLX5_1, av.rmac());
    EXPECT_EQ(0x68, av.tclass());
    EXPECT_EQ(64, av.hop_limit());
    EXPECT_EQ((0u << 30) | (3u << 20) | 0x12345u, av.grh_gid_fl());
    EXPECT_EQ(gid_hex(dgid.raw), av.rgid());
}

TEST_F(test_emu_ah, roce_v2_av_link_local)
{
    union ibv_gid dgid = link_local_gid(MAC_MLX5_1);
    struct ibv_ah_attr attr = roce_attr(dgid, 1, 0xfffff);
    struct ibv_ah *ah;

    attr.static_rate = 7;
    attr.sl          = 0xf; /* only 3 bits reach the AV on Ethernet */
    ah               = create(m_eth_pd, attr);
    ASSERT_NE(nullptr, ah);

    av_bytes av(av_of(ah));
    EXPECT_EQ((7 << 4) | (7 << 1), av.stat_rate_sl());
    EXPECT_EQ(expected_sport(0xfffff), av.rlid());
    EXPECT_EQ(MAC_MLX5_1, av.rmac());
    EXPECT_EQ((1u << 20) | 0xfffffu, av.grh_gid_fl());
    EXPECT_EQ(gid_hex(dgid.raw), av.rgid());
}

TEST_F(test_emu_ah, roce_v2_zero_flow_label_random_sport)
{
    union ibv_gid dgid = ipv4_gid(198, 18, 0, 2);
    std::set<uint16_t> ports;

    for (int i = 0; i < 16; ++i) {
        struct ibv_ah *ah = create(m_eth_pd, roce_attr(dgid, 3, 0));
        ASSERT_NE(nullptr, ah);
        av_bytes av(av_of(ah));
        EXPECT_GE(av.rlid(), 0xc000);
        EXPECT_EQ(3u << 20, av.grh_gid_fl());
        ports.insert(av.rlid());
    }
    EXPECT_GT(ports.size(), 1u) << "the source port is drawn at random";
}

TEST_F(test_emu_ah, roce_v1_av)
{
    union ibv_gid dgid = ipv4_gid(198, 18, 0, 2);
    struct ibv_ah *ah  = create(m_eth_pd, roce_attr(dgid, 2, 0x12345));

    ASSERT_NE(nullptr, ah);
    av_bytes av(av_of(ah));
    EXPECT_EQ(0, av.rlid()) << "RoCEv1 has no UDP source port";
    EXPECT_EQ((5 << 1), av.stat_rate_sl());
    EXPECT_EQ(0, av.fl_mlid());
    EXPECT_EQ(MAC_MLX5_1, av.rmac());
    EXPECT_EQ(0x68, av.tclass());
    EXPECT_EQ(64, av.hop_limit());
    EXPECT_EQ((2u << 20) | 0x12345u, av.grh_gid_fl());
    EXPECT_EQ(gid_hex(dgid.raw), av.rgid());
}

TEST_F(test_emu_ah, ib_av)
{
    struct ibv_ah_attr attr = {};
    struct ibv_ah *ah;

    attr.port_num      = 1;
    attr.dlid          = LID_MLX5_3;
    attr.sl            = 0xb;
    attr.src_path_bits = 0x85;
    attr.static_rate   = 3;
    ah                 = create(m_ib_pd, attr);
    ASSERT_NE(nullptr, ah);

    av_bytes av(av_of(ah));
    EXPECT_EQ((3 << 4) | 0xb, av.stat_rate_sl());
    EXPECT_EQ(0x05, av.fl_mlid());
    EXPECT_EQ(LID_MLX5_3, av.rlid());
    EXPECT_EQ(uct_ib_emu_mac_t{}, av.rmac());
    EXPECT_EQ(0u, av.grh_gid_fl());
    EXPECT_EQ(gid_hex(make_gid({}).raw), av.rgid());
}

TEST_F(test_emu_ah, ib_global_av)
{
    union ibv_gid dgid = make_gid({0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                                   0x02, 0xc9, 0, 0, 0, 0, 0, LID_MLX5_3});
    struct ibv_ah_attr attr = {};
    struct ibv_ah *ah;

    attr.port_num          = 1;
    attr.dlid              = LID_MLX5_3;
    attr.is_global         = 1;
    attr.grh.dgid          = dgid;
    attr.grh.flow_label    = 0x777;
    attr.grh.hop_limit     = 2;
    attr.grh.traffic_class = 0x10;
    ah                     = create(m_ib_pd, attr);
    ASSERT_NE(nullptr, ah);

    av_bytes av(av_of(ah));
    EXPECT_EQ(LID_MLX5_3, av.rlid());
    EXPECT_EQ((1u << 30) | 0x777u, av.grh_gid_fl()) << "GRH bit on IB";
    EXPECT_EQ(2, av.hop_limit());
    EXPECT_EQ(0x10, av.tclass());
    EXPECT_EQ(gid_hex(dgid.raw), av.rgid());
}

TEST_F(test_emu_ah, mac_frozen_at_creation)
{
    const uct_ib_emu_mac_t moved = {0x02, 0xc9, 0x00, 0x00, 0x0a, 0x02};
    const uct_ib_emu_mac_t neigh = {0x02, 0xc9, 0x00, 0x00, 0x0b, 0x02};
    union ibv_gid dgid           = ipv4_gid(198, 18, 0, 2);
    struct ibv_ah *before, *after_move, *after_neigh;

    before = create(m_eth_pd, roce_attr(dgid, 3, 1));
    ASSERT_NE(nullptr, before);

    /* the peer's port moves to another MAC (neighbour table follows) */
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_1", 1, moved));
    after_move = create(m_eth_pd, roce_attr(dgid, 3, 1));
    ASSERT_NE(nullptr, after_move);

    /* only the neighbour entry changes */
    uct_ib_emu_neigh_set("eth0", dgid, neigh);
    after_neigh = create(m_eth_pd, roce_attr(dgid, 3, 1));
    ASSERT_NE(nullptr, after_neigh);

    EXPECT_EQ(MAC_MLX5_1, av_bytes(av_of(before)).rmac());
    EXPECT_EQ(moved, av_bytes(av_of(after_move)).rmac());
    EXPECT_EQ(neigh, av_bytes(av_of(after_neigh)).rmac());
}

TEST_F(test_emu_ah, errors)
{
    union ibv_gid dgid = ipv4_gid(198, 18, 0, 2);
    struct ibv_ah_attr attr;

    /* port outside 1..num_ports: NULL, errno untouched */
    attr          = roce_attr(dgid, 3, 0);
    attr.port_num = 2;
    errno         = 12345;
    EXPECT_EQ(nullptr, uct_ib_glue->create_ah(m_eth_pd, &attr));
    EXPECT_EQ(12345, errno);
    attr.port_num = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_ah(m_eth_pd, &attr));
    EXPECT_EQ(12345, errno);

    attr           = roce_attr(dgid, 3, 0);
    attr.is_global = 0;
    errno          = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_ah(m_eth_pd, &attr));
    EXPECT_EQ(EINVAL, errno) << "Ethernet needs a global AH";

    attr  = roce_attr(dgid, 7, 0);
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_ah(m_eth_pd, &attr));
    EXPECT_EQ(EINVAL, errno) << "empty source GID entry";

    attr  = roce_attr(ipv4_gid(198, 19, 1, 1), 3, 0);
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_ah(m_eth_pd, &attr));
    EXPECT_EQ(EHOSTUNREACH, errno) << "unknown destination";

    ASSERT_EQ(UCS_OK, uct_ib_emu_neigh_del("eth0", dgid));
    attr  = roce_attr(dgid, 3, 0);
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_ah(m_eth_pd, &attr));
    EXPECT_EQ(EHOSTUNREACH, errno) << "neighbour entry removed";
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_neigh_del("eth0", dgid));

    EXPECT_EQ(0u, uct_ib_emu_counters().ah_created);
}

/* A neighbour table belongs to one L2 segment: a GID known on another
 * segment does not resolve, and an entry set on another segment is not seen */
TEST_F(test_emu_ah, neighbours_are_per_segment)
{
    union ibv_gid dgid          = ipv4_gid(198, 18, 0, 2);
    const uct_ib_emu_mac_t mac  = {0x02, 0xc9, 0x00, 0x00, 0x0c, 0x02};
    struct ibv_ah_attr     attr = roce_attr(dgid, 3, 0);

    uct_ib_emu_neigh_set("eth9", dgid, mac);
    ASSERT_EQ(UCS_OK, uct_ib_emu_neigh_del("eth0", dgid));
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_ah(m_eth_pd, &attr));
    EXPECT_EQ(EHOSTUNREACH, errno) << "known only on segment eth9";
    EXPECT_EQ(UCS_OK, uct_ib_emu_neigh_del("eth9", dgid));
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_neigh_del("eth9", dgid));

    uct_ib_emu_neigh_set("eth0", dgid, mac);
    struct ibv_ah *ah = create(m_eth_pd, attr);
    ASSERT_NE(nullptr, ah);
    EXPECT_EQ(mac, av_bytes(av_of(ah)).rmac());
}

TEST_F(test_emu_ah, counters)
{
    union ibv_gid dgid = ipv4_gid(198, 18, 0, 2);
    struct ibv_ah *ah[3];
    uct_ib_emu_counters_t c;

    for (auto &a : ah) {
        a = create(m_eth_pd, roce_attr(dgid, 3, 0));
        ASSERT_NE(nullptr, a);
    }
    destroy(ah[0]);
    destroy(ah[1]);

    c = uct_ib_emu_counters();
    EXPECT_EQ(3u, c.ah_created);
    EXPECT_EQ(2u, c.ah_destroyed);
    EXPECT_EQ(1u, c.ah_alive);
    EXPECT_EQ(0u, c.ah_reclaimed);
    EXPECT_EQ(EBUSY, uct_ib_glue->dealloc_pd(m_eth_pd)) << "an AH uses it";

    destroy(ah[2]);
    c = uct_ib_emu_counters();
    EXPECT_EQ(3u, c.ah_destroyed);
    EXPECT_EQ(0u, c.ah_alive);
    EXPECT_EQ(EINVAL, uct_ib_glue->destroy_ah(ah[2])) << "already destroyed";
}

TEST_F(test_emu_ah, reclaimed_by_close)
{
    struct ibv_context *ctx = open("mlx5_1");
    struct ibv_pd *pd       = uct_ib_glue->alloc_pd(ctx);
    struct ibv_ah_attr attr = roce_attr(ipv4_gid(198, 18, 0, 1), 3, 0);
    struct ibv_ah *ah;
    uct_ib_emu_counters_t c;

    ASSERT_NE(nullptr, pd);
    ah = uct_ib_glue->create_ah(pd, &attr);
    ASSERT_NE(nullptr, ah);
    close(ctx);

    c = uct_ib_emu_counters();
    EXPECT_EQ(1u, c.ah_created);
    EXPECT_EQ(0u, c.ah_destroyed);
    EXPECT_EQ(1u, c.ah_reclaimed);
    EXPECT_EQ(0u, c.ah_alive);
    EXPECT_EQ(2u, c.objects_reclaimed);
    uct_ib_emu_counters_reset();
}

TEST_F(test_emu_ah, concurrent_create_destroy)
{
    constexpr int num_threads = 4, iterations = 200;
    union ibv_gid dgid        = ipv4_gid(198, 18, 0, 2);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};

    for (int t = 0; t < num_threads; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < iterations; ++i) {
                struct ibv_ah_attr attr = roce_attr(dgid, 3, i);
                struct ibv_ah *ah = uct_ib_glue->create_ah(m_eth_pd, &attr);

                if ((ah == nullptr) || (av_of(ah).rmac[5] != 0x02) ||
                    (uct_ib_glue->destroy_ah(ah) != 0)) {
                    ++failures;
                }
            }
        });
    }
    for (auto &thread : threads) {
        thread.join();
    }

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(0, failures.load());
    EXPECT_EQ(uint64_t(num_threads * iterations), c.ah_created);
    EXPECT_EQ(c.ah_created, c.ah_destroyed);
    EXPECT_EQ(0u, c.ah_alive);
}
