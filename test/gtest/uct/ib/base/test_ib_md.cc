/*
 * The ib component, its memory domains, tl resources and GID selection
 * through the public UCT API on the emulated device.
 */
#include "uct/ib/rc/rc_api_test.h"

#include <uct/ib/base/ib_address.h>
#include <ucs/config/parser.h>

#include <algorithm>
#include <cerrno>
#include <set>

namespace {

using namespace ib_test;

std::set<std::string> md_names(uct_component_h ib)
{
    uct_component_attr_t  attr = {};
    std::set<std::string> names;

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    EXPECT_EQ(UCS_OK, uct_component_query(ib, &attr));
    std::vector<uct_md_resource_desc_t> resources(attr.md_resource_count + 1);
    attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = resources.data();
    EXPECT_EQ(UCS_OK, uct_component_query(ib, &attr));
    for (unsigned i = 0; i < attr.md_resource_count; ++i) {
        names.insert(resources[i].md_name);
    }
    return names;
}

/* "tl/device" of every tl resource of md @a md_name */
std::set<std::string> tl_resources(uct_component_h ib, const char *md_name)
{
    uct_md_config_t        *config;
    uct_md_h               md;
    uct_tl_resource_desc_t *resources;
    unsigned               count;
    std::set<std::string>  names;

    EXPECT_EQ(UCS_OK, uct_md_config_read(ib, nullptr, nullptr, &config));
    EXPECT_EQ(UCS_OK, uct_md_open(ib, md_name, config, &md));
    uct_config_release(config);
    EXPECT_EQ(UCS_OK, uct_md_query_tl_resources(md, &resources, &count));
    for (unsigned i = 0; i < count; ++i) {
        names.insert(std::string(resources[i].tl_name) + "/" +
                     resources[i].dev_name);
    }
    uct_release_tl_resource_list(resources);
    uct_md_close(md);
    return names;
}

} // namespace

class test_ib_md : public emu_test {
};

TEST_F(test_ib_md, components_list_ib_with_md_and_tl_resources)
{
    uct_component_h ib = ib_component();
    ASSERT_NE(nullptr, ib);

    EXPECT_EQ((std::set<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}),
              md_names(ib));
    EXPECT_EQ((std::set<std::string>{"gga_mlx5/mlx5_0:1", "rc_gda/mlx5_0:1",
                                     "rc_mlx5/mlx5_0:1", "rc_verbs/mlx5_0:1"}),
              tl_resources(ib, "mlx5_0"));
    EXPECT_EQ((std::set<std::string>{"gga_mlx5/mlx5_3:1", "rc_gda/mlx5_3:1",
                                     "rc_mlx5/mlx5_3:1", "rc_verbs/mlx5_3:1"}),
              tl_resources(ib, "mlx5_3"));
}

TEST_F(test_ib_md, net_devices_filter)
{
    uct_component_h ib = ib_component();
    ASSERT_NE(nullptr, ib);

    ucs::scoped_setenv env("UCX_NET_DEVICES", "mlx5_1:1,mlx5_3:1");
    EXPECT_TRUE(tl_resources(ib, "mlx5_0").empty());
    EXPECT_EQ(4u, tl_resources(ib, "mlx5_1").size()); /* the 4 transports */
    EXPECT_TRUE(tl_resources(ib, "mlx5_2").empty());
    EXPECT_EQ(4u, tl_resources(ib, "mlx5_3").size());
}

TEST_F(test_ib_md, net_devices_that_match_no_port_are_named_once)
{
    uct_component_h ib = ib_component();
    ASSERT_NE(nullptr, ib);

    const struct {
        const char *value;
        const char *said;
    } cases[] = {
        {"nonexistent:1", "UCX_NET_DEVICES=nonexistent:1: no device "
                          "'nonexistent' (devices: mlx5_0, mlx5_1, mlx5_2, "
                          "mlx5_3); it matches no port"},
        {"mlx5_1:1,mlx5_0:9", "UCX_NET_DEVICES=mlx5_1:1,mlx5_0:9: device "
                              "mlx5_0 has no port 9; it matches no port"},
        {"mlx5_0", "UCX_NET_DEVICES=mlx5_0: 'mlx5_0' is not dev:port "
                   "(e.g. mlx5_0:1) or all"},
        {"mlx5_0:x", "'mlx5_0:x': the port is not a number from 1 to 255"},
    };

    for (const auto &c : cases) {
        SCOPED_TRACE(c.value);
        ucs_config_parser_forget_reported_values();
        ucs::scoped_setenv      env("UCX_NET_DEVICES", c.value);
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);

        /* every md reads the list, and ucx_info opens each md twice */
        for (int i = 0; i < 2; ++i) {
            for (const std::string &name : md_names(ib)) {
                tl_resources(ib, name.c_str());
            }
        }
        EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, c.said))
                << capture.dump();
    }

    /* the IB_ prefix is the variable that wins, and the one named */
    ucs::scoped_setenv      generic("UCX_NET_DEVICES", "all");
    ucs::scoped_setenv      specific("UCX_IB_NET_DEVICES", "mlx9_0:1");
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
    EXPECT_TRUE(tl_resources(ib, "mlx5_0").empty());
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                "UCX_IB_NET_DEVICES=mlx9_0:1: no device "
                                "'mlx9_0'")) << capture.dump();
}

TEST_F(test_ib_md, no_devices_is_one_info_line)
{
    uct_component_h ib = ib_component();
    ASSERT_NE(nullptr, ib);

    set_topology(uct_ib_emu_topology_t());
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_INFO);
    std::set<std::string>   names;
    {
        ucs::scoped_log_level level(UCS_LOG_LEVEL_INFO);
        names = md_names(ib);
    }

    EXPECT_TRUE(names.empty());
    EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_INFO,
                                "no InfiniBand/RoCE devices found")) << capture.dump();
}

TEST_F(test_ib_md, rdma_core_without_kernel_support_is_not_an_error)
{
    /* These machines have no RDMA: the real rdma-core lists no devices */
    uct_component_h ib = ib_component();
    ASSERT_NE(nullptr, ib);
    ASSERT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_glue_rdma_core_ops));

    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
    std::set<std::string>   names = md_names(ib);
    ASSERT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_emu_glue_ops));

    if (!names.empty()) {
        UCS_TEST_SKIP_R("this machine has real RDMA devices");
    }
    EXPECT_EQ(0u, capture.lines().size()) << capture.dump();
}

/* Registration on every link layer */
class test_ib_md_reg : public rc_api_test {
};

TEST_P(test_ib_md_reg, query_register_and_pack)
{
    uct_md_h             md   = this->md(a());
    uct_md_attr_t        attr = {};
    std::vector<uint8_t> buf(8192, 0x5a);
    uct_mem_h            memh;
    uint64_t             packed;
    uct_rkey_bundle_t    bundle;

    ASSERT_NE(nullptr, md);
    ASSERT_EQ(UCS_OK, uct_md_query(md, &attr));
    EXPECT_TRUE(attr.cap.flags & UCT_MD_FLAG_REG);
    EXPECT_TRUE(attr.cap.flags & UCT_MD_FLAG_NEED_RKEY);
    EXPECT_STREQ("ib", attr.component_name);
    ASSERT_EQ(sizeof(uint64_t), attr.rkey_packed_size);

    for (unsigned flags : {0u, unsigned(UCT_MD_MEM_ACCESS_RMA),
                           unsigned(UCT_MD_MEM_ACCESS_REMOTE_PUT),
                           unsigned(UCT_MD_MEM_ACCESS_ALL)}) {
        SCOPED_TRACE(flags);
        ASSERT_EQ(UCS_OK, uct_md_mem_reg(md, buf.data(), buf.size(), flags,
                                         &memh));
        ASSERT_EQ(UCS_OK, uct_md_mkey_pack(md, memh, &packed));
        EXPECT_NE(0u, packed & 0xffffffffu);
        EXPECT_EQ(packed >> 32, packed & 0xffffffffu) << "rkey and atomic rkey";
        ASSERT_EQ(UCS_OK, uct_rkey_unpack(ib_component(), &packed, &bundle));
        EXPECT_EQ(packed, bundle.rkey);
        EXPECT_EQ(UCS_OK, uct_rkey_release(ib_component(), &bundle));
        EXPECT_EQ(UCS_OK, uct_md_mem_dereg(md, memh));
    }
}

TEST_P(test_ib_md_reg, registration_failure_says_why)
{
    uct_md_h             md = this->md(a());
    std::vector<uint8_t> buf(4096);
    uct_mem_h            memh;

    ASSERT_NE(nullptr, md);
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("reg_mr", 2, ENOMEM));
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        EXPECT_EQ(UCS_ERR_NO_MEMORY, uct_md_mem_reg(md, buf.data(), buf.size(),
                                                    0, &memh));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                    std::string("reg_mr(") + a().dev +
                                    ", address ")) << capture.dump();
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, strerror(ENOMEM)))
                << capture.dump();
    }
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        EXPECT_EQ(UCS_ERR_NO_MEMORY,
                  uct_md_mem_reg(md, buf.data(), buf.size(),
                                 UCT_MD_MEM_FLAG_HIDE_ERRORS, &memh));
        EXPECT_EQ(0u, capture.lines().size()) << capture.dump();
    }
}

UCT_IB_INSTANTIATE_LINK_TEST(test_ib_md_reg);

/* GID selection, seen by peers in the interface's device address */
class test_ib_gid : public rc_api_test {
protected:
    uct_ib_address_info_t address_of(uct_iface_h iface) const
    {
        std::vector<uint8_t>  addr = device_address(iface);
        uct_ib_address_info_t info;

        uct_ib_address_unpack(addr.data(), &info);
        return info;
    }

    void expect_gid(uct_iface_h iface, const union ibv_gid &gid,
                    uct_ib_roce_version_t ver) const
    {
        ASSERT_NE(nullptr, iface);
        uct_ib_address_info_t info = address_of(iface);

        EXPECT_EQ(0, memcmp(gid.raw, info.gid.raw, 16))
                << uct_ib_gid_str(&info.gid);
        if (roce()) {
            EXPECT_EQ(ver, info.roce_info.ver);
        }
    }

    uct_ib_roce_version_t expected_ver() const
    {
        return (GetParam() == link_layer::roce_v2) ? UCT_IB_DEVICE_ROCE_V2 :
                                                     UCT_IB_DEVICE_ROCE_V1;
    }
};

TEST_P(test_ib_gid, auto_selection)
{
    uct_iface_h iface = open_iface("rc_mlx5", a());

    ASSERT_NE(nullptr, iface);
    if (roce()) {
        expect_gid(iface, ipv4_gid(a().ipv4), expected_ver());
        EXPECT_EQ(17u, query(iface).device_addr_len);
    } else {
        EXPECT_EQ(a().lid, address_of(iface).lid);
        EXPECT_EQ(3u, query(iface).device_addr_len) << "flags + LID";
    }
}

TEST_P(test_ib_gid, knob_is_honoured)
{
    if (!roce()) {
        UCS_TEST_SKIP_R("InfiniBand has one GID here");
    }

    /* index 0: RoCEv1 link-local; 1: RoCEv2 link-local (absent on v1-only) */
    ucs::scoped_setenv env("UCX_IB_GID_INDEX", "0");

    expect_gid(open_iface("rc_mlx5", a()), link_local_gid(a().mac),
               UCT_IB_DEVICE_ROCE_V1);
}

TEST_P(test_ib_gid, missing_index_is_an_error)
{
    ucs::scoped_setenv      env("UCX_IB_GID_INDEX", "7");
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
    uct_iface_h             iface;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, try_open_iface("rc_mlx5", a(), {}, &iface));
    /* again, as every interface of the port would: still one line */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, try_open_iface("rc_mlx5", a(), {}, &iface));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                port_name(a()) + ": UCX_IB_GID_INDEX=7: the "
                                "port has no such GID index"))
            << capture.dump();
}

TEST_P(test_ib_gid, inf_index_is_refused_by_name)
{
    ucs::scoped_setenv      env("UCX_IB_GID_INDEX", "inf");
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
    uct_iface_h             iface;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, try_open_iface("rc_mlx5", a(), {}, &iface));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                "UCX_IB_GID_INDEX=inf: a GID index is a "
                                "number or \"auto\"")) << capture.dump();
    EXPECT_EQ(0u, capture.count("18446744073709551615")) << capture.dump();
}

TEST_P(test_ib_gid, falls_back_when_not_operational)
{
    if (GetParam() != link_layer::roce_v2) {
        UCS_TEST_SKIP_R("the fallback order is over RoCEv2 and RoCEv1 GIDs");
    }

    /* 3 (v2/IPv4) fails: 1 (v2/link-local); 3 and 1 fail: 2 (v1/IPv4);
     * 3, 1 and 2 fail: 0 (v1/link-local) */
    const std::pair<unsigned, std::pair<union ibv_gid, uct_ib_roce_version_t>>
    cases[] = {
        {1, {link_local_gid(a().mac), UCT_IB_DEVICE_ROCE_V2}},
        {2, {ipv4_gid(a().ipv4),      UCT_IB_DEVICE_ROCE_V1}},
        {3, {link_local_gid(a().mac), UCT_IB_DEVICE_ROCE_V1}},
    };

    for (const auto &c : cases) {
        SCOPED_TRACE(c.first);
        ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("create_ah", c.first, EHOSTUNREACH));
        uct_iface_h iface = open_iface("rc_mlx5", a());
        EXPECT_EQ(0u, uct_ib_emu_pending_faults());
        expect_gid(iface, c.second.first, c.second.second);
    }

    uct_iface_h             iface;
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("create_ah", 4, EHOSTUNREACH));
    EXPECT_EQ(UCS_ERR_NO_DEVICE, try_open_iface("rc_mlx5", a(), {}, &iface));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "no operational RoCE GID"))
            << capture.dump();
}

TEST_P(test_ib_gid, subnet_filter)
{
    if (!roce()) {
        UCS_TEST_SKIP_R("RoCE only");
    }

    {
        ucs::scoped_setenv env("UCX_IB_ROCE_SUBNETS", "fe80::/10");
        expect_gid(open_iface("rc_mlx5", a()), link_local_gid(a().mac),
                   expected_ver());
    }
    {
        ucs::scoped_setenv      env("UCX_IB_ROCE_SUBNETS", "10.0.0.0/8");
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        uct_iface_h             iface;
        EXPECT_EQ(UCS_ERR_NO_DEVICE, try_open_iface("rc_mlx5", a(), {}, &iface));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                    "no operational RoCE GID in "
                                    "UCX_IB_ROCE_SUBNETS")) << capture.dump();
    }
}

TEST_P(test_ib_gid, reachability_between_ports)
{
    uct_iface_h ia = open_iface("rc_mlx5", a());
    uct_iface_h ib = open_iface("rc_mlx5", b());
    ASSERT_TRUE(ia && ib);

    std::vector<uint8_t>             addr = device_address(ib);
    uct_iface_is_reachable_params_t  params = {};
    char                             info[256] = "";

    params.field_mask         = UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR |
                                UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING |
                                UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING_LENGTH;
    params.device_addr        = reinterpret_cast<uct_device_addr_t*>(addr.data());
    params.info_string        = info;
    params.info_string_length = sizeof(info);
    EXPECT_TRUE(uct_iface_is_reachable_v2(ia, &params)) << info;

    if (GetParam() == link_layer::roce_v2) {
        /* a RoCEv1 peer is not reachable from a RoCEv2 interface */
        ucs::scoped_setenv env("UCX_IB_GID_INDEX", "2");
        addr               = device_address(open_iface("rc_mlx5", b()));
        params.device_addr = reinterpret_cast<uct_device_addr_t*>(addr.data());
        EXPECT_FALSE(uct_iface_is_reachable_v2(ia, &params));
        EXPECT_NE(nullptr, strstr(info, "different RoCE version")) << info;
    }
}

UCT_IB_INSTANTIATE_LINK_TEST(test_ib_gid);
