/*
 * The emulated device's neighbour listeners: the fabric's neighbour table
 * changes as rtnetlink messages (read with the library's parser, the one
 * that reads the kernel's), requests answered in order, a listener that
 * falls behind told so once (ENOBUFS), and a listener left open reclaimed
 * with its context.
 */
#include "emu/emu_test.h"

#include <uct/ib/base/ib_neigh.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <set>

using namespace emu_test;

namespace {

std::string mac_str(const uct_ib_emu_mac_t &mac)
{
    char buf[18];

    snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
             mac[2], mac[3], mac[4], mac[5]);
    return buf;
}

} // namespace


class test_emu_neigh_monitor : public emu_fixture {
protected:
    void init() override
    {
        emu_fixture::init();
        m_ctx = open("mlx5_0");
        ASSERT_NE(nullptr, m_ctx);
        m_if0 = ifindex(m_ctx);
        m_ctx1 = open("mlx5_1");
        ASSERT_NE(nullptr, m_ctx1);
        m_if1 = ifindex(m_ctx1);
        m_fd  = uct_ib_glue->neigh_monitor_open(m_ctx);
        ASSERT_GE(m_fd, 0) << strerror(errno);
    }

    void cleanup() override
    {
        if (m_fd >= 0) {
            EXPECT_EQ(0, uct_ib_glue->neigh_monitor_close(m_fd));
        }
        emu_fixture::cleanup();
    }

    static uint32_t ifindex(struct ibv_context *ctx)
    {
        struct ibv_gid_entry entry = {};

        EXPECT_EQ(0, uct_ib_glue->query_gid_ex(ctx, 1, 3, &entry, 0));
        EXPECT_NE(0u, entry.ndev_ifindex);
        return entry.ndev_ifindex;
    }

    /* Every message queued now; the read ends with EAGAIN */
    std::vector<uct_ib_neigh_msg> drain()
    {
        std::vector<uct_ib_neigh_msg> msgs;
        uint8_t                       buf[8192];
        int                           len;

        for (;;) {
            len = uct_ib_glue->neigh_monitor_recv(m_fd, buf, sizeof(buf));
            if (len < 0) {
                EXPECT_EQ(EAGAIN, errno) << strerror(errno);
                return msgs;
            }
            EXPECT_TRUE(uct_ib_neigh_parse(buf, len, &msgs));
        }
    }

    void request(uint32_t seq, uint32_t ifindex, const union ibv_gid &gid)
    {
        uint8_t req[128];
        size_t  len = uct_ib_neigh_build_get(seq, ifindex,
                                             uct_ib_neigh_addr_of_gid(gid),
                                             req, sizeof(req));

        ASSERT_EQ(0, uct_ib_glue->neigh_monitor_request(m_fd, req, len))
                << strerror(errno);
    }

    static std::string mac_of(const uct_ib_neigh_msg &msg)
    {
        uct_ib_emu_mac_t mac;

        memcpy(mac.data(), msg.lladdr, 6);
        return mac_str(mac);
    }

    struct ibv_context *m_ctx  = nullptr, *m_ctx1 = nullptr;
    uint32_t           m_if0   = 0, m_if1 = 0;
    int                m_fd    = -1;
};

TEST_F(test_emu_neigh_monitor, changes_of_the_table_are_told_once_per_port)
{
    const union ibv_gid    gid = ipv4_gid(198, 18, 0, 9);
    const uct_ib_emu_mac_t mac = {0x02, 0xc9, 0, 0, 0, 0x09};

    EXPECT_TRUE(drain().empty()) << "nothing before the listener opened";

    uct_ib_emu_neigh_set("eth0", gid, mac);
    auto msgs = drain();
    ASSERT_EQ(2u, msgs.size()) << "mlx5_0 and mlx5_1 are both on eth0";
    std::set<uint32_t> ifindexes;
    for (const uct_ib_neigh_msg &msg : msgs) {
        EXPECT_EQ(uct_ib_neigh_msg::NEW, msg.kind);
        EXPECT_TRUE(msg.resolved());
        EXPECT_EQ(0u, msg.seq) << "an event, not an answer";
        EXPECT_EQ("198.18.0.9", uct_ib_neigh_addr_str(msg.dst));
        EXPECT_EQ(mac_str(mac), mac_of(msg));
        ifindexes.insert(msg.ifindex);
    }
    EXPECT_EQ((std::set<uint32_t>{m_if0, m_if1}), ifindexes);

    uct_ib_emu_neigh_set("eth0", gid, mac);
    EXPECT_TRUE(drain().empty()) << "the same MAC again changes nothing";

    uct_ib_emu_neigh_set("other", gid, mac);
    EXPECT_TRUE(drain().empty()) << "no port of this host is on 'other'";

    ASSERT_EQ(UCS_OK, uct_ib_emu_neigh_del("eth0", gid));
    msgs = drain();
    ASSERT_EQ(2u, msgs.size());
    for (const uct_ib_neigh_msg &msg : msgs) {
        EXPECT_EQ(uct_ib_neigh_msg::DEL, msg.kind);
        EXPECT_FALSE(msg.resolved());
        EXPECT_EQ("198.18.0.9", uct_ib_neigh_addr_str(msg.dst));
    }
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_neigh_del("eth0", gid));
    EXPECT_TRUE(drain().empty());
}

TEST_F(test_emu_neigh_monitor, a_moved_port_is_told_for_each_of_its_addresses)
{
    const uct_ib_emu_mac_t moved = {0x02, 0xc9, 0, 0, 0, 0x22};
    std::set<std::string>  addrs;

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_1", 1, moved, false));
    EXPECT_TRUE(drain().empty()) << "no gratuitous ARP, no change";

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_1", 1, moved, true));
    auto msgs = drain();
    for (const uct_ib_neigh_msg &msg : msgs) {
        EXPECT_EQ(uct_ib_neigh_msg::NEW, msg.kind);
        EXPECT_EQ(mac_str(moved), mac_of(msg));
        addrs.insert(uct_ib_neigh_addr_str(msg.dst));
    }
    EXPECT_EQ(4u, msgs.size()) << "two addresses, two ports on the segment";
    EXPECT_EQ(1u, addrs.count("198.18.0.2"));
    EXPECT_EQ(2u, addrs.size()) << "the IPv4 one and the link-local one";
}

TEST_F(test_emu_neigh_monitor, a_request_is_answered_after_the_events_before_it)
{
    const uct_ib_emu_mac_t mac = {0x02, 0xc9, 0, 0, 0, 0x09};

    uct_ib_emu_neigh_set("eth0", ipv4_gid(198, 18, 0, 9), mac);
    request(11, m_if0, ipv4_gid(198, 18, 0, 2));
    auto msgs = drain();
    ASSERT_EQ(3u, msgs.size());
    EXPECT_EQ(0u, msgs[0].seq);
    EXPECT_EQ(0u, msgs[1].seq);
    EXPECT_EQ(11u, msgs[2].seq) << "the answer comes last";
    EXPECT_EQ(uct_ib_neigh_msg::NEW, msgs[2].kind);
    EXPECT_EQ(m_if0, msgs[2].ifindex);
    EXPECT_EQ("198.18.0.2", uct_ib_neigh_addr_str(msgs[2].dst));
    EXPECT_EQ("02:c9:00:00:00:02", mac_of(msgs[2]));

    request(12, m_if0, ipv4_gid(198, 18, 0, 77));
    msgs = drain();
    ASSERT_EQ(1u, msgs.size());
    EXPECT_EQ(uct_ib_neigh_msg::ERROR, msgs[0].kind);
    EXPECT_EQ(ENOENT, msgs[0].error) << "no such neighbour";

    request(13, 999, ipv4_gid(198, 18, 0, 2));
    msgs = drain();
    ASSERT_EQ(1u, msgs.size());
    EXPECT_EQ(ENODEV, msgs[0].error) << "no such interface on this host";

    uint8_t req[128];
    size_t  len = uct_ib_neigh_build_get(14, m_if0,
                                         uct_ib_neigh_addr_of_gid(
                                                 ipv4_gid(198, 18, 0, 2)),
                                         req, sizeof(req));
    reinterpret_cast<struct nlmsghdr*>(req)->nlmsg_flags |= NLM_F_DUMP;
    errno = 0;
    EXPECT_EQ(-1, uct_ib_glue->neigh_monitor_request(m_fd, req, len));
    EXPECT_EQ(EOPNOTSUPP, errno);
    EXPECT_EQ(-1, uct_ib_glue->neigh_monitor_request(m_fd + 100, req, len));
    EXPECT_EQ(EBADF, errno);
}

TEST_F(test_emu_neigh_monitor, a_listener_that_falls_behind_is_told_once)
{
    uint8_t buf[8192];

    for (unsigned i = 0; i < 300; ++i) { /* more than the ring holds */
        uct_ib_emu_mac_t mac = {0x02, 0xc9, 0, 1, uint8_t(i >> 8), uint8_t(i)};
        uct_ib_emu_neigh_set("eth0", ipv4_gid(198, 18, 0, 9), mac);
    }

    errno = 0;
    EXPECT_EQ(-1, uct_ib_glue->neigh_monitor_recv(m_fd, buf, sizeof(buf)));
    EXPECT_EQ(ENOBUFS, errno);

    auto msgs = drain();
    ASSERT_FALSE(msgs.empty()) << "what the ring still held";
    EXPECT_EQ("02:c9:00:01:01:2b", mac_of(msgs.back())) << "the newest";
}

TEST_F(test_emu_neigh_monitor, a_listener_left_open_goes_with_its_context)
{
    int fd = uct_ib_glue->neigh_monitor_open(m_ctx1);

    ASSERT_GE(fd, 0);
    close(m_ctx1);
    EXPECT_EQ(1u, uct_ib_emu_counters().objects_reclaimed);
    EXPECT_EQ(-1, uct_ib_glue->neigh_monitor_close(fd));
    EXPECT_EQ(EBADF, errno);
    uct_ib_emu_counters_reset();
}

TEST_F(test_emu_neigh_monitor, open_on_an_unknown_context_is_refused)
{
    struct ibv_context bogus = {};

    errno = 0;
    EXPECT_EQ(-1, uct_ib_glue->neigh_monitor_open(&bogus));
    EXPECT_EQ(EINVAL, errno);
}
