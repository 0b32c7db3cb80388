/*
 * Memory export through UMR (UCX_IB_MLX5_UMR) through the public UCT API on
 * the emulated device: the UMR QP loops back through the GID the interfaces
 * select, a probe that cannot complete costs one bounded wait and one
 * warning and leaves registration and mkey packing working, and every later
 * operation is bounded too.
 */
#include "uct/ib/ib_emu_test.h"
#include "uct/uct_test_util.h"

#include <uct/api/uct.h>

#include <cstring>
#include <utility>
#include <vector>

namespace {

using namespace ib_test;

typedef std::vector<std::pair<std::string, std::string>> knobs_t;

/* The UMR timeout the failure tests set, and the slack they allow around
 * it for scheduling (scaled under valgrind and sanitizers) */
constexpr double UMR_TIMEOUT     = 0.2;
const char       *UMR_TIMEOUT_STR = "0.2s";
constexpr double SLACK           = 0.3;

constexpr uint8_t QP_STATE_RTS    = 0x3; /* PRM qpc.state */

double elapsed_since(ucs_time_t start)
{
    return ucs_time_to_sec(ucs_get_time() - start);
}

class umr_md {
public:
    umr_md() = default;

    ~umr_md()
    {
        close();
    }

    umr_md(const umr_md&)            = delete;
    umr_md &operator=(const umr_md&) = delete;

    ucs_status_t open(const std::string &dev, const knobs_t &knobs)
    {
        uct_component_h ib = component();
        uct_md_config_t *config;
        ucs_status_t    status;

        if (ib == nullptr) {
            return UCS_ERR_NO_DEVICE;
        }

        status = uct_md_config_read(ib, nullptr, nullptr, &config);
        if (status != UCS_OK) {
            return status;
        }

        for (const auto &knob : knobs) {
            status = uct_config_modify(config, knob.first.c_str(),
                                       knob.second.c_str());
            if (status != UCS_OK) {
                uct_config_release(config);
                return status;
            }
        }

        status = uct_md_open(ib, dev.c_str(), config, &m_md);
        uct_config_release(config);
        return status;
    }

    void close()
    {
        for (uct_mem_h memh : m_memhs) {
            EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
        }
        m_memhs.clear();
        if (m_md != nullptr) {
            uct_md_close(m_md);
            m_md = nullptr;
        }
    }

    /* Register buf; the memory handle or NULL */
    uct_mem_h reg(void *buf, size_t length)
    {
        uct_mem_h memh = nullptr;

        EXPECT_EQ(UCS_OK, uct_md_mem_reg(m_md, buf, length,
                                         UCT_MD_MEM_ACCESS_ALL, &memh));
        if (memh != nullptr) {
            m_memhs.push_back(memh);
        }
        return memh;
    }

    void dereg(uct_mem_h memh)
    {
        m_memhs.erase(std::remove(m_memhs.begin(), m_memhs.end(), memh),
                      m_memhs.end());
        EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
    }

    /* The remote key uct_md_mkey_pack() packs for memh */
    uint32_t rkey(uct_mem_h memh)
    {
        uct_md_attr_t attr = {};
        uint64_t      packed;

        EXPECT_EQ(UCS_OK, uct_md_query(m_md, &attr));
        EXPECT_EQ(sizeof(packed), attr.rkey_packed_size);
        EXPECT_EQ(UCS_OK, uct_md_mkey_pack(m_md, memh, &packed));
        EXPECT_EQ(packed >> 32, packed & 0xffffffffu) << "the key, twice";
        return static_cast<uint32_t>(packed);
    }

private:
    static uct_component_h component()
    {
        return ucs::find_component("ib");
    }

    uct_md_h               m_md = nullptr;
    std::vector<uct_mem_h> m_memhs;
};

uct_ib_emu_mkey_info_t mkey_info(uint32_t key)
{
    uct_ib_emu_mkey_info_t info = {};

    EXPECT_EQ(UCS_OK, uct_ib_emu_mkey_info(key, &info)) << "key 0x" << std::hex
                                                         << key;
    return info;
}

/* The key is an indirect mkey that a UMR bound to exactly buf */
void expect_exported(uint32_t rkey, const void *buf, size_t length,
                     uct_ib_emu_qp_info_t *umr_qp_p = nullptr)
{
    uct_ib_emu_mkey_info_t info = mkey_info(rkey);
    uct_ib_emu_mkey_info_t mr;

    ASSERT_TRUE(info.indirect) << "the MR's own key was packed";
    ASSERT_TRUE(info.bound);
    EXPECT_EQ(length, info.length);
    ASSERT_EQ(1u, info.entries.size());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf), info.entries[0].addr);
    EXPECT_EQ(length, info.entries[0].length);
    mr = mkey_info(info.entries[0].lkey);
    EXPECT_FALSE(mr.indirect) << "bound to the registration's MR";
    if (umr_qp_p != nullptr) {
        ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(info.bound_by_qpn, umr_qp_p));
    }
}

/* Exactly one line at level containing every one of texts */
void expect_one_line(const ucs::scoped_log_capture &log, ucs_log_level_t level,
                     std::initializer_list<const char*> texts)
{
    std::vector<ucs::log_line> lines = log.lines();
    unsigned                   at_level = 0;

    for (const ucs::log_line &line : lines) {
        if (line.level != level) {
            continue;
        }
        ++at_level;
        for (const char *text : texts) {
            EXPECT_NE(std::string::npos, line.message.find(text))
                    << "'" << text << "' not in: " << line.message;
        }
    }
    EXPECT_EQ(1u, at_level) << log.dump();
    EXPECT_EQ(1u, lines.size()) << "nothing else: " << log.dump();
}

} // namespace


/* Export on every link layer, through the GID auto selection picks */
class test_umr_link : public link_test {
};

TEST_P(test_umr_link, exports_through_the_selected_gid)
{
    alignas(64) static uint8_t buf[8192];
    uct_ib_emu_qp_info_t       qp = {};
    umr_md                     md;
    uct_mem_h                  memh;
    uint32_t                   rkey;

    ASSERT_EQ(UCS_OK, md.open(a().dev, {{"MLX5_UMR", "y"}}));
    memh = md.reg(buf, sizeof(buf));
    ASSERT_NE(nullptr, memh);
    rkey = md.rkey(memh);
    expect_exported(rkey, buf, sizeof(buf), &qp);

    EXPECT_EQ(QP_STATE_RTS, qp.state);
    EXPECT_EQ(qp.qpn, qp.remote_qpn) << "connected to itself";
    if (roce()) {
        EXPECT_EQ(expected_gid_index(), qp.primary.src_addr_index);
        EXPECT_EQ(0, memcmp(expected_gid(a()).raw, qp.primary.rgid.data(), 16));
        EXPECT_EQ(a().mac, qp.primary.rmac);
    } else {
        EXPECT_EQ(a().lid, qp.primary.rlid);
    }

    /* release invalidates, and the pool hands the same mkey out again */
    md.dereg(memh);
    EXPECT_FALSE(mkey_info(rkey).bound);
    memh = md.reg(buf, sizeof(buf) / 2);
    ASSERT_NE(nullptr, memh);
    EXPECT_EQ(rkey, md.rkey(memh));
    expect_exported(rkey, buf, sizeof(buf) / 2);

    md.close();
    EXPECT_EQ(0u, uct_ib_emu_counters().mkeys_alive);
    EXPECT_EQ(0u, uct_ib_emu_counters().drops.size());
}

UCT_IB_INSTANTIATE_LINK_TEST(test_umr_link);


class test_umr : public emu_test {
protected:
    /* The fabric of the issue: RoCEv2 ports that drop RoCEv1 */
    void drop_roce_v1()
    {
        ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop(eth_a.dev, 1, true, false));
        ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop(eth_b.dev, 1, true, false));
    }

    static unsigned qps()
    {
        unsigned count = 0;

        for (const auto &entry : uct_ib_emu_counters().qps_by_state) {
            count += entry.second;
        }
        return count;
    }
};

TEST_F(test_umr, off_by_default)
{
    alignas(64) static uint8_t buf[4096];
    umr_md                     md;
    uct_mem_h                  memh;

    ASSERT_EQ(UCS_OK, md.open(eth_a.dev, {}));
    memh = md.reg(buf, sizeof(buf));
    ASSERT_NE(nullptr, memh);
    EXPECT_FALSE(mkey_info(md.rkey(memh)).indirect) << "the MR's own key";
    EXPECT_EQ(0u, qps());
    EXPECT_EQ(0u, uct_ib_emu_counters().mkeys_alive);
}

TEST_F(test_umr, roce_v2_port_dropping_roce_v1_exports)
{
    alignas(64) static uint8_t buf[4096];
    uct_ib_emu_qp_info_t       qp = {};
    umr_md                     md;
    uct_mem_h                  memh;

    drop_roce_v1();
    ASSERT_EQ(UCS_OK, md.open(eth_a.dev, {{"MLX5_UMR", "y"}}));
    memh = md.reg(buf, sizeof(buf));
    ASSERT_NE(nullptr, memh);
    expect_exported(md.rkey(memh), buf, sizeof(buf), &qp);
    EXPECT_EQ(3u, qp.primary.src_addr_index) << "RoCEv2 on IPv4, not GID 0";
    EXPECT_EQ(0u, uct_ib_emu_counters().drop_count(UCT_IB_EMU_DROP_ROCE_V1));
}

/*
 * The seed's failure: the UMR QP connected through GID index 0, RoCEv1, on
 * a port that drops RoCEv1. Here the index comes from UCX_IB_GID_INDEX=0:
 * the probe cannot complete, and costs one bounded wait and one warning.
 */
TEST_F(test_umr, gid_index_0_probe_fails_once_and_falls_back)
{
    alignas(64) static uint8_t buf[4096];
    ucs::scoped_setenv         gid_env("UCX_IB_GID_INDEX", "0");
    umr_md                     md;
    uct_mem_h                  memh, memh2;
    ucs_time_t                 start;
    double                     first, second, close;

    drop_roce_v1();
    ASSERT_EQ(UCS_OK, md.open(eth_a.dev, {{"MLX5_UMR", "y"},
                                          {"MLX5_UMR_TIMEOUT",
                                           UMR_TIMEOUT_STR}}));
    {
        ucs::scoped_log_capture log(UCS_LOG_LEVEL_WARN);

        start = ucs_get_time();
        memh  = md.reg(buf, sizeof(buf));
        first = elapsed_since(start);
        ASSERT_NE(nullptr, memh);

        start  = ucs_get_time();
        memh2  = md.reg(buf, sizeof(buf) / 2);
        second = elapsed_since(start);
        ASSERT_NE(nullptr, memh2);

        expect_one_line(log, UCS_LOG_LEVEL_WARN,
                        {"mlx5_0:1", "GID index 0", "RoCE v1",
                         "did not complete within 0.200 s",
                         "memory export disabled"});
    }

    /* registration and packing work, with the MRs' own keys */
    EXPECT_FALSE(mkey_info(md.rkey(memh)).indirect);
    EXPECT_FALSE(mkey_info(md.rkey(memh2)).indirect);
    EXPECT_GE(uct_ib_emu_counters().drop_count(UCT_IB_EMU_DROP_ROCE_V1), 1u);

    EXPECT_GE(first, UMR_TIMEOUT * 0.99) << "the probe waited its timeout";
    EXPECT_LT(first, UMR_TIMEOUT + SLACK * ucs::test_time_multiplier())
            << "bounded by the probe timeout";
    EXPECT_LT(second, UMR_TIMEOUT) << "the second registration waited again";

    /* the probe's QP is gone already; closing waits for nothing */
    EXPECT_EQ(0u, qps());
    start = ucs_get_time();
    md.close();
    close = elapsed_since(start);
    EXPECT_LT(close, UMR_TIMEOUT);
    EXPECT_EQ(0u, uct_ib_emu_counters().mkeys_alive);
}

TEST_F(test_umr, injected_probe_failure_falls_back)
{
    alignas(64) static uint8_t buf[4096];
    umr_md                     md;
    uct_mem_h                  memh;
    ucs_time_t                 start;

    UCS_SKIP_ON_HWPATH("the fault is armed on the emulated glue table's "
                       "wr_complete slot; an rdma-core program completes "
                       "through the QP's own function instead");
    ASSERT_EQ(UCS_OK, md.open(eth_a.dev, {{"MLX5_UMR", "y"},
                                          {"MLX5_UMR_TIMEOUT",
                                           UMR_TIMEOUT_STR}}));
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("wr_complete", 1, EIO));
    {
        ucs::scoped_log_capture log(UCS_LOG_LEVEL_WARN);

        start = ucs_get_time();
        memh  = md.reg(buf, sizeof(buf));
        ASSERT_NE(nullptr, memh);
        EXPECT_LT(elapsed_since(start), UMR_TIMEOUT) << "nothing to wait for";
        expect_one_line(log, UCS_LOG_LEVEL_WARN,
                        {"mlx5_0:1", "GID index 3", "RoCE v2",
                         "Input/output error"});
    }

    EXPECT_FALSE(mkey_info(md.rkey(memh)).indirect);
    EXPECT_EQ(0u, uct_ib_emu_pending_faults());
    EXPECT_EQ(0u, qps());
}

/* The device completes the probe's bind with an error: one warning naming
 * the completion status and vendor syndrome, and the MR's key is kept */
TEST_F(test_umr, probe_completion_error_falls_back)
{
    alignas(64) static uint8_t buf[4096];
    umr_md                     md;
    uct_mem_h                  memh;

    ASSERT_EQ(UCS_OK, md.open(eth_a.dev, {{"MLX5_UMR", "y"},
                                          {"MLX5_UMR_TIMEOUT",
                                           UMR_TIMEOUT_STR}}));
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_wr(1, IBV_WC_LOC_PROT_ERR, 0x32));
    {
        ucs::scoped_log_capture log(UCS_LOG_LEVEL_WARN);

        memh = md.reg(buf, sizeof(buf));
        ASSERT_NE(nullptr, memh);
        expect_one_line(log, UCS_LOG_LEVEL_WARN,
                        {"mlx5_0:1", "GID index 3", "RoCE v2",
                         "completed with error: IBV_WC_LOC_PROT_ERR",
                         "vendor syndrome 0x32", "memory export disabled"});
    }

    EXPECT_FALSE(mkey_info(md.rkey(memh)).indirect);
    EXPECT_EQ(0u, uct_ib_emu_pending_faults());
    EXPECT_EQ(0u, qps());
}

/* After a good probe, an operation that cannot complete is bounded by the
 * timeout, revokes its key and disables export once */
TEST_F(test_umr, later_timeout_is_bounded_and_disables_export)
{
    alignas(64) static uint8_t buf[4096];
    umr_md                     md;
    uct_mem_h                  memh, memh2;
    uint32_t                   rkey;
    uct_ib_emu_mkey_info_t     info;
    ucs_time_t                 start;
    double                     release;

    ASSERT_EQ(UCS_OK, md.open(eth_a.dev, {{"MLX5_UMR", "y"},
                                          {"MLX5_UMR_TIMEOUT",
                                           UMR_TIMEOUT_STR}}));
    memh = md.reg(buf, sizeof(buf));
    ASSERT_NE(nullptr, memh);
    rkey = md.rkey(memh);
    expect_exported(rkey, buf, sizeof(buf));

    /* the network stops carrying the UMR QP's RoCEv2 loopback */
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop(eth_a.dev, 1, false, true));
    {
        ucs::scoped_log_capture log(UCS_LOG_LEVEL_WARN);

        start   = ucs_get_time();
        md.dereg(memh);
        release = elapsed_since(start);

        start = ucs_get_time();
        memh2 = md.reg(buf, sizeof(buf));
        ASSERT_NE(nullptr, memh2);
        EXPECT_LT(elapsed_since(start), UMR_TIMEOUT) << "waited again";

        expect_one_line(log, UCS_LOG_LEVEL_ERROR,
                        {"mlx5_0:1", "local invalidate",
                         "did not complete within 0.200 s", "GID index 3",
                         "memory export disabled"});
    }

    EXPECT_GE(release, UMR_TIMEOUT * 0.99);
    EXPECT_LT(release, UMR_TIMEOUT + SLACK * ucs::test_time_multiplier());
    EXPECT_NE(UCS_OK, uct_ib_emu_mkey_info(rkey, &info))
            << "the exported key was revoked";
    EXPECT_FALSE(mkey_info(md.rkey(memh2)).indirect);

    /* the QP went with its pending invalidate; closing waits for nothing */
    EXPECT_EQ(0u, qps());
    start = ucs_get_time();
    md.close();
    EXPECT_LT(elapsed_since(start), UMR_TIMEOUT);
    EXPECT_EQ(0u, uct_ib_emu_counters().mkeys_alive);
}

TEST_F(test_umr, infiniband_port_exports)
{
    alignas(64) static uint8_t buf[4096];
    uct_ib_emu_qp_info_t       qp = {};
    umr_md                     md;
    uct_mem_h                  memh;

    ASSERT_EQ(UCS_OK, md.open(ib_a.dev, {{"MLX5_UMR", "y"}}));
    memh = md.reg(buf, sizeof(buf));
    ASSERT_NE(nullptr, memh);
    expect_exported(md.rkey(memh), buf, sizeof(buf), &qp);
    EXPECT_EQ(ib_a.lid, qp.primary.rlid);
    EXPECT_EQ(qp.qpn, qp.remote_qpn);
}
