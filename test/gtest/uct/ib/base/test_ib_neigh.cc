/*
 * Neighbour messages: the parser against datagrams built here byte by byte
 * as rtnetlink words them, and the kernel's own socket through the rdma-core
 * glue slots (its answer to a request is queued before the send returns:
 * the AV cache's ordering rests on it).
 */
#include <common/test.h>

#include <uct/api/tools/ib_glue.h>
#include <uct/ib/base/ib_neigh.h>

#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace {

std::vector<uint8_t> message(uint16_t type, uint32_t seq, int family,
                             int ifindex, uint16_t state,
                             const std::vector<uint8_t> &dst,
                             const std::vector<uint8_t> &lladdr)
{
    std::vector<uint8_t> msg(NLMSG_SPACE(sizeof(struct ndmsg)), 0);
    auto add = [&](uint16_t attr, const std::vector<uint8_t> &data) {
        size_t        off = msg.size();
        struct rtattr rta;

        msg.resize(off + RTA_SPACE(data.size()), 0);
        rta.rta_type = attr;
        rta.rta_len  = static_cast<unsigned short>(RTA_LENGTH(data.size()));
        memcpy(&msg[off], &rta, sizeof(rta));
        memcpy(&msg[off + RTA_LENGTH(0)], data.data(), data.size());
    };
    struct nlmsghdr nlh = {};
    struct ndmsg    nd  = {};

    add(NDA_DST, dst);
    if (!lladdr.empty()) {
        add(NDA_LLADDR, lladdr);
    }
    nlh.nlmsg_len   = static_cast<uint32_t>(msg.size());
    nlh.nlmsg_type  = type;
    nlh.nlmsg_seq   = seq;
    nd.ndm_family   = static_cast<uint8_t>(family);
    nd.ndm_ifindex  = ifindex;
    nd.ndm_state    = state;
    memcpy(&msg[0], &nlh, sizeof(nlh));
    memcpy(&msg[NLMSG_LENGTH(0)], &nd, sizeof(nd));
    return msg;
}

const std::vector<uint8_t> ip_10_0_0_2 = {10, 0, 0, 2};
const std::vector<uint8_t> mac_b       = {0x02, 0, 0, 0, 0, 0x0b};

} // namespace

TEST(test_ib_neigh, gid_and_address_map_both_ways)
{
    union ibv_gid     v4 = {}, v6 = {};
    uct_ib_neigh_addr addr;

    v4.raw[10] = v4.raw[11] = 0xff;
    v4.raw[12] = 10;
    v4.raw[15] = 2;
    addr       = uct_ib_neigh_addr_of_gid(v4);
    EXPECT_EQ(AF_INET, addr.family);
    EXPECT_EQ(4, addr.len);
    EXPECT_EQ("10.0.0.2", uct_ib_neigh_addr_str(addr));
    EXPECT_EQ(0, memcmp(v4.raw, uct_ib_neigh_addr_gid(addr).raw, 16));

    ASSERT_EQ(1, inet_pton(AF_INET6, "fe80::2", v6.raw));
    addr = uct_ib_neigh_addr_of_gid(v6);
    EXPECT_EQ(AF_INET6, addr.family);
    EXPECT_EQ("fe80::2", uct_ib_neigh_addr_str(addr));
    EXPECT_EQ(0, memcmp(v6.raw, uct_ib_neigh_addr_gid(addr).raw, 16));
}

TEST(test_ib_neigh, parses_changes_removals_and_refusals_in_order)
{
    std::vector<uint8_t> datagram, del, refusal(NLMSG_SPACE(sizeof(struct nlmsgerr)), 0);
    std::vector<uct_ib_neigh_msg> msgs;
    struct nlmsghdr err_hdr = {};
    struct nlmsgerr err     = {};

    datagram = message(RTM_NEWNEIGH, 0, AF_INET, 7, NUD_REACHABLE, ip_10_0_0_2,
                       mac_b);
    del      = message(RTM_DELNEIGH, 0, AF_INET, 7, NUD_STALE, ip_10_0_0_2,
                       mac_b);
    datagram.insert(datagram.end(), del.begin(), del.end());
    err_hdr.nlmsg_len  = static_cast<uint32_t>(refusal.size());
    err_hdr.nlmsg_type = NLMSG_ERROR;
    err_hdr.nlmsg_seq  = 42;
    err.error          = -ENOENT;
    memcpy(&refusal[0], &err_hdr, sizeof(err_hdr));
    memcpy(&refusal[NLMSG_LENGTH(0)], &err, sizeof(err));
    datagram.insert(datagram.end(), refusal.begin(), refusal.end());

    ASSERT_TRUE(uct_ib_neigh_parse(datagram.data(), datagram.size(), &msgs));
    ASSERT_EQ(3u, msgs.size());

    EXPECT_EQ(uct_ib_neigh_msg::NEW, msgs[0].kind);
    EXPECT_EQ(7u, msgs[0].ifindex);
    EXPECT_EQ("10.0.0.2", uct_ib_neigh_addr_str(msgs[0].dst));
    ASSERT_TRUE(msgs[0].has_lladdr);
    EXPECT_EQ(0, memcmp(mac_b.data(), msgs[0].lladdr, 6));
    EXPECT_TRUE(msgs[0].resolved());

    EXPECT_EQ(uct_ib_neigh_msg::DEL, msgs[1].kind);
    EXPECT_FALSE(msgs[1].resolved()) << "a removed entry gives no MAC";

    EXPECT_EQ(uct_ib_neigh_msg::ERROR, msgs[2].kind);
    EXPECT_EQ(42u, msgs[2].seq);
    EXPECT_EQ(ENOENT, msgs[2].error);
}

TEST(test_ib_neigh, failed_and_unresolved_entries_give_no_mac)
{
    for (uint16_t state : {NUD_FAILED, NUD_INCOMPLETE}) {
        std::vector<uint8_t> msg = message(RTM_NEWNEIGH, 0, AF_INET, 7, state,
                                           ip_10_0_0_2, {});
        std::vector<uct_ib_neigh_msg> msgs;

        ASSERT_TRUE(uct_ib_neigh_parse(msg.data(), msg.size(), &msgs));
        ASSERT_EQ(1u, msgs.size());
        EXPECT_FALSE(msgs[0].resolved()) << "state 0x" << std::hex << state;
    }
}

TEST(test_ib_neigh, other_families_are_skipped_and_cut_messages_refused)
{
    std::vector<uint8_t> bridge = message(RTM_NEWNEIGH, 0, AF_BRIDGE, 7,
                                          NUD_REACHABLE, mac_b, mac_b);
    std::vector<uint8_t> good   = message(RTM_NEWNEIGH, 0, AF_INET, 7,
                                          NUD_REACHABLE, ip_10_0_0_2, mac_b);
    std::vector<uct_ib_neigh_msg> msgs;

    EXPECT_TRUE(uct_ib_neigh_parse(bridge.data(), bridge.size(), &msgs));
    EXPECT_TRUE(msgs.empty()) << "a bridge FDB entry is no IP neighbour";

    EXPECT_FALSE(uct_ib_neigh_parse(good.data(), good.size() - 4, &msgs))
            << "a message cut short";

    std::vector<uint8_t> cut = good; /* its header agrees, its attribute not */
    uint32_t len             = static_cast<uint32_t>(cut.size() - 4);
    memcpy(&cut[0], &len, sizeof(len));
    cut.resize(len);
    EXPECT_FALSE(uct_ib_neigh_parse(cut.data(), cut.size(), &msgs))
            << "an attribute cut short";
    EXPECT_FALSE(uct_ib_neigh_parse(good.data(), NLMSG_HDRLEN + 2, &msgs));
}

TEST(test_ib_neigh, request_is_an_rtm_getneigh_of_one_address)
{
    union ibv_gid     gid = {};
    uint8_t           buf[128];
    size_t            len;
    uct_ib_neigh_addr dst;

    gid.raw[10] = gid.raw[11] = 0xff;
    gid.raw[12] = 10;
    gid.raw[15] = 2;
    dst         = uct_ib_neigh_addr_of_gid(gid);
    EXPECT_EQ(0u, uct_ib_neigh_build_get(5, 3, dst, buf, 8)) << "too small";
    len = uct_ib_neigh_build_get(5, 3, dst, buf, sizeof(buf));
    ASSERT_GT(len, 0u);

    auto *nlh = reinterpret_cast<struct nlmsghdr*>(buf);
    auto *nd  = static_cast<struct ndmsg*>(NLMSG_DATA(nlh));
    EXPECT_EQ(len, nlh->nlmsg_len);
    EXPECT_EQ(RTM_GETNEIGH, nlh->nlmsg_type);
    EXPECT_EQ(NLM_F_REQUEST, nlh->nlmsg_flags) << "one entry, not a dump";
    EXPECT_EQ(5u, nlh->nlmsg_seq);
    EXPECT_EQ(AF_INET, nd->ndm_family);
    EXPECT_EQ(3, nd->ndm_ifindex);
}

/* The kernel's own socket: a request about an address no interface has is
 * refused, and the refusal is queued before the send returns */
TEST(test_ib_neigh, kernel_answers_a_request_before_the_send_returns)
{
    const uct_ib_glue_ops_t &kernel = uct_ib_glue_rdma_core_ops;
    union ibv_gid           gid     = {};
    std::vector<uct_ib_neigh_msg> msgs;
    uint8_t                 req[128], buf[8192];
    size_t                  len;
    int                     fd, got;

    fd = kernel.neigh_monitor_open(nullptr);
    if (fd < 0) {
        GTEST_SKIP() << "no rtnetlink socket here: " << strerror(errno);
    }

    /* 192.0.2.1 (TEST-NET-1) on the loopback interface, which has no
     * neighbours (NOARP) */
    gid.raw[10] = gid.raw[11] = 0xff;
    gid.raw[12] = 192;
    gid.raw[14] = 2;
    gid.raw[15] = 1;
    len = uct_ib_neigh_build_get(77, 1, uct_ib_neigh_addr_of_gid(gid), req,
                                 sizeof(req));
    ASSERT_EQ(0, kernel.neigh_monitor_request(fd, req, len)) << strerror(errno);

    do {
        got = kernel.neigh_monitor_recv(fd, buf, sizeof(buf));
        ASSERT_GE(got, 0) << "nothing queued when the send returned: "
                          << strerror(errno);
        ASSERT_TRUE(uct_ib_neigh_parse(buf, got, &msgs));
    } while (msgs.empty() || (msgs.back().seq != 77));

    EXPECT_EQ(uct_ib_neigh_msg::ERROR, msgs.back().kind);
    EXPECT_EQ(ENOENT, msgs.back().error) << strerror(msgs.back().error);

    errno = 0;
    got   = kernel.neigh_monitor_recv(fd, buf, sizeof(buf));
    EXPECT_TRUE((got < 0) && (errno == EAGAIN)) << "the socket does not block";
    EXPECT_EQ(0, kernel.neigh_monitor_close(fd));
}
