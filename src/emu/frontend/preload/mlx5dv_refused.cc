/*
 * The libmlx5 entry points the model has not got, so that a program that
 * calls one gets what a device without the feature answers (EOPNOTSUPP, or
 * NULL with errno EOPNOTSUPP) and not the system library's code, which
 * reads the provider's private context and crashes: steering (flows, DR),
 * crypto and DEKs, device memory, VAR, packet pacing, scheduling elements,
 * EQs and MSI vectors, asynchronous commands, DevX on verbs CQs, SRQs, WQs
 * and indirection tables, LAG port and UDP source port of a QP, DCI
 * streams, the clock and VFIO. mlx5dv_devx_umem_reg_ex is the model's:
 * a umem registered as mlx5dv_devx_umem_reg does, for any page size the
 * bitmap allows down to the system page.
 * Generated from the prototypes in <infiniband/mlx5dv.h>, the parameter
 * names kept as comments.
 */
#include <emu/frontend/preload/preload.h>

#include <infiniband/mlx5dv.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>


namespace {

template <typename T>
T *refuse()
{
    errno = EOPNOTSUPP;
    return nullptr;
}

} // namespace


PRELOAD_EXPORT struct mlx5dv_devx_umem *
mlx5dv_devx_umem_reg_ex(struct ibv_context *ctx,
                        struct mlx5dv_devx_umem_in *umem_in)
{
    const uct_ib_glue_ops_t *glue = preload_glue_ops();
    const uint64_t page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

    if (glue == nullptr) {
        return nullptr;
    }
    if (umem_in->comp_mask & MLX5DV_UMEM_MASK_DMABUF) {
        return refuse<struct mlx5dv_devx_umem>();
    }
    if ((umem_in->comp_mask & ~uint64_t(MLX5DV_UMEM_MASK_DMABUF)) ||
        !(umem_in->pgsz_bitmap & ((page_size << 1) - 1))) {
        /* unknown fields, or only pages larger than the memory's */
        errno = EINVAL;
        return nullptr;
    }

    return glue->devx_umem_reg(ctx, umem_in->addr, umem_in->size,
                               umem_in->access);
}


PRELOAD_EXPORT int _mlx5dv_mkey_check(struct mlx5dv_mkey * /* mkey */,
                                      struct mlx5dv_mkey_err * /* err_info */,
                                      size_t /* err_info_size */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int _mlx5dv_query_port(struct ibv_context * /* context */,
                                      uint32_t /* port_num */,
                                      struct mlx5dv_port * /* info */,
                                      size_t /* info_len */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct ibv_dm *
mlx5dv_alloc_dm(struct ibv_context * /* context */,
                struct ibv_alloc_dm_attr * /* dm_attr */,
                struct mlx5dv_alloc_dm_attr * /* mlx5_dm_attr */)
{
    return refuse<struct ibv_dm>();
}

PRELOAD_EXPORT struct mlx5dv_var *
mlx5dv_alloc_var(struct ibv_context * /* context */, uint32_t /* flags */)
{
    return refuse<struct mlx5dv_var>();
}

PRELOAD_EXPORT struct ibv_flow *
mlx5dv_create_flow(struct mlx5dv_flow_matcher * /* matcher */,
                   struct mlx5dv_flow_match_parameters * /* match_value */,
                   size_t /* num_actions */,
                   struct mlx5dv_flow_action_attr /* actions_attr */[])
{
    return refuse<struct ibv_flow>();
}

PRELOAD_EXPORT struct ibv_flow_action *
mlx5dv_create_flow_action_esp(struct ibv_context * /* ctx */,
                              struct ibv_flow_action_esp_attr * /* esp */,
                              struct mlx5dv_flow_action_esp * /* mlx5_attr */)
{
    return refuse<struct ibv_flow_action>();
}

PRELOAD_EXPORT struct ibv_flow_action *
mlx5dv_create_flow_action_modify_header(
        struct ibv_context * /* ctx */,
        size_t /* actions_sz */,
        uint64_t /* actions */[],
        enum mlx5dv_flow_table_type /* ft_type */)
{
    return refuse<struct ibv_flow_action>();
}

PRELOAD_EXPORT struct ibv_flow_action *
mlx5dv_create_flow_action_packet_reformat(
        struct ibv_context * /* ctx */,
        size_t /* data_sz */,
        void * /* data */,
        enum mlx5dv_flow_action_packet_reformat_type /* reformat_type */,
        enum mlx5dv_flow_table_type /* ft_type */)
{
    return refuse<struct ibv_flow_action>();
}

PRELOAD_EXPORT struct mlx5dv_flow_matcher *
mlx5dv_create_flow_matcher(
        struct ibv_context * /* context */,
        struct mlx5dv_flow_matcher_attr * /* matcher_attr */)
{
    return refuse<struct mlx5dv_flow_matcher>();
}

PRELOAD_EXPORT struct mlx5dv_steering_anchor *
mlx5dv_create_steering_anchor(struct ibv_context * /* context */,
                              struct mlx5dv_steering_anchor_attr * /* attr */)
{
    return refuse<struct mlx5dv_steering_anchor>();
}

PRELOAD_EXPORT struct ibv_wq *
mlx5dv_create_wq(struct ibv_context * /* context */,
                 struct ibv_wq_init_attr * /* wq_init_attr */,
                 struct mlx5dv_wq_init_attr * /* mlx5_wq_attr */)
{
    return refuse<struct ibv_wq>();
}

PRELOAD_EXPORT int
mlx5dv_crypto_login(struct ibv_context * /* context */,
                    struct mlx5dv_crypto_login_attr * /* login_attr */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_crypto_login_obj *
mlx5dv_crypto_login_create(
        struct ibv_context * /* context */,
        struct mlx5dv_crypto_login_attr_ex * /* login_attr */)
{
    return refuse<struct mlx5dv_crypto_login_obj>();
}

PRELOAD_EXPORT int
mlx5dv_crypto_login_destroy(
        struct mlx5dv_crypto_login_obj * /* crypto_login */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_crypto_login_query(
        struct mlx5dv_crypto_login_obj * /* crypto_login */,
        struct mlx5dv_crypto_login_query_attr * /* query_attr */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_crypto_login_query_state(struct ibv_context * /* context */,
                                enum mlx5dv_crypto_login_state * /* state */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_crypto_logout(struct ibv_context * /* context */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_dci_stream_id_reset(struct ibv_qp * /* qp */,
                                              uint16_t /* stream_id */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_dek *
mlx5dv_dek_create(struct ibv_context * /* context */,
                  struct mlx5dv_dek_init_attr * /* init_attr */)
{
    return refuse<struct mlx5dv_dek>();
}

PRELOAD_EXPORT int mlx5dv_dek_destroy(struct mlx5dv_dek * /* dek */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_dek_query(struct mlx5dv_dek * /* dek */,
                                    struct mlx5dv_dek_attr * /* attr */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_destroy_flow_matcher(struct mlx5dv_flow_matcher * /* matcher */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_destroy_steering_anchor(struct mlx5dv_steering_anchor * /* sa */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_devx_msi_vector *
mlx5dv_devx_alloc_msi_vector(struct ibv_context * /* ibctx */)
{
    return refuse<struct mlx5dv_devx_msi_vector>();
}

PRELOAD_EXPORT int mlx5dv_devx_cq_modify(struct ibv_cq * /* cq */,
                                         const void * /* in */,
                                         size_t /* inlen */, void * /* out */,
                                         size_t /* outlen */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_devx_cq_query(struct ibv_cq * /* cq */,
                                        const void * /* in */,
                                        size_t /* inlen */, void * /* out */,
                                        size_t /* outlen */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_devx_cmd_comp *
mlx5dv_devx_create_cmd_comp(struct ibv_context * /* context */)
{
    return refuse<struct mlx5dv_devx_cmd_comp>();
}

PRELOAD_EXPORT struct mlx5dv_devx_eq *
mlx5dv_devx_create_eq(struct ibv_context * /* ibctx */, const void * /* in */,
                      size_t /* inlen */, void * /* out */,
                      size_t /* outlen */)
{
    return refuse<struct mlx5dv_devx_eq>();
}

PRELOAD_EXPORT void
mlx5dv_devx_destroy_cmd_comp(struct mlx5dv_devx_cmd_comp * /* cmd_comp */)
{
    /* nothing was made: nothing to give back */
}

PRELOAD_EXPORT int mlx5dv_devx_destroy_eq(struct mlx5dv_devx_eq * /* eq */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_devx_free_msi_vector(struct mlx5dv_devx_msi_vector * /* msi */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_devx_get_async_cmd_comp(
        struct mlx5dv_devx_cmd_comp * /* cmd_comp */,
        struct mlx5dv_devx_async_cmd_hdr * /* cmd_resp */,
        size_t /* cmd_resp_len */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_devx_ind_tbl_modify(struct ibv_rwq_ind_table * /* ind_tbl */,
                           const void * /* in */, size_t /* inlen */,
                           void * /* out */, size_t /* outlen */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_devx_ind_tbl_query(struct ibv_rwq_ind_table * /* ind_tbl */,
                          const void * /* in */, size_t /* inlen */,
                          void * /* out */, size_t /* outlen */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_devx_obj_query_async(struct mlx5dv_devx_obj * /* obj */,
                            const void * /* in */, size_t /* inlen */,
                            size_t /* outlen */, uint64_t /* wr_id */,
                            struct mlx5dv_devx_cmd_comp * /* cmd_comp */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_devx_srq_modify(struct ibv_srq * /* srq */,
                                          const void * /* in */,
                                          size_t /* inlen */, void * /* out */,
                                          size_t /* outlen */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_devx_srq_query(struct ibv_srq * /* srq */,
                                         const void * /* in */,
                                         size_t /* inlen */, void * /* out */,
                                         size_t /* outlen */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_devx_subscribe_devx_event_fd(
        struct mlx5dv_devx_event_channel * /* event_channel */,
        int /* fd */,
        struct mlx5dv_devx_obj * /* obj */,
        uint16_t /* event_num */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_devx_wq_modify(struct ibv_wq * /* wq */,
                                         const void * /* in */,
                                         size_t /* inlen */, void * /* out */,
                                         size_t /* outlen */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_devx_wq_query(struct ibv_wq * /* wq */,
                                        const void * /* in */,
                                        size_t /* inlen */, void * /* out */,
                                        size_t /* outlen */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT void *mlx5dv_dm_map_op_addr(struct ibv_dm * /* dm */,
                                           uint8_t /* op */)
{
    return refuse<void>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_aso(struct mlx5dv_dr_domain * /* domain */,
                            struct mlx5dv_devx_obj * /* devx_obj */,
                            uint32_t /* offset */, uint32_t /* flags */,
                            uint8_t /* return_reg_c */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_default_miss(void)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_array(
        struct mlx5dv_dr_domain * /* domain */,
        size_t /* num_dest */,
        struct mlx5dv_dr_action_dest_attr * /* dests */[])
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_devx_tir(struct mlx5dv_devx_obj * /* devx_obj */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_ib_port(struct mlx5dv_dr_domain * /* domain */,
                                     uint32_t /* ib_port */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_ibv_qp(struct ibv_qp * /* ibqp */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_root_table(struct mlx5dv_dr_table * /* table */,
                                        uint16_t /* priority */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_table(struct mlx5dv_dr_table * /* table */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_vport(struct mlx5dv_dr_domain * /* domain */,
                                   uint32_t /* vport */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_drop(void)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_counter(struct mlx5dv_devx_obj * /* devx_obj */,
                                     uint32_t /* offset */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_meter(
        struct mlx5dv_dr_flow_meter_attr * /* attr */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_sampler(
        struct mlx5dv_dr_flow_sampler_attr * /* attr */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_modify_header(struct mlx5dv_dr_domain * /* domain */,
                                      uint32_t /* flags */,
                                      size_t /* actions_sz */,
                                      __be64 /* actions */[])
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_packet_reformat(
        struct mlx5dv_dr_domain * /* domain */,
        uint32_t /* flags */,
        enum mlx5dv_flow_action_packet_reformat_type /* reformat_type */,
        size_t /* data_sz */,
        void * /* data */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_pop_vlan(void)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_push_vlan(struct mlx5dv_dr_domain * /* domain */,
                                  __be32 /* vlan_hdr */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_tag(uint32_t /* tag_value */)
{
    return refuse<struct mlx5dv_dr_action>();
}

PRELOAD_EXPORT int
mlx5dv_dr_action_destroy(struct mlx5dv_dr_action * /* action */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_dr_action_modify_aso(struct mlx5dv_dr_action * /* action */,
                            uint32_t /* offset */, uint32_t /* flags */,
                            uint8_t /* return_reg_c */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_dr_action_modify_flow_meter(
        struct mlx5dv_dr_action * /* action */,
        struct mlx5dv_dr_flow_meter_attr * /* attr */,
        __be64 /* modify_field_select */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_dr_aso_other_domain_link(struct mlx5dv_devx_obj * /* devx_obj */,
                                struct mlx5dv_dr_domain * /* peer_dmn */,
                                struct mlx5dv_dr_domain * /* dmn */,
                                uint32_t /* flags */,
                                uint8_t /* return_reg_c */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_dr_aso_other_domain_unlink(struct mlx5dv_devx_obj * /* devx_obj */,
                                  struct mlx5dv_dr_domain * /* dmn */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT void
mlx5dv_dr_domain_allow_duplicate_rules(struct mlx5dv_dr_domain * /* domain */,
                                       bool /* allow */)
{
    /* nothing was made: nothing to give back */
}

PRELOAD_EXPORT struct mlx5dv_dr_domain *
mlx5dv_dr_domain_create(struct ibv_context * /* ctx */,
                        enum mlx5dv_dr_domain_type /* type */)
{
    return refuse<struct mlx5dv_dr_domain>();
}

PRELOAD_EXPORT int
mlx5dv_dr_domain_destroy(struct mlx5dv_dr_domain * /* domain */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT void
mlx5dv_dr_domain_set_reclaim_device_memory(struct mlx5dv_dr_domain * /* dmn */,
                                           bool /* enable */)
{
    /* nothing was made: nothing to give back */
}

PRELOAD_EXPORT int
mlx5dv_dr_domain_sync(struct mlx5dv_dr_domain * /* domain */,
                      uint32_t /* flags */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_dr_matcher *
mlx5dv_dr_matcher_create(struct mlx5dv_dr_table * /* table */,
                         uint16_t /* priority */,
                         uint8_t /* match_criteria_enable */,
                         struct mlx5dv_flow_match_parameters * /* mask */)
{
    return refuse<struct mlx5dv_dr_matcher>();
}

PRELOAD_EXPORT int
mlx5dv_dr_matcher_destroy(struct mlx5dv_dr_matcher * /* matcher */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_dr_matcher_set_layout(struct mlx5dv_dr_matcher * /* matcher */,
                             struct mlx5dv_dr_matcher_layout * /* layout */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_dr_rule *
mlx5dv_dr_rule_create(struct mlx5dv_dr_matcher * /* matcher */,
                      struct mlx5dv_flow_match_parameters * /* value */,
                      size_t /* num_actions */,
                      struct mlx5dv_dr_action * /* actions */[])
{
    return refuse<struct mlx5dv_dr_rule>();
}

PRELOAD_EXPORT int mlx5dv_dr_rule_destroy(struct mlx5dv_dr_rule * /* rule */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_dr_table *
mlx5dv_dr_table_create(struct mlx5dv_dr_domain * /* domain */,
                       uint32_t /* level */)
{
    return refuse<struct mlx5dv_dr_table>();
}

PRELOAD_EXPORT int
mlx5dv_dr_table_destroy(struct mlx5dv_dr_table * /* table */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_dump_dr_domain(FILE * /* fout */,
                      struct mlx5dv_dr_domain * /* domain */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_dump_dr_matcher(FILE * /* fout */,
                       struct mlx5dv_dr_matcher * /* matcher */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_dump_dr_rule(FILE * /* fout */,
                                       struct mlx5dv_dr_rule * /* rule */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_dump_dr_table(FILE * /* fout */,
                                        struct mlx5dv_dr_table * /* table */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT void mlx5dv_free_var(struct mlx5dv_var * /* dv_var */)
{
    /* nothing was made: nothing to give back */
}

PRELOAD_EXPORT int
mlx5dv_get_clock_info(struct ibv_context * /* context */,
                      struct mlx5dv_clock_info * /* clock_info */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct ibv_device **
mlx5dv_get_vfio_device_list(struct mlx5dv_vfio_context_attr * /* attr */)
{
    return refuse<struct ibv_device *>();
}

PRELOAD_EXPORT int mlx5dv_map_ah_to_qp(struct ibv_ah * /* ah */,
                                       uint32_t /* qp_num */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_modify_qp_lag_port(struct ibv_qp * /* qp */,
                                             uint8_t /* port_num */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_modify_qp_sched_elem(struct ibv_qp * /* qp */,
                            const struct mlx5dv_sched_leaf * /* requestor */,
                            const struct mlx5dv_sched_leaf * /* responder */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_modify_qp_udp_sport(struct ibv_qp * /* qp */,
                                              uint16_t /* udp_sport */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_pp *
mlx5dv_pp_alloc(struct ibv_context * /* context */, size_t /* pp_context_sz */,
                const void * /* pp_context */, uint32_t /* flags */)
{
    return refuse<struct mlx5dv_pp>();
}

PRELOAD_EXPORT void mlx5dv_pp_free(struct mlx5dv_pp * /* pp */)
{
    /* nothing was made: nothing to give back */
}

PRELOAD_EXPORT int
mlx5dv_qp_cancel_posted_send_wrs(struct mlx5dv_qp_ex * /* mqp */,
                                 uint64_t /* wr_id */)
{
    return -EOPNOTSUPP; /* a count, or -errno */
}

PRELOAD_EXPORT int mlx5dv_query_qp_lag_port(struct ibv_qp * /* qp */,
                                            uint8_t * /* port_num */,
                                            uint8_t * /* active_port_num */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_reserved_qpn_alloc(struct ibv_context * /* ctx */,
                                             uint32_t * /* qpn */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_reserved_qpn_dealloc(struct ibv_context * /* ctx */,
                                               uint32_t /* qpn */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_sched_leaf *
mlx5dv_sched_leaf_create(struct ibv_context * /* context */,
                         const struct mlx5dv_sched_attr * /* sched_attr */)
{
    return refuse<struct mlx5dv_sched_leaf>();
}

PRELOAD_EXPORT int
mlx5dv_sched_leaf_destroy(struct mlx5dv_sched_leaf * /* leaf */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_sched_leaf_modify(struct mlx5dv_sched_leaf * /* leaf */,
                         const struct mlx5dv_sched_attr * /* sched_attr */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct mlx5dv_sched_node *
mlx5dv_sched_node_create(struct ibv_context * /* context */,
                         const struct mlx5dv_sched_attr * /* sched_attr */)
{
    return refuse<struct mlx5dv_sched_node>();
}

PRELOAD_EXPORT int
mlx5dv_sched_node_destroy(struct mlx5dv_sched_node * /* node */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_sched_node_modify(struct mlx5dv_sched_node * /* node */,
                         const struct mlx5dv_sched_attr * /* sched_attr */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int
mlx5dv_set_context_attr(struct ibv_context * /* context */,
                        enum mlx5dv_set_ctx_attr_type /* type */,
                        void * /* attr */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int mlx5dv_vfio_get_events_fd(struct ibv_context * /* ibctx */)
{
    errno = EOPNOTSUPP;
    return -1; /* a file descriptor, or -1 */
}

PRELOAD_EXPORT int
mlx5dv_vfio_process_events(struct ibv_context * /* context */)
{
    return EOPNOTSUPP;
}
