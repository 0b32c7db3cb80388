/*
 * QUERY_HCA_CAP: the general device capabilities (cmd_hca_cap, with RMPs
 * sharing the SRQs' limits, and tag matching with rendezvous offload on
 * RC), the atomic capabilities (atomic_cap) and the
 * RoCE capabilities (roce_cap), consistent with the verbs attributes the
 * device reports and with the limits its commands enforce; the other pages
 * of a ConnectX-6 Dx answer as a device without their features does.
 */
#include <emu/firmware/devx.h>


namespace uct_ib_emu {

namespace prm = uct_mlx5_prm;

namespace {

/* cmd_hca_cap.port_type */
constexpr unsigned PORT_TYPE_IB  = 0x0;
constexpr unsigned PORT_TYPE_ETH = 0x1;

template <typename F>
using general_cap = prm::at<prm::query_hca_cap_out::capability,
                            prm::hca_cap_union::cmd_hca_cap, F>;

template <typename F>
using atomic_cap = prm::at<prm::query_hca_cap_out::capability,
                           prm::hca_cap_union::atomic_caps, F>;

template <typename F>
using roce_cap = prm::at<prm::query_hca_cap_out::capability,
                         prm::hca_cap_union::roce_caps, F>;

template <typename F>
using device_mem_cap = prm::at<prm::query_hca_cap_out::capability,
                               prm::hca_cap_union::device_mem_caps, F>;

void fill_general_caps(const device *dev, uint32_t *out)
{
    namespace cap = prm::cmd_hca_cap;
    const port &p = dev->ports.front();

    put<general_cap<cap::vhca_id>>(out, dev->index);
    put<general_cap<cap::log_max_srq_sz>>(out, LOG_MAX_SRQ_SZ);
    put<general_cap<cap::log_max_qp_sz>>(out, dev->log_max_qp_sz);
    put<general_cap<cap::log_max_qp>>(out, LOG_MAX_QP);
    put<general_cap<cap::log_max_srq>>(out, LOG_MAX_SRQ);
    put<general_cap<cap::log_max_rmp>>(out, LOG_MAX_RMP);
    put<general_cap<cap::log_max_xrq>>(out, LOG_MAX_XRQ);
    put<general_cap<cap::tag_matching>>(out, 1);
    put<general_cap<cap::rndv_offload_rc>>(out, 1);
    put<general_cap<cap::log_tag_matching_list_sz>>(out,
                                                    LOG_TAG_MATCHING_LIST_SZ);
    put<general_cap<cap::ext_stride_num_range>>(out, 1); /* striding XRQs */
    put<general_cap<cap::log_max_cq_sz>>(out, LOG_MAX_CQ_SZ);
    put<general_cap<cap::log_max_cq>>(out, LOG_MAX_CQ);
    put<general_cap<cap::log_max_mkey>>(out, LOG_MAX_MKEY);
    put<general_cap<cap::fixed_buffer_size>>(out, 1); /* KSM mkeys */
    put<general_cap<cap::log_max_klm_list_size>>(out, LOG_MAX_KLM_LIST);
    put<general_cap<cap::log_max_ra_req_qp>>(out, LOG_MAX_RA_QP);
    put<general_cap<cap::log_max_ra_res_qp>>(out, LOG_MAX_RA_QP);
    put<general_cap<cap::dct>>(out, 1); /* DC transport (firmware/dct.cc) */
    put<general_cap<cap::log_max_ra_req_dc>>(out, LOG_MAX_RA_DC);
    put<general_cap<cap::log_max_ra_res_dc>>(out, LOG_MAX_RA_DC);
    put<general_cap<cap::gid_table_size>>(out, p.gids.size());
    put<general_cap<cap::device_memory>>(out, 1);
    put<general_cap<cap::device_frequency_mhz>>(out, HCA_CORE_CLOCK_KHZ / 1000);
    put<general_cap<cap::device_frequency_khz>>(out, HCA_CORE_CLOCK_KHZ);
    put<general_cap<cap::pkey_table_size>>(out, p.pkey_tbl_len);
    put<general_cap<cap::port_type>>(
            out, p.is_eth() ? PORT_TYPE_ETH : PORT_TYPE_IB);
    put<general_cap<cap::num_ports>>(out, dev->ports.size());
    put<general_cap<cap::log_max_msg>>(out, LOG_MAX_MSG);
    put<general_cap<cap::cqe_version>>(out, 1);
    put<general_cap<cap::roce>>(out, dev->roce_enabled);
    put<general_cap<cap::atomic>>(out, 1);
    put<general_cap<cap::rc>>(out, 1);
    put<general_cap<cap::fl_rc_qp_when_roce_disabled>>(
            out, dev->fl_rc_qp_when_roce_disabled);
    put<general_cap<cap::uar_4k>>(out, 1);
    put<general_cap<cap::log_pg_sz>>(out, 12);
    put<general_cap<cap::bf>>(out, 1);
    put<general_cap<cap::log_bf_reg_size>>(
            out, ilog2_ceil(UAR_BF_REG_SIZE));
    put<general_cap<cap::max_wqe_sz_sq>>(out, MAX_WQE_SZ_SQ);
    put<general_cap<cap::max_wqe_sz_rq>>(out, MAX_WQE_SZ_RQ);
    put<general_cap<cap::log_max_pd>>(out, LOG_MAX_PD);
    put<general_cap<cap::num_of_uars_per_page>>(out, 1);
    /* an InfiniBand port's vport context carries the adaptively routed
     * SLs (vport.cc) */
    put<general_cap<cap::ooo_sl_mask>>(out, !p.is_eth());
    if (dev->num_lag_ports > 1) {
        put<general_cap<cap::lag_tx_port_affinity>>(out, 1);
        put<general_cap<cap::num_lag_ports>>(out, dev->num_lag_ports);
        put<general_cap<cap::lag_dct>>(out, 1);
    }
}

/* What the responder executes (responder.cc): the standard and the masked
 * atomics, on 4 and 8 bytes, in host endianness; no PCI atomics */
/* The device memory ibv_alloc_dm hands out (frontend/dm.cc) */
void fill_device_mem_caps(uint32_t *out)
{
    namespace cap = prm::device_mem_cap;
    constexpr unsigned log_align = 6;

    static_assert((1u << log_align) == DEVICE_MEMORY_ALIGN, "64-byte units");
    put<device_mem_cap<cap::memic>>(out, 1);
    put<device_mem_cap<cap::log_min_memic_alloc_size>>(
            out, log_align);
    put<device_mem_cap<cap::log_max_memic_addr_alignment>>(
            out, log_align);
    put<device_mem_cap<cap::memic_bar_size>>(out, DEVICE_MEMORY_SIZE);
    put<device_mem_cap<cap::max_memic_size>>(out, DEVICE_MEMORY_SIZE);
}

void fill_atomic_caps(uint32_t *out)
{
    namespace cap = prm::atomic_cap;

    put<atomic_cap<cap::atomic_req_8B_endianness_mode>>(out, 1);
    put<atomic_cap<cap::supported_atomic_req_8B_endianness_mode_1>>(out, 1);
    put<atomic_cap<cap::atomic_operations>>(
            out, UCT_MLX5_ATOMIC_OPS_CMP_SWAP | UCT_MLX5_ATOMIC_OPS_FETCH_ADD |
                 UCT_MLX5_ATOMIC_OPS_MASKED_CMP_SWAP |
                 UCT_MLX5_ATOMIC_OPS_MASKED_FETCH_ADD);
    put<atomic_cap<cap::atomic_size_qp>>(out, UCS_BIT(2) | UCS_BIT(3));
    /* what a ConnectX-6 Dx reports for its DC transport too (UCX takes the
     * extended atomics' sizes as those both transports have) */
    put<atomic_cap<cap::atomic_size_dc>>(out, UCS_BIT(2) | UCS_BIT(3));
}

void fill_roce_caps(const device *dev, uint32_t *out)
{
    namespace cap = prm::roce_cap;

    /* The UDP source port of a RoCEv2 QP is taken from its address path */
    put<roce_cap<cap::sw_r_roce_src_udp_port>>(out, 1);
    put<roce_cap<cap::fl_rc_qp_when_roce_disabled>>(
            out, dev->fl_rc_qp_when_roce_disabled);
    put<roce_cap<cap::fl_rc_qp_when_roce_enabled>>(
            out, dev->fl_rc_qp_when_roce_enabled);
}

} // namespace

fw_result query_hca_cap_cmd(const context *ctx, const mailbox &in,
                            mailbox &out)
{
    unsigned cap_type;

    if (!in.fits<prm::query_hca_cap_in::layout>()) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_INPUT_LEN);
    }
    if (!out.fits<prm::query_hca_cap_out::layout>()) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_OUTPUT_LEN);
    }
    if (uct_mlx5_prm_get<prm::query_hca_cap_in::other_function>(in.dw())) {
        return fw_fail(UCT_IB_EMU_SYND_HCA_CAP_OTHER_FUNCTION);
    }

    /* op_mod bit 0 selects current or maximal values: they are the same */
    cap_type = in.op_mod() >> 1;
    switch (cap_type) {
    case UCT_MLX5_HCA_CAP_GENERAL:
        fill_general_caps(ctx->dev, out.dw());
        return FW_OK;
    case UCT_MLX5_HCA_CAP_ATOMIC:
        fill_atomic_caps(out.dw());
        return FW_OK;
    case UCT_MLX5_HCA_CAP_ROCE:
        if (!ctx->dev->is_eth()) {
            return fw_fail(UCT_IB_EMU_SYND_HCA_CAP_NO_ROCE);
        }
        fill_roce_caps(ctx->dev, out.dw());
        return FW_OK;
    case UCT_MLX5_HCA_CAP_ETH_OFFLOADS:
        if (!ctx->dev->is_eth()) {
            return fw_fail(UCT_IB_EMU_SYND_HCA_CAP_BAD_TYPE);
        }
        return FW_OK;
    case UCT_MLX5_HCA_CAP_DEVICE_MEMORY:
        fill_device_mem_caps(out.dw());
        return FW_OK;
    case UCT_MLX5_HCA_CAP_ODP:
    case UCT_MLX5_HCA_CAP_NIC_FLOW_TABLE:
    case UCT_MLX5_HCA_CAP_QOS:
    case UCT_MLX5_HCA_CAP_DEBUG:
        /* pages a ConnectX-6 Dx has, answered as one without those
         * features: every capability zero (no ODP, flow steering, QoS
         * or debug features) */
        return FW_OK;
    default:
        return fw_fail(UCT_IB_EMU_SYND_HCA_CAP_BAD_TYPE);
    }
}

} // namespace uct_ib_emu
