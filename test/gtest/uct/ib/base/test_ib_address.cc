/*
 * Device addresses, reachability and AH attributes: pure functions, checked
 * against expectations computed here.
 */
#include <common/test.h>

#include <uct/ib/base/ib_address.h>
#include <uct/ib/base/ib_gid.h>

#include <arpa/inet.h>
#include <cstring>
#include <vector>

namespace {

union ibv_gid make_gid(const char *ip)
{
    union ibv_gid gid = {};
    uint8_t       v4[4];

    if (inet_pton(AF_INET, ip, v4) == 1) {
        gid.raw[10] = 0xff;
        gid.raw[11] = 0xff;
        memcpy(&gid.raw[12], v4, sizeof(v4));
    } else {
        EXPECT_EQ(1, inet_pton(AF_INET6, ip, gid.raw)) << ip;
    }
    return gid;
}

uct_ib_address_info_t roce(const char *ip, uct_ib_roce_version_t ver)
{
    uct_ib_address_info_t info = {};

    info.eth                   = true;
    info.gid                   = make_gid(ip);
    info.roce_info.ver         = ver;
    info.roce_info.addr_family = uct_ib_gid_is_ipv4_mapped(&info.gid) ?
                                 AF_INET : AF_INET6;
    return info;
}

uct_ib_address_info_t ib(uint16_t lid, const char *gid, bool subnet, bool if_id)
{
    uct_ib_address_info_t info = {};

    info.lid        = lid;
    info.gid        = make_gid(gid);
    info.has_subnet = subnet;
    info.has_if_id  = if_id;
    return info;
}

/* The mlx5 provider's mapping from flow label to UDP source port */
uint16_t provider_sport(uint32_t fl)
{
    return ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000;
}

} // namespace

class test_ib_address : public ucs::test_base {
protected:
    static uct_ib_address_info_t round_trip(const uct_ib_address_info_t &info,
                                            size_t expected_size)
    {
        std::vector<uint8_t>  buf(uct_ib_address_size(&info) + 8, 0xAA);
        uct_ib_address_info_t out;

        EXPECT_EQ(expected_size, uct_ib_address_size(&info));
        uct_ib_address_pack(&info, buf.data());
        for (size_t i = expected_size; i < buf.size(); ++i) {
            EXPECT_EQ(0xAA, buf[i]) << "pack wrote past its size at " << i;
        }
        uct_ib_address_unpack(buf.data(), &out);
        return out;
    }
};

TEST_F(test_ib_address, roce_round_trip)
{
    for (auto ver : {UCT_IB_DEVICE_ROCE_V1, UCT_IB_DEVICE_ROCE_V2}) {
        for (const char *ip : {"198.18.0.1", "fe80::1:2ff:fe03:405",
                               "2001:db8::7"}) {
            SCOPED_TRACE(std::string(ip) + " " + uct_ib_roce_version_str(ver));
            uct_ib_address_info_t in  = roce(ip, ver);
            uct_ib_address_info_t out = round_trip(in, 17);

            EXPECT_TRUE(out.eth);
            EXPECT_EQ(0, memcmp(in.gid.raw, out.gid.raw, 16));
            EXPECT_EQ(ver, out.roce_info.ver);
            EXPECT_EQ(in.roce_info.addr_family, out.roce_info.addr_family);
        }
    }
}

TEST_F(test_ib_address, ib_round_trip)
{
    uct_ib_address_info_t out;

    out = round_trip(ib(0x1234, "fe80::2c9:300:1:1", false, false), 3);
    EXPECT_FALSE(out.eth);
    EXPECT_EQ(0x1234, out.lid);
    EXPECT_FALSE(out.has_subnet);
    EXPECT_FALSE(out.has_if_id);
    EXPECT_EQ(UCT_IB_LINK_LOCAL_PREFIX, uct_ib_address_subnet_prefix(&out));

    out = round_trip(ib(7, "fec0:0:0:1:2c9:300:1:1", true, true), 19);
    EXPECT_EQ(7, out.lid);
    EXPECT_TRUE(out.has_subnet);
    EXPECT_TRUE(out.has_if_id);
    EXPECT_EQ(0xfec0000000000001ull, uct_ib_address_subnet_prefix(&out));
    union ibv_gid expected = make_gid("fec0:0:0:1:2c9:300:1:1");
    EXPECT_EQ(0, memcmp(expected.raw, out.gid.raw, 16));

    out = round_trip(ib(9, "fe80::2c9:300:1:1", false, true), 11);
    EXPECT_TRUE(out.has_if_id);
    expected = make_gid("fe80::2c9:300:1:1");
    EXPECT_EQ(0, memcmp(expected.raw, out.gid.raw, 16));
}

TEST_F(test_ib_address, reachability_matrix)
{
    const uct_ib_address_info_t v2_4  = roce("198.18.0.1", UCT_IB_DEVICE_ROCE_V2);
    const uct_ib_address_info_t v2_4b = roce("198.19.1.2", UCT_IB_DEVICE_ROCE_V2);
    const uct_ib_address_info_t v2_6  = roce("fe80::1", UCT_IB_DEVICE_ROCE_V2);
    const uct_ib_address_info_t v1_4  = roce("198.18.0.2", UCT_IB_DEVICE_ROCE_V1);
    const uct_ib_address_info_t v1_6  = roce("fe80::2", UCT_IB_DEVICE_ROCE_V1);
    const uct_ib_address_info_t ib_a  = ib(1, "fe80::1:1", false, false);
    const uct_ib_address_info_t ib_b  = ib(2, "fe80::1:2", false, true);
    const uct_ib_address_info_t ib_x  = ib(3, "fec0:0:0:9::3", true, true);
    const uct_ib_address_info_t ib_xn = ib(4, "fec0:0:0:9::4", true, false);

    struct row {
        const uct_ib_address_info_t *local, *remote;
        bool                        global, reachable;
        const char                  *why;
    } rows[] = {
        {&v2_4, &v2_4b, false, true,  ""},
        {&v2_4, &v2_6,  false, false, "different address family: IPv6"},
        {&v2_4, &v1_4,  false, false, "different RoCE version: RoCE v1"},
        {&v1_6, &v1_4,  false, false, "different address family: IPv4"},
        {&v1_6, &v2_6,  false, false, "different RoCE version: RoCE v2"},
        {&v1_4, &v1_4,  false, true,  ""},
        {&v2_4, &ib_a,  false, false, "different link layer"},
        {&ib_a, &v2_4,  false, false, "different link layer"},
        {&ib_a, &ib_b,  false, true,  ""},
        {&ib_a, &ib_x,  false, false, "different IB subnet"},
        {&ib_a, &ib_x,  true,  true,  ""},
        {&ib_a, &ib_xn, true,  false, "different IB subnet"},
        {&ib_x, &ib_xn, false, true,  ""},
    };

    for (const row &r : rows) {
        std::string why;
        SCOPED_TRACE(&r - rows);
        EXPECT_EQ(r.reachable, uct_ib_address_is_reachable(r.local, r.remote,
                                                           r.global, &why));
        EXPECT_EQ(0u, why.find(r.why)) << why;
    }
}

TEST_F(test_ib_address, udp_sport_per_path)
{
    for (unsigned factor : {1u, 2u, 7u, 0x4000u}) {
        for (unsigned path = 0; path < 64; ++path) {
            uint16_t sport = uct_ib_roce_udp_sport(path, factor);
            uint32_t fl    = uct_ib_roce_flow_label(sport);

            EXPECT_GE(sport, 0xC000);
            EXPECT_EQ(0xC000 | ((path * factor) & 0x3FFF), sport);
            EXPECT_NE(0u, fl) << "a zero flow label gives a random port";
            EXPECT_LT(fl, 1u << 20);
            EXPECT_EQ(sport, provider_sport(fl)) << "path " << path;
        }
    }
}

TEST_F(test_ib_address, ah_attr_roce)
{
    uct_ib_path_params_t path   = {};
    uct_ib_address_info_t v2    = roce("198.18.0.9", UCT_IB_DEVICE_ROCE_V2);
    uct_ib_address_info_t v1    = roce("fe80::9", UCT_IB_DEVICE_ROCE_V1);
    struct ibv_ah_attr    attr;

    path.port_num         = 1;
    path.gid_index        = 3;
    path.sl               = 2;
    path.traffic_class    = 106;
    path.hop_limit        = 64;
    path.roce_path_factor = 2;

    for (unsigned index = 0; index < 4; ++index) {
        uct_ib_fill_ah_attr(&path, &v2, index, &attr);
        EXPECT_EQ(1, attr.is_global);
        EXPECT_EQ(1, attr.port_num);
        EXPECT_EQ(2, attr.sl);
        EXPECT_EQ(0, attr.dlid);
        EXPECT_EQ(3, attr.grh.sgid_index);
        EXPECT_EQ(64, attr.grh.hop_limit);
        EXPECT_EQ(106, attr.grh.traffic_class);
        EXPECT_EQ(0, memcmp(v2.gid.raw, attr.grh.dgid.raw, 16));
        EXPECT_EQ(0xC000 + 2 * index, provider_sport(attr.grh.flow_label));
    }

    uct_ib_fill_ah_attr(&path, &v1, 1, &attr);
    EXPECT_EQ(1, attr.is_global);
    EXPECT_EQ(0u, attr.grh.flow_label) << "RoCEv1 has no UDP header";
    EXPECT_EQ(0, memcmp(v1.gid.raw, attr.grh.dgid.raw, 16));
}

TEST_F(test_ib_address, ah_attr_ib)
{
    uct_ib_path_params_t  path   = {};
    uct_ib_address_info_t local  = ib(5, "fe80::2c9:300:1:5", false, true);
    uct_ib_address_info_t remote = ib(0x21, "fec0:0:0:9::21", true, true);
    struct ibv_ah_attr    attr;

    path.port_num      = 1;
    path.sl            = 3;
    path.hop_limit     = 16;
    path.traffic_class = 8;
    path.subnet_prefix = UCT_IB_LINK_LOCAL_PREFIX;

    uct_ib_fill_ah_attr(&path, &local, 0, &attr);
    EXPECT_EQ(0, attr.is_global) << "same subnet: no GRH";
    EXPECT_EQ(5, attr.dlid);
    EXPECT_EQ(3, attr.sl);

    uct_ib_fill_ah_attr(&path, &remote, 0, &attr);
    EXPECT_EQ(1, attr.is_global) << "another subnet: GRH";
    EXPECT_EQ(0x21, attr.dlid);
    EXPECT_EQ(16, attr.grh.hop_limit);
    EXPECT_EQ(8, attr.grh.traffic_class);
    EXPECT_EQ(0, memcmp(remote.gid.raw, attr.grh.dgid.raw, 16));

    path.force_global = true;
    uct_ib_fill_ah_attr(&path, &local, 0, &attr);
    EXPECT_EQ(1, attr.is_global) << "forced global";
}

TEST_F(test_ib_address, subnet_filter)
{
    uct_ib_subnet_t subnet;
    union ibv_gid   in4  = make_gid("198.19.255.1");
    union ibv_gid   out4 = make_gid("198.20.0.1");
    union ibv_gid   ll6  = make_gid("fe80::1");

    ASSERT_TRUE(uct_ib_subnet_parse("198.18.0.0/15", &subnet));
    EXPECT_TRUE(uct_ib_gid_in_subnet(&in4, &subnet));
    EXPECT_FALSE(uct_ib_gid_in_subnet(&out4, &subnet));
    EXPECT_FALSE(uct_ib_gid_in_subnet(&ll6, &subnet)) << "IPv4 vs IPv6";

    ASSERT_TRUE(uct_ib_subnet_parse("fe80::/10", &subnet));
    EXPECT_TRUE(uct_ib_gid_in_subnet(&ll6, &subnet));
    EXPECT_FALSE(uct_ib_gid_in_subnet(&in4, &subnet));

    for (const char *bad : {"198.18.0.0", "198.18.0.0/33", "fe80::/129",
                            "198.18.0.0/", "nonsense/8", "1.2.3.4/8x"}) {
        EXPECT_FALSE(uct_ib_subnet_parse(bad, &subnet)) << bad;
    }
}
