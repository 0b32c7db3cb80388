/*
 * Golden tests of the mlx5 PRM layouts: offsets and widths are the PRM facts,
 * typed in by hand, and accessors must place bits exactly there.
 */
#include <uct/ib/mlx5/dv/prm.h>

#include <common/test.h>

#include <cstring>
#include <map>

using namespace uct_mlx5_prm;

namespace {

template <typename F>
using init2rtr_qpc = at<init2rtr_qp_in::qpc, F>;

template <typename F>
using init2rtr_path = at<init2rtr_qp_in::qpc, qpc::primary_address_path, F>;

template <typename F>
using general_cap = at<query_hca_cap_out::capability,
                       hca_cap_union::cmd_hca_cap, F>;

template <typename F>
using roce_cap_at = at<query_hca_cap_out::capability,
                       hca_cap_union::roce_caps, F>;

/* Read bytewise, independently of the accessors: bit 0 is the MSB of byte 0 */
bool prm_bit(const void *buf, unsigned bit)
{
    return (static_cast<const uint8_t*>(buf)[bit / 8] >> (7 - (bit % 8))) & 1;
}

} // namespace

class test_prm : public ucs::test_base {
};

#define EXPECT_FIELD(_field, _offset, _width) \
    do { \
        EXPECT_EQ(_offset, _field::offset) << #_field; \
        EXPECT_EQ(_width, _field::width) << #_field; \
    } while (0)


TEST_F(test_prm, readme_table)
{
    EXPECT_FIELD(init2rtr_qp_in::opcode,            0,   16);
    EXPECT_FIELD(init2rtr_qp_in::qpn,              72,   24);
    EXPECT_FIELD(init2rtr_qp_in::opt_param_mask,  128,   32);
    EXPECT_FIELD(init2rtr_qp_in::qpc,             192, 1856);
    EXPECT_FIELD(qpc::primary_address_path,       192,  352);
    EXPECT_FIELD(ads::grh,                         40,    1);
    EXPECT_FIELD(ads::mlid,                        41,    7);
    EXPECT_FIELD(ads::rlid,                        48,   16);
    EXPECT_FIELD(ads::src_addr_index,              72,    8);
    EXPECT_FIELD(ads::hop_limit,                   88,    8);
    EXPECT_FIELD(ads::tclass,                     100,    8);
    EXPECT_FIELD(ads::flow_label,                 108,   20);
    EXPECT_FIELD(ads::rgid_rip,                   128,  128);
    EXPECT_FIELD(ads::dscp,                       266,    6);
    EXPECT_FIELD(ads::udp_sport,                  272,   16);
    EXPECT_FIELD(ads::eth_prio,                   289,    3);
    EXPECT_FIELD(ads::sl,                         292,    4);
    EXPECT_FIELD(ads::vhca_port_num,              296,    8);
    EXPECT_FIELD(ads::rmac_47_32,                 304,   16);
    EXPECT_FIELD(ads::rmac_31_0,                  320,   32);
    EXPECT_FIELD(ads::rmac,                       304,   48);

    /* The primary address path of INIT2RTR starts at 192 + 192 = 384 */
    EXPECT_FIELD(init2rtr_path<ads::fl>,          384,    1);
    EXPECT_FIELD(init2rtr_path<ads::grh>,         424,    1);
    EXPECT_FIELD(init2rtr_path<ads::rlid>,        432,   16);
    EXPECT_FIELD(init2rtr_path<ads::rgid_rip>,    512,  128);
    EXPECT_FIELD(init2rtr_path<ads::udp_sport>,   656,   16);
    EXPECT_FIELD(init2rtr_path<ads::rmac>,        688,   48);
    EXPECT_FIELD(init2rtr_path<ads::rmac_31_0>,   704,   32);
    EXPECT_FIELD(init2rtr_qpc<qpc::state>,        192,    4);
    EXPECT_FIELD(init2rtr_qpc<qpc::dbr_addr>,    1472,   64);
}

TEST_F(test_prm, command_headers)
{
    EXPECT_FIELD(mbox_in::opcode,            0, 16);
    EXPECT_FIELD(mbox_in::uid,              16, 16);
    EXPECT_FIELD(mbox_in::op_mod,           48, 16);
    EXPECT_FIELD(mbox_out::status,           0,  8);
    EXPECT_FIELD(mbox_out::syndrome,        32, 32);

    EXPECT_FIELD(create_qp_in::opcode,       0, 16);
    EXPECT_FIELD(create_qp_in::uid,         16, 16);
    EXPECT_FIELD(create_qp_in::op_mod,      48, 16);
    EXPECT_FIELD(create_qp_out::status,      0,  8);
    EXPECT_FIELD(create_qp_out::syndrome,   32, 32);
    EXPECT_FIELD(destroy_qp_in::opcode,      0, 16);
    EXPECT_FIELD(destroy_qp_in::uid,        16, 16);
    EXPECT_FIELD(destroy_qp_out::status,     0,  8);
    EXPECT_FIELD(destroy_qp_out::syndrome,  32, 32);
    EXPECT_FIELD(rst2init_qp_in::opcode,     0, 16);
    EXPECT_FIELD(rst2init_qp_in::uid,       16, 16);
    EXPECT_FIELD(rst2init_qp_out::status,    0,  8);
    EXPECT_FIELD(rst2init_qp_out::syndrome, 32, 32);
    EXPECT_FIELD(init2rtr_qp_in::uid,       16, 16);
    EXPECT_FIELD(init2rtr_qp_in::op_mod,    48, 16);
    EXPECT_FIELD(init2rtr_qp_out::status,    0,  8);
    EXPECT_FIELD(init2rtr_qp_out::syndrome, 32, 32);
    EXPECT_FIELD(rtr2rts_qp_in::opcode,      0, 16);
    EXPECT_FIELD(rtr2rts_qp_out::status,     0,  8);
    EXPECT_FIELD(rtr2rts_qp_out::syndrome,  32, 32);
    EXPECT_FIELD(rts2rts_qp_in::opcode,      0, 16);
    EXPECT_FIELD(rts2rts_qp_out::syndrome,  32, 32);
    EXPECT_FIELD(init2init_qp_in::opcode,    0, 16);
    EXPECT_FIELD(init2init_qp_out::syndrome, 32, 32);
    EXPECT_FIELD(qp_2err_in::opcode,         0, 16);
    EXPECT_FIELD(qp_2err_in::uid,           16, 16);
    EXPECT_FIELD(qp_2err_in::op_mod,        48, 16);
    EXPECT_FIELD(qp_2err_out::status,        0,  8);
    EXPECT_FIELD(qp_2err_out::syndrome,     32, 32);
    EXPECT_FIELD(qp_2rst_in::opcode,         0, 16);
    EXPECT_FIELD(qp_2rst_in::uid,           16, 16);
    EXPECT_FIELD(qp_2rst_in::op_mod,        48, 16);
    EXPECT_FIELD(qp_2rst_out::status,        0,  8);
    EXPECT_FIELD(qp_2rst_out::syndrome,     32, 32);
    EXPECT_FIELD(query_qp_in::opcode,        0, 16);
    EXPECT_FIELD(query_qp_in::op_mod,       48, 16);
    EXPECT_FIELD(query_qp_out::status,       0,  8);
    EXPECT_FIELD(query_qp_out::syndrome,    32, 32);
    EXPECT_FIELD(query_hca_cap_in::opcode,   0, 16);
    EXPECT_FIELD(query_hca_cap_in::op_mod,  48, 16);
    EXPECT_FIELD(query_hca_cap_out::status,  0,  8);
    EXPECT_FIELD(query_hca_cap_out::syndrome, 32, 32);
    EXPECT_FIELD(create_mkey_in::opcode,     0, 16);
    EXPECT_FIELD(create_mkey_in::op_mod,    48, 16);
    EXPECT_FIELD(create_mkey_out::status,    0,  8);
    EXPECT_FIELD(create_mkey_out::syndrome, 32, 32);
    EXPECT_FIELD(destroy_mkey_in::opcode,    0, 16);
    EXPECT_FIELD(destroy_mkey_out::syndrome, 32, 32);
    EXPECT_FIELD(alloc_pd_in::opcode,        0, 16);
    EXPECT_FIELD(alloc_pd_out::syndrome,    32, 32);
    EXPECT_FIELD(dealloc_pd_in::opcode,      0, 16);
    EXPECT_FIELD(destroy_srq_in::opcode,     0, 16);
    EXPECT_FIELD(destroy_rmp_in::opcode,     0, 16);
}

TEST_F(test_prm, qpc)
{
    EXPECT_FIELD(qpc::state,                    0,   4);
    EXPECT_FIELD(qpc::lag_tx_port_affinity,     4,   4);
    EXPECT_FIELD(qpc::st,                       8,   8);
    EXPECT_FIELD(qpc::pm_state,                19,   2);
    EXPECT_FIELD(qpc::pd,                      40,  24);
    EXPECT_FIELD(qpc::mtu,                     64,   3);
    EXPECT_FIELD(qpc::log_msg_max,             67,   5);
    EXPECT_FIELD(qpc::log_rq_size,             73,   4);
    EXPECT_FIELD(qpc::log_rq_stride,           77,   3);
    EXPECT_FIELD(qpc::no_sq,                   80,   1);
    EXPECT_FIELD(qpc::log_sq_size,             81,   4);
    EXPECT_FIELD(qpc::ts_format,               88,   2);
    EXPECT_FIELD(qpc::counter_set_id,          96,   8);
    EXPECT_FIELD(qpc::uar_page,               104,  24);
    EXPECT_FIELD(qpc::user_index,             136,  24);
    EXPECT_FIELD(qpc::log_page_size,          163,   5);
    EXPECT_FIELD(qpc::remote_qpn,             168,  24);
    EXPECT_FIELD(qpc::primary_address_path,   192, 352);
    EXPECT_FIELD(qpc::secondary_address_path, 544, 352);
    EXPECT_FIELD(qpc::log_ack_req_freq,       896,   4);
    EXPECT_FIELD(qpc::log_sra_max,            904,   3);
    EXPECT_FIELD(qpc::retry_count,            909,   3);
    EXPECT_FIELD(qpc::rnr_retry,              912,   3);
    EXPECT_FIELD(qpc::fre,                    916,   1);
    EXPECT_FIELD(qpc::next_send_psn,          968,  24);
    EXPECT_FIELD(qpc::cqn_snd,               1000,  24);
    EXPECT_FIELD(qpc::last_acked_psn,        1096,  24);
    EXPECT_FIELD(qpc::log_rra_max,           1160,   3);
    EXPECT_FIELD(qpc::atomic_mode,           1164,   4);
    EXPECT_FIELD(qpc::rre,                   1168,   1);
    EXPECT_FIELD(qpc::rwe,                   1169,   1);
    EXPECT_FIELD(qpc::rae,                   1170,   1);
    EXPECT_FIELD(qpc::page_offset,           1172,   6);
    EXPECT_FIELD(qpc::min_rnr_nak,           1187,   5);
    EXPECT_FIELD(qpc::next_rcv_psn,          1192,  24);
    EXPECT_FIELD(qpc::xrcd,                  1224,  24);
    EXPECT_FIELD(qpc::cqn_rcv,               1256,  24);
    EXPECT_FIELD(qpc::dbr_addr,              1280,  64);
    EXPECT_FIELD(qpc::q_key,                 1344,  32);
    EXPECT_FIELD(qpc::rq_type,               1381,   3);
    EXPECT_FIELD(qpc::srqn_rmpn_xrqn,        1384,  24);
    EXPECT_FIELD(qpc::hw_sq_wqebb_counter,   1440,  16);
    EXPECT_FIELD(qpc::sw_rq_counter,         1504,  32);
    EXPECT_FIELD(qpc::dbr_umem_valid,        1667,   1);
    EXPECT_FIELD(qpc::dbr_umem_id,           1824,  32);
}

TEST_F(test_prm, ads)
{
    EXPECT_FIELD(ads::fl,           0,  1);
    EXPECT_FIELD(ads::free_ar,      1,  1);
    EXPECT_FIELD(ads::pkey_index,  16, 16);
    EXPECT_FIELD(ads::ack_timeout, 64,  5);
    EXPECT_FIELD(ads::stat_rate,   84,  4);
    EXPECT_FIELD(ads::f_dscp,     260,  1);
    EXPECT_FIELD(ads::f_ecn,      261,  1);
    EXPECT_FIELD(ads::f_eth_prio, 263,  1);
    EXPECT_FIELD(ads::ecn,        264,  2);
    EXPECT_FIELD(ads::dei_cfi,    288,  1);
}

TEST_F(test_prm, create_qp)
{
    EXPECT_FIELD(create_qp_in::opt_param_mask,  128,   32);
    EXPECT_FIELD(create_qp_in::qpc,             192, 1856);
    EXPECT_FIELD(create_qp_in::wq_umem_offset, 2048,   64);
    EXPECT_FIELD(create_qp_in::wq_umem_id,     2112,   32);
    EXPECT_FIELD(create_qp_in::wq_umem_valid,  2144,    1);
    EXPECT_FIELD(create_qp_in::pas,            2176,    0);
    EXPECT_FIELD(create_qp_out::qpn,             72,   24);
}

TEST_F(test_prm, rmp_commands)
{
    EXPECT_FIELD(create_rmp_in::op_mod,         48,   16);
    EXPECT_FIELD(create_rmp_in::rmp_context,   256, 1920);
    EXPECT_FIELD(create_rmp_out::rmpn,          72,   24);
    EXPECT_FIELD(rmpc::state,                    8,    4);
    EXPECT_FIELD(rmpc::basic_cyclic_rcv_wqe,    32,    1);
    EXPECT_FIELD(rmpc::wq,                     384, 1536);
    EXPECT_FIELD(wq::wq_type,                    0,    4);
    EXPECT_FIELD(wq::lwm,                       48,   16);
    EXPECT_FIELD(wq::pd,                        72,   24);
    EXPECT_FIELD(wq::dbr_addr,                 128,   64);
    EXPECT_FIELD(wq::hw_counter,               192,   32);
    EXPECT_FIELD(wq::sw_counter,               224,   32);
    EXPECT_FIELD(wq::log_wq_stride,            268,    4);
    EXPECT_FIELD(wq::log_wq_sz,                283,    5);
    EXPECT_FIELD(wq::dbr_umem_valid,           288,    1);
    EXPECT_FIELD(wq::wq_umem_valid,            289,    1);
    EXPECT_FIELD(wq::dbr_umem_id,              320,   32);
    EXPECT_FIELD(wq::wq_umem_id,               352,   32);
    EXPECT_FIELD(wq::wq_umem_offset,           384,   64);
    EXPECT_FIELD(query_rmp_in::rmpn,            72,   24);
    EXPECT_FIELD(query_rmp_out::rmp_context,   256, 1920);
    EXPECT_FIELD(modify_rmp_in::rmp_state,      64,    4);
    EXPECT_FIELD(modify_rmp_in::rmpn,           72,   24);
    EXPECT_FIELD(modify_rmp_in::bitmask,       128,   64);
    EXPECT_FIELD(modify_rmp_in::ctx,           256, 1920);
    EXPECT_FIELD(destroy_rmp_in::rmpn,          72,   24);
}

TEST_F(test_prm, qp_commands)
{
    EXPECT_FIELD(destroy_qp_in::qpn,                    72,   24);
    EXPECT_FIELD(rst2init_qp_in::qpn,                   72,   24);
    EXPECT_FIELD(rst2init_qp_in::opt_param_mask,       128,   32);
    EXPECT_FIELD(rst2init_qp_in::qpc,                  192, 1856);
    EXPECT_FIELD(rtr2rts_qp_in::qpn,                    72,   24);
    EXPECT_FIELD(rtr2rts_qp_in::opt_param_mask,        128,   32);
    EXPECT_FIELD(rtr2rts_qp_in::qpc,                   192, 1856);
    EXPECT_FIELD(rts2rts_qp_in::qpc_ext,                64,    1);
    EXPECT_FIELD(rts2rts_qp_in::qpn,                    72,   24);
    EXPECT_FIELD(rts2rts_qp_in::opt_param_mask,        128,   32);
    EXPECT_FIELD(rts2rts_qp_in::qpc,                   192, 1856);
    EXPECT_FIELD(rts2rts_qp_in::opt_param_mask_95_32, 2112,   64);
    EXPECT_FIELD(rts2rts_qp_in::qpc_data_ext,         2176, 1536);
    EXPECT_FIELD(init2init_qp_in::qpn,                  72,   24);
    EXPECT_FIELD(init2init_qp_in::opt_param_mask,      128,   32);
    EXPECT_FIELD(init2init_qp_in::qpc,                 192, 1856);
    EXPECT_FIELD(qp_2err_in::qpn,                       72,   24);
    EXPECT_FIELD(qp_2rst_in::qpn,                       72,   24);
    EXPECT_FIELD(query_qp_in::qpn,                      72,   24);
    EXPECT_FIELD(query_qp_out::opt_param_mask,         128,   32);
    EXPECT_FIELD(query_qp_out::qpc,                    192, 1856);
}

TEST_F(test_prm, hca_caps)
{
    EXPECT_FIELD(query_hca_cap_in::other_function,                 64,     1);
    EXPECT_FIELD(query_hca_cap_in::function_id,                    80,    16);
    EXPECT_FIELD(query_hca_cap_out::capability,                   128, 32768);

    EXPECT_FIELD(cmd_hca_cap::vhca_id,                             48,    16);
    EXPECT_FIELD(cmd_hca_cap::qp_data_in_order,                    98,     1);
    EXPECT_FIELD(cmd_hca_cap::log_max_srq_sz,                     128,     8);
    EXPECT_FIELD(cmd_hca_cap::log_max_qp_sz,                      136,     8);
    EXPECT_FIELD(cmd_hca_cap::log_max_qp,                         155,     5);
    EXPECT_FIELD(cmd_hca_cap::log_max_srq,                        171,     5);
    EXPECT_FIELD(cmd_hca_cap::log_max_mkey,                       234,     6);
    EXPECT_FIELD(cmd_hca_cap::umr_extended_translation_offset,    280,     1);
    EXPECT_FIELD(cmd_hca_cap::null_mkey,                          281,     1);
    EXPECT_FIELD(cmd_hca_cap::log_max_klm_list_size,              282,     6);
    EXPECT_FIELD(cmd_hca_cap::log_max_ra_req_qp,                  330,     6);
    EXPECT_FIELD(cmd_hca_cap::log_max_ra_res_qp,                  346,     6);
    EXPECT_FIELD(cmd_hca_cap::port_type,                          438,     2);
    EXPECT_FIELD(cmd_hca_cap::num_ports,                          440,     8);
    EXPECT_FIELD(cmd_hca_cap::log_max_msg,                        451,     5);
    EXPECT_FIELD(cmd_hca_cap::cqe_version,                        508,     4);
    EXPECT_FIELD(cmd_hca_cap::umr_modify_entity_size_disabled,    519,     1);
    EXPECT_FIELD(cmd_hca_cap::umr_modify_atomic_disabled,         520,     1);
    EXPECT_FIELD(cmd_hca_cap::umr_indirect_mkey_disabled,         521,     1);
    EXPECT_FIELD(cmd_hca_cap::umr_fence,                          522,     2);
    EXPECT_FIELD(cmd_hca_cap::dct,                                538,     1);
    EXPECT_FIELD(cmd_hca_cap::roce,                               541,     1);
    EXPECT_FIELD(cmd_hca_cap::atomic,                             542,     1);
    EXPECT_FIELD(cmd_hca_cap::umr_ptr_rlkey,                      560,     1);
    EXPECT_FIELD(cmd_hca_cap::rc,                                 575,     1);
    EXPECT_FIELD(cmd_hca_cap::fl_rc_qp_when_roce_disabled,        584,     1);
    EXPECT_FIELD(cmd_hca_cap::log_max_pd,                         811,     5);
    EXPECT_FIELD(cmd_hca_cap::log_max_rq,                         867,     5);
    EXPECT_FIELD(cmd_hca_cap::log_max_rmp,                        899,     5);
    EXPECT_FIELD(cmd_hca_cap::general_obj_types,                 1024,    64);

    EXPECT_FIELD(roce_cap::sw_r_roce_src_udp_port,                  4,     1);
    EXPECT_FIELD(roce_cap::fl_rc_qp_when_roce_disabled,             5,     1);
    EXPECT_FIELD(roce_cap::fl_rc_qp_when_roce_enabled,              6,     1);
    EXPECT_FIELD(roce_cap::qp_ts_format,                           30,     2);

    EXPECT_FIELD(hca_cap_union::cmd_hca_cap,                        0,  2048);
    EXPECT_FIELD(hca_cap_union::roce_caps,                          0,  2048);
    EXPECT_FIELD(general_cap<cmd_hca_cap::fl_rc_qp_when_roce_disabled>,
                 712, 1);
    EXPECT_FIELD(general_cap<cmd_hca_cap::general_obj_types>,    1152,    64);
    EXPECT_FIELD(roce_cap_at<roce_cap::fl_rc_qp_when_roce_disabled>, 133, 1);
    EXPECT_FIELD(roce_cap_at<roce_cap::fl_rc_qp_when_roce_enabled>,  134, 1);
}

TEST_F(test_prm, mkey)
{
    EXPECT_FIELD(create_mkey_in::pg_access,                          96,   1);
    EXPECT_FIELD(create_mkey_in::mkey_umem_valid,                    97,   1);
    EXPECT_FIELD(create_mkey_in::memory_key_mkey_entry,             128, 512);
    EXPECT_FIELD(create_mkey_in::translations_octword_actual_size,  768,  32);
    EXPECT_FIELD(create_mkey_in::klm_pas_mtt,                      2176,   0);
    EXPECT_FIELD(create_mkey_out::mkey_index,                        72,  24);
    EXPECT_FIELD(destroy_mkey_in::mkey_index,                        72,  24);

    EXPECT_FIELD(mkc::access_mode_4_2,             3,  3);
    EXPECT_FIELD(mkc::umr_en,                     16,  1);
    EXPECT_FIELD(mkc::a,                          17,  1);
    EXPECT_FIELD(mkc::rw,                         18,  1);
    EXPECT_FIELD(mkc::rr,                         19,  1);
    EXPECT_FIELD(mkc::lw,                         20,  1);
    EXPECT_FIELD(mkc::lr,                         21,  1);
    EXPECT_FIELD(mkc::access_mode_1_0,            22,  2);
    EXPECT_FIELD(mkc::qpn,                        32, 24);
    EXPECT_FIELD(mkc::mkey_7_0,                   56,  8);
    EXPECT_FIELD(mkc::length64,                   96,  1);
    EXPECT_FIELD(mkc::pd,                        104, 24);
    EXPECT_FIELD(mkc::start_addr,                128, 64);
    EXPECT_FIELD(mkc::len,                       192, 64);
    EXPECT_FIELD(mkc::translations_octword_size, 416, 32);
    EXPECT_FIELD(mkc::log_page_size,             475,  5);
}

TEST_F(test_prm, srq_rmp_pd)
{
    EXPECT_FIELD(create_srq_out::srqn, 72, 24);
    EXPECT_FIELD(destroy_srq_in::srqn, 72, 24);
    EXPECT_FIELD(create_rmp_out::rmpn, 72, 24);
    EXPECT_FIELD(destroy_rmp_in::rmpn, 72, 24);
    EXPECT_FIELD(alloc_pd_out::pd,     72, 24);
    EXPECT_FIELD(dealloc_pd_in::pd,    72, 24);
}

TEST_F(test_prm, sizes)
{
    EXPECT_EQ(352u,   ads::layout::size_bits);
    EXPECT_EQ(1856u,  qpc::layout::size_bits);
    EXPECT_EQ(1536u,  qpc_ext::layout::size_bits);
    EXPECT_EQ(2176u,  create_qp_in::layout::size_bits);
    EXPECT_EQ(128u,   create_qp_out::layout::size_bits);
    EXPECT_EQ(128u,   destroy_qp_in::layout::size_bits);
    EXPECT_EQ(128u,   destroy_qp_out::layout::size_bits);
    EXPECT_EQ(2176u,  rst2init_qp_in::layout::size_bits);
    EXPECT_EQ(2176u,  init2rtr_qp_in::layout::size_bits);
    EXPECT_EQ(2176u,  rtr2rts_qp_in::layout::size_bits);
    EXPECT_EQ(3712u,  rts2rts_qp_in::layout::size_bits);
    EXPECT_EQ(3712u,  init2init_qp_in::layout::size_bits);
    EXPECT_EQ(128u,   init2rtr_qp_out::layout::size_bits);
    EXPECT_EQ(128u,   qp_2err_in::layout::size_bits);
    EXPECT_EQ(128u,   qp_2rst_in::layout::size_bits);
    EXPECT_EQ(128u,   query_qp_in::layout::size_bits);
    EXPECT_EQ(2176u,  query_qp_out::layout::size_bits);
    EXPECT_EQ(512u,   mkc::layout::size_bits);
    EXPECT_EQ(2176u,  create_mkey_in::layout::size_bits);
    EXPECT_EQ(2048u,  cmd_hca_cap::layout::size_bits);
    EXPECT_EQ(2048u,  roce_cap::layout::size_bits);
    EXPECT_EQ(32768u, hca_cap_union::layout::size_bits);
    EXPECT_EQ(128u,   query_hca_cap_in::layout::size_bits);
    EXPECT_EQ(32896u, query_hca_cap_out::layout::size_bits);
}

TEST_F(test_prm, constants)
{
    EXPECT_EQ(0x100, UCT_MLX5_CMD_OP_QUERY_HCA_CAP);
    EXPECT_EQ(0x200, UCT_MLX5_CMD_OP_CREATE_MKEY);
    EXPECT_EQ(0x202, UCT_MLX5_CMD_OP_DESTROY_MKEY);
    EXPECT_EQ(0x500, UCT_MLX5_CMD_OP_CREATE_QP);
    EXPECT_EQ(0x501, UCT_MLX5_CMD_OP_DESTROY_QP);
    EXPECT_EQ(0x502, UCT_MLX5_CMD_OP_RST2INIT_QP);
    EXPECT_EQ(0x503, UCT_MLX5_CMD_OP_INIT2RTR_QP);
    EXPECT_EQ(0x504, UCT_MLX5_CMD_OP_RTR2RTS_QP);
    EXPECT_EQ(0x505, UCT_MLX5_CMD_OP_RTS2RTS_QP);
    EXPECT_EQ(0x507, UCT_MLX5_CMD_OP_2ERR_QP);
    EXPECT_EQ(0x50a, UCT_MLX5_CMD_OP_2RST_QP);
    EXPECT_EQ(0x50b, UCT_MLX5_CMD_OP_QUERY_QP);
    EXPECT_EQ(0x50e, UCT_MLX5_CMD_OP_INIT2INIT_QP);
    EXPECT_EQ(0x700, UCT_MLX5_CMD_OP_CREATE_SRQ);
    EXPECT_EQ(0x701, UCT_MLX5_CMD_OP_DESTROY_SRQ);
    EXPECT_EQ(0x800, UCT_MLX5_CMD_OP_ALLOC_PD);
    EXPECT_EQ(0x90c, UCT_MLX5_CMD_OP_CREATE_RMP);
    EXPECT_EQ(0x90e, UCT_MLX5_CMD_OP_DESTROY_RMP);

    EXPECT_EQ(0, UCT_MLX5_QP_STATE_RST);
    EXPECT_EQ(1, UCT_MLX5_QP_STATE_INIT);
    EXPECT_EQ(2, UCT_MLX5_QP_STATE_RTR);
    EXPECT_EQ(3, UCT_MLX5_QP_STATE_RTS);
    EXPECT_EQ(4, UCT_MLX5_QP_STATE_SQER);
    EXPECT_EQ(6, UCT_MLX5_QP_STATE_ERR);
    EXPECT_EQ(7, UCT_MLX5_QP_STATE_SQD);
    EXPECT_EQ(0, UCT_MLX5_QP_ST_RC);

    EXPECT_EQ(0x2u, UCT_MLX5_QP_OPTPAR_RRE);
    EXPECT_EQ(0x4u, UCT_MLX5_QP_OPTPAR_RAE);
    EXPECT_EQ(0x8u, UCT_MLX5_QP_OPTPAR_RWE);

    EXPECT_EQ(1, UCT_MLX5_MTU_256);
    EXPECT_EQ(2, UCT_MLX5_MTU_512);
    EXPECT_EQ(3, UCT_MLX5_MTU_1024);
    EXPECT_EQ(4, UCT_MLX5_MTU_2048);
    EXPECT_EQ(5, UCT_MLX5_MTU_4096);

    EXPECT_EQ(0x1, uct_mlx5_hca_cap_op_mod(UCT_MLX5_HCA_CAP_GENERAL));
    EXPECT_EQ(0x9, uct_mlx5_hca_cap_op_mod(UCT_MLX5_HCA_CAP_ROCE));
}

TEST_F(test_prm, buf)
{
    uct_mlx5_prm_buf<query_hca_cap_out::layout> out;

    EXPECT_EQ(4112u, out.size());
    EXPECT_EQ(out.size(), sizeof(out.dw));
    EXPECT_EQ(static_cast<void*>(out.dw), static_cast<void*>(out.data()));
    for (uint32_t dw : out.dw) {
        ASSERT_EQ(0u, dw);
    }
}

TEST_F(test_prm, byte_placement)
{
    uct_mlx5_prm_buf<init2rtr_qp_in::layout> in;
    auto bytes = reinterpret_cast<const uint8_t*>(in.data());

    ASSERT_TRUE(uct_mlx5_prm_set<init2rtr_qp_in::opcode>(in.data(),
                                             UCT_MLX5_CMD_OP_INIT2RTR_QP));
    ASSERT_TRUE(uct_mlx5_prm_set<init2rtr_qp_in::qpn>(in.data(), 0x123456));
    ASSERT_TRUE(uct_mlx5_prm_set<init2rtr_qpc<qpc::state>>(in.data(),
                                               UCT_MLX5_QP_STATE_RTS));
    ASSERT_TRUE(uct_mlx5_prm_set<init2rtr_qpc<qpc::mtu>>(in.data(), UCT_MLX5_MTU_4096));
    ASSERT_TRUE(uct_mlx5_prm_set<init2rtr_qpc<qpc::rwe>>(in.data(), 1));
    ASSERT_TRUE(uct_mlx5_prm_set<init2rtr_qpc<qpc::dbr_addr>>(in.data(),
                                                  0x0102030405060708ull));
    ASSERT_TRUE(uct_mlx5_prm_set<init2rtr_path<ads::rlid>>(in.data(), 0xc0de));
    ASSERT_TRUE(uct_mlx5_prm_set<init2rtr_path<ads::eth_prio>>(in.data(), 5));

    /* byte -> value, from the bit offsets: opcode 0, qpn 72, qpc 192 (byte
     * 24) + state 0 / mtu 64 / rwe 1169 / dbr_addr 1280, address path 384
     * (byte 48) + rlid 48 / eth_prio 289 */
    const std::map<size_t, uint8_t> expected = {
        {0, 0x05},   {1, 0x03},                             /* opcode */
        {9, 0x12},   {10, 0x34},  {11, 0x56},               /* qpn */
        {24, 0x30},                                         /* state */
        {32, 0xa0},                                         /* mtu */
        {170, 0x40},                                        /* rwe */
        {184, 0x01}, {185, 0x02}, {186, 0x03}, {187, 0x04}, /* dbr_addr */
        {188, 0x05}, {189, 0x06}, {190, 0x07}, {191, 0x08},
        {54, 0xc0},  {55, 0xde},                            /* rlid */
        {84, 0x50}                                          /* eth_prio */
    };

    for (size_t i = 0; i < in.size(); ++i) {
        auto it = expected.find(i);
        EXPECT_EQ((it == expected.end()) ? 0 : it->second, bytes[i])
                << "byte " << i;
    }
}

TEST_F(test_prm, mac_gid_placement)
{
    static const uint8_t mac[6]  = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    static const uint8_t gid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                                    0x02, 0x11, 0x22, 0xff,
                                    0xfe, 0x33, 0x44, 0x55};
    uct_mlx5_prm_buf<init2rtr_qp_in::layout> in;
    auto bytes = reinterpret_cast<const uint8_t*>(in.data());
    uint8_t out[16];

    uct_mlx5_prm_set_bytes<init2rtr_path<ads::rmac>>(in.data(), mac);
    uct_mlx5_prm_set_bytes<init2rtr_path<ads::rgid_rip>>(in.data(), gid);

    /* Address path at byte 48: rgid_rip at bit 128 (byte 64), rmac at bit 304
     * (byte 86) */
    for (size_t i = 0; i < in.size(); ++i) {
        uint8_t expected = 0;
        if ((i >= 64) && (i < 80)) {
            expected = gid[i - 64];
        } else if ((i >= 86) && (i < 92)) {
            expected = mac[i - 86];
        }
        EXPECT_EQ(expected, bytes[i]) << "byte " << i;
    }

    EXPECT_EQ(0x0211u, uct_mlx5_prm_get<init2rtr_path<ads::rmac_47_32>>(
                               in.data()));
    EXPECT_EQ(0x22334455u, uct_mlx5_prm_get<init2rtr_path<ads::rmac_31_0>>(
                                   in.data()));

    uct_mlx5_prm_get_bytes<init2rtr_path<ads::rmac>>(in.data(), out);
    EXPECT_EQ(0, memcmp(mac, out, sizeof(mac)));
    uct_mlx5_prm_get_bytes<init2rtr_path<ads::rgid_rip>>(in.data(), out);
    EXPECT_EQ(0, memcmp(gid, out, sizeof(gid)));
}

TEST_F(test_prm, oversized_value_is_refused_in_every_build)
{
    uct_mlx5_prm_buf<qpc::layout> buf;

    ASSERT_TRUE(uct_mlx5_prm_set<qpc::lag_tx_port_affinity>(buf.data(), 0x5));
    /* refused: the field and its neighbours (qpc::state on the left) keep
     * what they had */
    EXPECT_FALSE(uct_mlx5_prm_set<qpc::lag_tx_port_affinity>(buf.data(), 0x13));
    EXPECT_EQ(0x5u, uct_mlx5_prm_get<qpc::lag_tx_port_affinity>(buf.data()));
    EXPECT_EQ(0u, uct_mlx5_prm_get<qpc::state>(buf.data()));
    EXPECT_TRUE(uct_mlx5_prm_set<qpc::lag_tx_port_affinity>(buf.data(), 0xf));
}

TEST_F(test_prm, writer_names_the_first_field_that_does_not_fit)
{
    uct_mlx5_prm_buf<qpc::layout> buf;
    uct_mlx5_prm_writer           w(buf.data());

    w.set<qpc::log_sq_size>(15);
    EXPECT_TRUE(w.ok());
    w.set<qpc::log_sq_size>(16);
    w.set<qpc::retry_count>(8);
    ASSERT_FALSE(w.ok());
    EXPECT_STREQ("log_sq_size", w.bad_field());
    EXPECT_EQ(16u, w.bad_value());
    EXPECT_EQ(4u, w.bad_width());
    EXPECT_EQ(15u, uct_mlx5_prm_get<qpc::log_sq_size>(buf.data()));
    EXPECT_EQ(0u, uct_mlx5_prm_get<qpc::retry_count>(buf.data()));
}


/* Generic checks over fields of every width class and position */
template <typename F>
class test_prm_field : public ucs::test_base {
protected:
    using buf_t = uct_mlx5_prm_buf<typename F::owner>;

    static constexpr uint64_t max_value = (F::width == 64) ?
                                          UINT64_MAX :
                                          (UINT64_C(1) << F::width) - 1;

    /* The field holds value, MSB first; every other bit equals background */
    static ::testing::AssertionResult
    bits_are(const buf_t &buf, uint64_t value, bool background)
    {
        for (unsigned bit = 0; bit < buf.size() * 8; ++bit) {
            bool expected = background;
            if ((bit >= F::offset) && (bit < F::offset + F::width)) {
                expected = (value >> (F::offset + F::width - 1 - bit)) & 1;
            }

            if (prm_bit(buf.data(), bit) != expected) {
                return ::testing::AssertionFailure()
                       << "bit " << bit << " is " << !expected;
            }
        }

        return ::testing::AssertionSuccess();
    }

    static void check(uint64_t value, bool background)
    {
        buf_t buf;

        memset(buf.dw, background ? 0xff : 0, sizeof(buf.dw));
        ASSERT_TRUE(uct_mlx5_prm_set<F>(buf.data(), value));

        const buf_t &cbuf = buf;
        EXPECT_TRUE(bits_are(cbuf, value, background))
                << "value 0x" << std::hex << value << " background "
                << background;
        EXPECT_EQ(value, uct_mlx5_prm_get<F>(cbuf.data()));
    }
};

using test_prm_fields = ::testing::Types<
        /* 1 bit */
        qpc::no_sq, qpc::rre, qpc::rwe, qpc::rae, qpc::dbr_umem_valid,
        init2rtr_path<ads::fl>, init2rtr_path<ads::grh>,
        create_qp_in::wq_umem_valid,
        general_cap<cmd_hca_cap::fl_rc_qp_when_roce_disabled>,
        roce_cap_at<roce_cap::fl_rc_qp_when_roce_disabled>,
        roce_cap_at<roce_cap::fl_rc_qp_when_roce_enabled>,
        /* 2..8 bits */
        qpc::state, qpc::mtu, qpc::log_msg_max, qpc::log_rq_size,
        qpc::log_rq_stride, qpc::log_sq_size, qpc::log_sra_max,
        qpc::retry_count, qpc::rnr_retry, qpc::log_rra_max, qpc::min_rnr_nak,
        qpc::rq_type, qpc::st, mbox_out::status, init2rtr_path<ads::mlid>,
        init2rtr_path<ads::ack_timeout>, init2rtr_path<ads::src_addr_index>,
        init2rtr_path<ads::stat_rate>, init2rtr_path<ads::hop_limit>,
        init2rtr_path<ads::tclass>, init2rtr_path<ads::dscp>,
        init2rtr_path<ads::eth_prio>, init2rtr_path<ads::sl>,
        init2rtr_path<ads::vhca_port_num>, general_cap<cmd_hca_cap::port_type>,
        general_cap<cmd_hca_cap::log_max_qp>,
        /* 16..24 bits */
        mbox_in::opcode, mbox_in::uid, mbox_in::op_mod,
        query_hca_cap_in::op_mod, init2rtr_path<ads::rlid>,
        init2rtr_path<ads::udp_sport>, init2rtr_path<ads::rmac_47_32>,
        init2rtr_path<ads::flow_label>, general_cap<cmd_hca_cap::vhca_id>,
        qpc::pd, qpc::uar_page, qpc::remote_qpn, qpc::next_send_psn,
        qpc::cqn_snd, qpc::cqn_rcv, qpc::next_rcv_psn, qpc::srqn_rmpn_xrqn,
        init2rtr_qp_in::qpn, create_qp_out::qpn, mkc::pd,
        create_mkey_out::mkey_index,
        /* 32 bits */
        mbox_out::syndrome, init2rtr_qp_in::opt_param_mask, qpc::q_key,
        qpc::dbr_umem_id, init2rtr_path<ads::rmac_31_0>,
        create_qp_in::wq_umem_id,
        /* 64 bits */
        qpc::dbr_addr, init2rtr_qpc<qpc::dbr_addr>,
        create_qp_in::wq_umem_offset, mkc::start_addr, mkc::len,
        general_cap<cmd_hca_cap::general_obj_types>>;

TYPED_TEST_SUITE(test_prm_field, test_prm_fields);

TYPED_TEST(test_prm_field, all_ones_in_zeros)
{
    this->check(this->max_value, false);
}

TYPED_TEST(test_prm_field, zero_in_ones)
{
    this->check(0, true);
}

TYPED_TEST(test_prm_field, round_trip)
{
    const uint64_t max = this->max_value;

    for (uint64_t pattern : {UINT64_C(1), UINT64_C(0x5555555555555555),
                             UINT64_C(0xaaaaaaaaaaaaaaaa),
                             UINT64_C(0x0123456789abcdef), max >> 1,
                             (max >> 1) + 1}) {
        this->check(pattern & max, false);
        this->check(pattern & max, true);
    }
}
