/*
 * The PRM positions the emulated device decodes and encodes (through
 * uct/ib/mlx5/dv/prm.h) against the PRM facts hard-coded in emu_test.h.
 * The DevX tests show the same thing end to end; this table names the
 * field when one differs.
 */
#include "emu/emu_test.h"

#include <uct/ib/mlx5/dv/prm.h>

using namespace emu_test;

namespace p = uct_mlx5_prm;


class test_emu_prm : public ucs::test_base {
protected:
    template <typename F>
    static void expect_field(const char *name, field fact)
    {
        EXPECT_EQ(fact.offset, F::offset) << name;
        EXPECT_EQ(fact.width, F::width) << name;
    }

    template <typename F>
    static void expect_at(const char *name, unsigned offset)
    {
        EXPECT_EQ(offset, F::offset) << name;
    }
};

#define EXPECT_FIELD(_prm_field, _fact) \
    expect_field<_prm_field>(#_prm_field, _fact)

TEST_F(test_emu_prm, command_headers)
{
    EXPECT_FIELD(p::mbox_in::opcode,               prm::opcode);
    EXPECT_FIELD(p::mbox_in::op_mod,               prm::op_mod);
    EXPECT_FIELD(p::mbox_out::status,              prm::status);
    EXPECT_FIELD(p::mbox_out::syndrome,            prm::syndrome);
    EXPECT_FIELD(p::destroy_qp_in::qpn,            prm::qpn);
    EXPECT_FIELD(p::rtr2rts_qp_in::opt_param_mask, prm::opt_param_mask);
    EXPECT_FIELD(p::rts2rts_qp_in::qpc_ext,        prm::qpc_ext);
    EXPECT_FIELD(p::create_qp_out::qpn,            prm::out_qpn);
    EXPECT_FIELD(p::create_qp_in::wq_umem_offset,  prm::wq_umem_offset);
    EXPECT_FIELD(p::create_qp_in::wq_umem_id,      prm::wq_umem_id);
    EXPECT_FIELD(p::create_qp_in::wq_umem_valid,   prm::wq_umem_valid);
    EXPECT_FIELD(p::query_hca_cap_in::other_function, prm::other_function);

    expect_at<p::create_qp_in::qpc>("create_qp_in::qpc", prm::QPC);
    expect_at<p::rtr2rts_qp_in::qpc>("rtr2rts_qp_in::qpc", prm::QPC);
    expect_at<p::query_qp_out::qpc>("query_qp_out::qpc", prm::QPC);
    expect_at<p::query_hca_cap_out::capability>("capability", prm::CAPABILITY);
    EXPECT_EQ(prm::QP_CMD_BYTES * 8, p::create_qp_in::layout::size_bits);
    EXPECT_EQ(prm::QP_CMD_BYTES * 8, p::query_qp_out::layout::size_bits);
    EXPECT_EQ(prm::HCA_CAP_OUT_BYTES * 8,
              p::query_hca_cap_out::layout::size_bits);
}

TEST_F(test_emu_prm, qpc)
{
    EXPECT_FIELD(p::qpc::state,          prm::qpc::state);
    EXPECT_FIELD(p::qpc::st,             prm::qpc::st);
    EXPECT_FIELD(p::qpc::pm_state,       prm::qpc::pm_state);
    EXPECT_FIELD(p::qpc::pd,             prm::qpc::pd);
    EXPECT_FIELD(p::qpc::mtu,            prm::qpc::mtu);
    EXPECT_FIELD(p::qpc::log_msg_max,    prm::qpc::log_msg_max);
    EXPECT_FIELD(p::qpc::log_rq_size,    prm::qpc::log_rq_size);
    EXPECT_FIELD(p::qpc::log_rq_stride,  prm::qpc::log_rq_stride);
    EXPECT_FIELD(p::qpc::no_sq,          prm::qpc::no_sq);
    EXPECT_FIELD(p::qpc::log_sq_size,    prm::qpc::log_sq_size);
    EXPECT_FIELD(p::qpc::counter_set_id, prm::qpc::counter_set_id);
    EXPECT_FIELD(p::qpc::uar_page,       prm::qpc::uar_page);
    EXPECT_FIELD(p::qpc::user_index,     prm::qpc::user_index);
    EXPECT_FIELD(p::qpc::remote_qpn,     prm::qpc::remote_qpn);
    EXPECT_FIELD(p::qpc::log_sra_max,    prm::qpc::log_sra_max);
    EXPECT_FIELD(p::qpc::retry_count,    prm::qpc::retry_count);
    EXPECT_FIELD(p::qpc::rnr_retry,      prm::qpc::rnr_retry);
    EXPECT_FIELD(p::qpc::next_send_psn,  prm::qpc::next_send_psn);
    EXPECT_FIELD(p::qpc::cqn_snd,        prm::qpc::cqn_snd);
    EXPECT_FIELD(p::qpc::log_rra_max,    prm::qpc::log_rra_max);
    EXPECT_FIELD(p::qpc::atomic_mode,    prm::qpc::atomic_mode);
    EXPECT_FIELD(p::qpc::rre,            prm::qpc::rre);
    EXPECT_FIELD(p::qpc::rwe,            prm::qpc::rwe);
    EXPECT_FIELD(p::qpc::rae,            prm::qpc::rae);
    EXPECT_FIELD(p::qpc::min_rnr_nak,    prm::qpc::min_rnr_nak);
    EXPECT_FIELD(p::qpc::next_rcv_psn,   prm::qpc::next_rcv_psn);
    EXPECT_FIELD(p::qpc::cqn_rcv,        prm::qpc::cqn_rcv);
    EXPECT_FIELD(p::qpc::dbr_addr,       prm::qpc::dbr_addr);
    EXPECT_FIELD(p::qpc::rq_type,        prm::qpc::rq_type);
    EXPECT_FIELD(p::qpc::srqn_rmpn_xrqn, prm::qpc::srqn);
    EXPECT_FIELD(p::qpc::dbr_umem_valid, prm::qpc::dbr_umem_valid);
    EXPECT_FIELD(p::qpc::dbr_umem_id,    prm::qpc::dbr_umem_id);
    expect_at<p::qpc::primary_address_path>("primary_address_path",
                                            prm::qpc::PRIMARY_PATH);
}

TEST_F(test_emu_prm, address_path)
{
    EXPECT_FIELD(p::ads::fl,             prm::ads::fl);
    EXPECT_FIELD(p::ads::free_ar,        prm::ads::free_ar);
    EXPECT_FIELD(p::ads::pkey_index,     prm::ads::pkey_index);
    EXPECT_FIELD(p::ads::grh,            prm::ads::grh);
    EXPECT_FIELD(p::ads::mlid,           prm::ads::mlid);
    EXPECT_FIELD(p::ads::rlid,           prm::ads::rlid);
    EXPECT_FIELD(p::ads::ack_timeout,    prm::ads::ack_timeout);
    EXPECT_FIELD(p::ads::src_addr_index, prm::ads::src_addr_index);
    EXPECT_FIELD(p::ads::stat_rate,      prm::ads::stat_rate);
    EXPECT_FIELD(p::ads::hop_limit,      prm::ads::hop_limit);
    EXPECT_FIELD(p::ads::tclass,         prm::ads::tclass);
    EXPECT_FIELD(p::ads::flow_label,     prm::ads::flow_label);
    EXPECT_FIELD(p::ads::f_dscp,         prm::ads::f_dscp);
    EXPECT_FIELD(p::ads::f_ecn,          prm::ads::f_ecn);
    EXPECT_FIELD(p::ads::f_eth_prio,     prm::ads::f_eth_prio);
    EXPECT_FIELD(p::ads::ecn,            prm::ads::ecn);
    EXPECT_FIELD(p::ads::dscp,           prm::ads::dscp);
    EXPECT_FIELD(p::ads::udp_sport,      prm::ads::udp_sport);
    EXPECT_FIELD(p::ads::dei_cfi,        prm::ads::dei_cfi);
    EXPECT_FIELD(p::ads::eth_prio,       prm::ads::eth_prio);
    EXPECT_FIELD(p::ads::sl,             prm::ads::sl);
    EXPECT_FIELD(p::ads::vhca_port_num,  prm::ads::vhca_port_num);
    EXPECT_FIELD(p::ads::rmac_47_32,     prm::ads::rmac_47_32);
    EXPECT_FIELD(p::ads::rmac_31_0,      prm::ads::rmac_31_0);
    expect_at<p::ads::rgid_rip>("rgid_rip", prm::ads::RGID);
    EXPECT_EQ(128u, p::ads::rgid_rip::width);
    expect_at<p::ads::rmac>("rmac", prm::ads::rmac_47_32.offset);
    EXPECT_EQ(48u, p::ads::rmac::width);
}

TEST_F(test_emu_prm, hca_caps)
{
    EXPECT_FIELD(p::cmd_hca_cap::log_max_srq_sz,    prm::cap::log_max_srq_sz);
    EXPECT_FIELD(p::cmd_hca_cap::log_max_qp_sz,     prm::cap::log_max_qp_sz);
    EXPECT_FIELD(p::cmd_hca_cap::log_max_qp,        prm::cap::log_max_qp);
    EXPECT_FIELD(p::cmd_hca_cap::log_max_cq_sz,     prm::cap::log_max_cq_sz);
    EXPECT_FIELD(p::cmd_hca_cap::log_max_ra_req_qp, prm::cap::log_max_ra_req_qp);
    EXPECT_FIELD(p::cmd_hca_cap::log_max_ra_res_qp, prm::cap::log_max_ra_res_qp);
    EXPECT_FIELD(p::cmd_hca_cap::gid_table_size,    prm::cap::gid_table_size);
    EXPECT_FIELD(p::cmd_hca_cap::port_type,         prm::cap::port_type);
    EXPECT_FIELD(p::cmd_hca_cap::num_ports,         prm::cap::num_ports);
    EXPECT_FIELD(p::cmd_hca_cap::log_max_msg,       prm::cap::log_max_msg);
    EXPECT_FIELD(p::cmd_hca_cap::roce,              prm::cap::roce);
    EXPECT_FIELD(p::cmd_hca_cap::rc,                prm::cap::rc);
    EXPECT_FIELD(p::cmd_hca_cap::fl_rc_qp_when_roce_disabled,
                 prm::cap::fl_rc_qp_when_roce_disabled);
    EXPECT_FIELD(p::cmd_hca_cap::max_wqe_sz_rq,     prm::cap::max_wqe_sz_rq);
    EXPECT_FIELD(p::cmd_hca_cap::log_max_pd,        prm::cap::log_max_pd);
    EXPECT_FIELD(p::roce_cap::sw_r_roce_src_udp_port,
                 prm::roce_cap::sw_r_roce_src_udp_port);
    EXPECT_FIELD(p::roce_cap::fl_rc_qp_when_roce_disabled,
                 prm::roce_cap::fl_rc_qp_when_roce_disabled);
    EXPECT_FIELD(p::roce_cap::fl_rc_qp_when_roce_enabled,
                 prm::roce_cap::fl_rc_qp_when_roce_enabled);
}
