/*
 * The QP command builders against the PRM facts: every field they write is
 * read back with bit positions hard-coded here (emu_test::prm, from the PRM
 * tables), and every bit they are not meant to write is still zero.
 */
#include "emu/emu_test.h"

#include <uct/ib/mlx5/dv/qp_cmd.h>

#include <functional>
#include <vector>

namespace {

using namespace emu_test;

/* Reads a command buffer with the test's own bit positions, and keeps
 * track of which bits the expectations covered. */
class decoded {
public:
    template <typename Buf>
    explicit decoded(const Buf &cmd) :
        m_buf(cmd.size()), m_covered(cmd.size() * 8, false)
    {
        memcpy(m_buf.data(), cmd.data(), cmd.size());
    }

    void expect(field f, uint64_t value, const char *name)
    {
        EXPECT_EQ(value, m_buf.get(f)) << name << " at bit " << f.offset;
        cover(f.offset, f.width);
    }

    void expect_bytes(unsigned bit_offset, const uint8_t *value, size_t len,
                      const char *name)
    {
        std::vector<uint8_t> got(len);

        m_buf.get_bytes(bit_offset, got.data(), len);
        EXPECT_EQ(std::vector<uint8_t>(value, value + len), got) << name;
        cover(bit_offset, len * 8);
    }

    /* Every bit no expectation covered is zero */
    void expect_nothing_else() const
    {
        for (size_t bit = 0; bit < m_covered.size(); ++bit) {
            if (!m_covered[bit]) {
                ASSERT_EQ(0u, m_buf.get({static_cast<unsigned>(bit), 1}))
                        << "stray bit " << bit << " (dword " << bit / 32 << ")";
            }
        }
    }

private:
    void cover(unsigned offset, unsigned width)
    {
        for (unsigned i = 0; i < width; ++i) {
            m_covered[offset + i] = true;
        }
    }

    prm_buf           m_buf;
    std::vector<bool> m_covered;
};

constexpr unsigned QPC  = prm::QPC;
constexpr unsigned PATH = prm::QPC + prm::qpc::PRIMARY_PATH;

} // namespace

class test_qp_cmd : public ucs::test_base {
protected:
    static uct_ib_mlx5_init2rtr_params_t rtr_params()
    {
        uct_ib_mlx5_init2rtr_params_t p = {};

        p.qpn         = 0xabcdef;
        p.remote_qpn  = 0x123456;
        p.port_num    = 2;
        p.mtu         = 4;
        p.log_msg_max = 30;
        p.log_rra_max = 3;
        p.min_rnr_nak = 14;
        p.access      = {true, false, true};
        return p;
    }

    static void expect_rtr_common(decoded *d, const uct_ib_mlx5_init2rtr_params_t &p)
    {
        d->expect(prm::opcode, 0x503, "opcode");
        d->expect(prm::qpn, p.qpn, "qpn");
        d->expect(prm::opt_param_mask, 0xe, "opt_param_mask RRE|RAE|RWE");
        d->expect(QPC + prm::qpc::mtu, p.mtu, "mtu");
        d->expect(QPC + prm::qpc::log_msg_max, p.log_msg_max, "log_msg_max");
        d->expect(QPC + prm::qpc::remote_qpn, p.remote_qpn, "remote_qpn");
        d->expect(QPC + prm::qpc::rre, 1, "rre");
        d->expect(QPC + prm::qpc::rwe, 0, "rwe");
        d->expect(QPC + prm::qpc::rae, 1, "rae");
        d->expect(QPC + prm::qpc::atomic_mode, 3,
                  "atomic_mode up to 8 bytes, as remote atomics are on");
        d->expect(QPC + prm::qpc::log_rra_max, p.log_rra_max, "log_rra_max");
        d->expect(QPC + prm::qpc::min_rnr_nak, p.min_rnr_nak, "min_rnr_nak");
        d->expect(PATH + prm::ads::vhca_port_num, p.port_num, "vhca_port_num");
    }
};

TEST_F(test_qp_cmd, init2rtr_roce_v2)
{
    const uint8_t                 mac[6]  = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
    const uint8_t                 gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                             0xff, 0xff, 198, 18, 3, 4};
    uct_ib_mlx5_init2rtr_params_t p       = rtr_params();
    uct_ib_mlx5_init2rtr_in_t     in;

    p.path.eth            = true;
    p.path.roce_v2        = true;
    p.path.udp_sport      = 0xc123;
    p.path.dscp           = 26;
    p.path.eth_prio       = 5;
    p.path.hop_limit      = 64;
    p.path.src_addr_index = 3;
    memcpy(p.path.rmac, mac, 6);
    memcpy(p.path.rgid, gid, 16);
    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_init2rtr("mlx5_0:1", &p, &in));

    decoded d(in);
    expect_rtr_common(&d, p);
    d.expect(PATH + prm::ads::rmac_47_32, 0x02aa, "rmac_47_32");
    d.expect(PATH + prm::ads::rmac_31_0, 0xbbccddee, "rmac_31_0");
    d.expect_bytes(PATH + prm::ads::RGID, gid, 16, "rgid_rip");
    d.expect(PATH + prm::ads::hop_limit, 64, "hop_limit");
    d.expect(PATH + prm::ads::src_addr_index, 3, "src_addr_index");
    d.expect(PATH + prm::ads::udp_sport, 0xc123, "udp_sport");
    d.expect(PATH + prm::ads::dscp, 26, "dscp");
    d.expect(PATH + prm::ads::eth_prio, 5, "eth_prio");
    d.expect_nothing_else();
}

TEST_F(test_qp_cmd, init2rtr_roce_v1_has_no_udp_fields)
{
    uct_ib_mlx5_init2rtr_params_t p = rtr_params();
    uct_ib_mlx5_init2rtr_in_t     in;

    p.path.eth            = true;
    p.path.udp_sport      = 0xc123; /* must not be written for RoCEv1 */
    p.path.dscp           = 26;
    p.path.hop_limit      = 1;
    p.path.src_addr_index = 2;
    memset(p.path.rmac, 0x11, 6);
    memset(p.path.rgid, 0x22, 16);
    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_init2rtr("mlx5_0:1", &p, &in));

    decoded d(in);
    expect_rtr_common(&d, p);
    d.expect(PATH + prm::ads::rmac_47_32, 0x1111, "rmac_47_32");
    d.expect(PATH + prm::ads::rmac_31_0, 0x11111111, "rmac_31_0");
    d.expect_bytes(PATH + prm::ads::RGID, p.path.rgid, 16, "rgid_rip");
    d.expect(PATH + prm::ads::hop_limit, 1, "hop_limit");
    d.expect(PATH + prm::ads::src_addr_index, 2, "src_addr_index");
    d.expect(PATH + prm::ads::eth_prio, 0, "eth_prio");
    d.expect_nothing_else();
}

TEST_F(test_qp_cmd, init2rtr_force_loopback_has_no_gid_or_mac)
{
    uct_ib_mlx5_init2rtr_params_t p = rtr_params();
    uct_ib_mlx5_init2rtr_in_t     in;

    p.path.eth            = true;
    p.path.force_loopback = true;
    p.path.eth_prio       = 1;
    memset(p.path.rmac, 0x11, 6);
    memset(p.path.rgid, 0x22, 16);
    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_init2rtr("mlx5_0:1", &p, &in));

    decoded d(in);
    expect_rtr_common(&d, p);
    d.expect(PATH + prm::ads::fl, 1, "fl");
    d.expect(PATH + prm::ads::eth_prio, 1, "eth_prio");
    d.expect_nothing_else();
}

TEST_F(test_qp_cmd, init2rtr_ib)
{
    uct_ib_mlx5_init2rtr_params_t p = rtr_params();
    uct_ib_mlx5_init2rtr_in_t     in;

    p.path.rlid = 0xbeef;
    p.path.mlid = 0x55;
    p.path.sl   = 9;
    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_init2rtr("mlx5_0:1", &p, &in));

    decoded plain(in);
    expect_rtr_common(&plain, p);
    plain.expect(PATH + prm::ads::rlid, 0xbeef, "rlid");
    plain.expect(PATH + prm::ads::mlid, 0x55, "mlid");
    plain.expect(PATH + prm::ads::sl, 9, "sl");
    plain.expect_nothing_else();

    p.path.grh            = true;
    p.path.src_addr_index = 4;
    p.path.hop_limit      = 16;
    p.path.tclass         = 0xa8;
    memset(p.path.rgid, 0x3c, 16);
    uct_ib_mlx5_init2rtr_in_t grh_in;
    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_init2rtr("mlx5_0:1", &p, &grh_in));

    decoded grh(grh_in);
    expect_rtr_common(&grh, p);
    grh.expect(PATH + prm::ads::rlid, 0xbeef, "rlid");
    grh.expect(PATH + prm::ads::mlid, 0x55, "mlid");
    grh.expect(PATH + prm::ads::sl, 9, "sl");
    grh.expect(PATH + prm::ads::grh, 1, "grh");
    grh.expect(PATH + prm::ads::src_addr_index, 4, "src_addr_index");
    grh.expect(PATH + prm::ads::hop_limit, 16, "hop_limit");
    grh.expect(PATH + prm::ads::tclass, 0xa8, "tclass");
    grh.expect_bytes(PATH + prm::ads::RGID, p.path.rgid, 16, "rgid_rip");
    grh.expect_nothing_else();
}

TEST_F(test_qp_cmd, rtr2rts)
{
    uct_ib_mlx5_rtr2rts_params_t p = {0x10203, 6, 5, 18, 2};
    uct_ib_mlx5_rtr2rts_in_t     in;

    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_rtr2rts("mlx5_0:1", &p, &in));
    decoded d(in);
    d.expect(prm::opcode, 0x504, "opcode");
    d.expect(prm::qpn, 0x10203, "qpn");
    d.expect(QPC + prm::qpc::retry_count, 6, "retry_count");
    d.expect(QPC + prm::qpc::rnr_retry, 5, "rnr_retry");
    d.expect(QPC + prm::qpc::log_sra_max, 2, "log_sra_max");
    d.expect(PATH + prm::ads::ack_timeout, 18, "ack_timeout");
    d.expect_nothing_else();
}

TEST_F(test_qp_cmd, rst2init)
{
    uct_ib_mlx5_rdma_access_t access = {true, true, false};
    uct_ib_mlx5_rst2init_in_t in;

    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_rst2init("mlx5_0:1", 0x77, 1, 3, &access, &in));
    decoded d(in);
    d.expect(prm::opcode, 0x502, "opcode");
    d.expect(prm::qpn, 0x77, "qpn");
    d.expect(QPC + field{19, 2}, 3, "pm_state migrated");
    d.expect(PATH + prm::ads::vhca_port_num, 1, "vhca_port_num");
    d.expect(PATH + prm::ads::pkey_index, 3, "pkey_index");
    d.expect(QPC + prm::qpc::rre, 1, "rre");
    d.expect(QPC + prm::qpc::rwe, 1, "rwe");
    d.expect(QPC + prm::qpc::rae, 0, "rae");
    d.expect_nothing_else();
}

TEST_F(test_qp_cmd, create_qp)
{
    uct_ib_mlx5_create_qp_params_t p = {};
    uct_ib_mlx5_create_qp_in_t     in;

    p.pdn           = 0x1234;
    p.cqn_snd       = 0x55;
    p.cqn_rcv       = 0x66;
    p.uar_page      = 0x7;
    p.log_sq_size   = 8;
    p.has_rq        = true;
    p.log_rq_size   = 6;
    p.log_rq_stride = 1;
    p.umem_id       = 0x99;
    p.dbr_offset    = 0x3000;
    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_create_qp("mlx5_0:1", &p, &in));

    decoded d(in);
    d.expect(prm::opcode, 0x500, "opcode");
    d.expect(QPC + prm::qpc::st, 0, "st RC");
    d.expect(QPC + field{19, 2}, 3, "pm_state migrated");
    d.expect(QPC + prm::qpc::pd, 0x1234, "pd");
    d.expect(QPC + prm::qpc::uar_page, 0x7, "uar_page");
    d.expect(QPC + prm::qpc::cqn_snd, 0x55, "cqn_snd");
    d.expect(QPC + prm::qpc::cqn_rcv, 0x66, "cqn_rcv");
    d.expect(QPC + prm::qpc::log_sq_size, 8, "log_sq_size");
    d.expect(QPC + prm::qpc::rq_type, 0, "rq_type regular");
    d.expect(QPC + prm::qpc::log_rq_size, 6, "log_rq_size");
    d.expect(QPC + prm::qpc::log_rq_stride, 1, "log_rq_stride");
    d.expect(QPC + prm::qpc::dbr_umem_valid, 1, "dbr_umem_valid");
    d.expect(QPC + prm::qpc::dbr_umem_id, 0x99, "dbr_umem_id");
    d.expect(QPC + prm::qpc::dbr_addr, 0x3000, "dbr_addr");
    d.expect(prm::wq_umem_valid, 1, "wq_umem_valid");
    d.expect(prm::wq_umem_id, 0x99, "wq_umem_id");
    d.expect(prm::wq_umem_offset, 0, "wq_umem_offset");
    d.expect_nothing_else();

    p.has_rq = false;
    uct_ib_mlx5_create_qp_in_t no_rq;
    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_create_qp("mlx5_0:1", &p, &no_rq));
    decoded z(no_rq);
    z.expect(QPC + prm::qpc::rq_type, 3, "rq_type zero-length");
    z.expect(QPC + prm::qpc::log_rq_size, 0, "no log_rq_size");
    z.expect(QPC + prm::qpc::log_rq_stride, 0, "no log_rq_stride");
}

TEST_F(test_qp_cmd, init2rtr_lag_port_affinity)
{
    uct_ib_mlx5_init2rtr_params_t p = rtr_params();
    uct_ib_mlx5_init2rtr_in_t     in;

    p.path.rlid             = 0x11;
    p.lag_tx_port_affinity  = 2;
    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_init2rtr("mlx5_0:1", &p, &in));

    decoded d(in);
    d.expect(prm::opcode, 0x503, "opcode");
    d.expect(prm::qpn, p.qpn, "qpn");
    d.expect(prm::opt_param_mask, 0x800e, "opt_param_mask RRE|RAE|RWE|LAG_TX_AFF");
    d.expect(QPC + prm::qpc::lag_tx_port_affinity, 2, "lag_tx_port_affinity");
}

TEST_F(test_qp_cmd, no_atomic_mode_without_remote_atomics)
{
    uct_ib_mlx5_init2rtr_params_t p = rtr_params();
    uct_ib_mlx5_init2rtr_in_t     in;

    p.path.rlid   = 0x11;
    p.access      = {true, true, false};
    ASSERT_EQ(UCS_OK, uct_ib_mlx5_build_init2rtr("mlx5_0:1", &p, &in));

    decoded d(in);
    d.expect(QPC + prm::qpc::atomic_mode, 0, "atomic_mode");
    d.expect(QPC + prm::qpc::rae, 0, "rae");
}

/* A value wider than its field is refused in every build, naming the field,
 * and the command is not to be sent */
TEST_F(test_qp_cmd, oversized_parameters_are_refused)
{
    struct {
        const char *what;
        std::function<ucs_status_t()> build;
    } cases[] = {
        {"log_sq_size 16", [] {
             uct_ib_mlx5_create_qp_params_t p = {};
             uct_ib_mlx5_create_qp_in_t     in;
             p.log_sq_size = 16;
             return uct_ib_mlx5_build_create_qp("mlx5_0:1", &p, &in);
         }},
        {"lag_tx_port_affinity 16", [] {
             uct_ib_mlx5_init2rtr_params_t p = rtr_params();
             uct_ib_mlx5_init2rtr_in_t     in;
             p.lag_tx_port_affinity = 16;
             return uct_ib_mlx5_build_init2rtr("mlx5_0:1", &p, &in);
         }},
        {"retry_count 8", [] {
             uct_ib_mlx5_rtr2rts_params_t p = {};
             uct_ib_mlx5_rtr2rts_in_t     in;
             p.retry_count = 8;
             return uct_ib_mlx5_build_rtr2rts("mlx5_0:1", &p, &in);
         }},
        {"ack_timeout 32", [] {
             uct_ib_mlx5_rtr2rts_params_t p = {};
             uct_ib_mlx5_rtr2rts_in_t     in;
             p.ack_timeout = 32;
             return uct_ib_mlx5_build_rtr2rts("mlx5_0:1", &p, &in);
         }},
    };
    const char *fields[] = {"log_sq_size 16", "lag_tx_port_affinity 16",
                            "retry_count 8", "ack_timeout 32"};

    for (size_t i = 0; i < ucs_static_array_size(cases); ++i) {
        SCOPED_TRACE(cases[i].what);
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);

        EXPECT_EQ(UCS_ERR_INVALID_PARAM, cases[i].build());
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, fields[i]))
                << capture.dump();
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "mlx5_0:1"))
                << capture.dump();
    }
}
