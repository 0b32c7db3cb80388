/*
 * Memory export through UMR: the md's registrations are exported under
 * indirect mkeys from a pool, which a UMR queue pair binds to each MR on
 * registration (mlx5dv_wr_mr_list) and invalidates on release
 * (ibv_wr_local_inv). The exported key addresses the region zero-based, as
 * mlx5dv_wr_mr_list binds it.
 *
 * The UMR QP is a verbs RC QP (mlx5dv_create_qp with the MR-list and local
 * invalidate send ops) connected to itself with ibv_modify_qp. Its packets
 * loop back through the port like any other: on RoCE it uses the GID the
 * interfaces select (uct_ib_device_select_gid with the same GID_INDEX and
 * ROCE_SUBNETS knobs) and that GID's RoCE version, never a fixed index; on
 * InfiniBand its own LID. Force-loopback is a bit of the DevX address path
 * that verbs cannot set (ibv_modify_qp has no attribute for it), so this
 * verbs QP never uses it, whatever the HCA supports; the kernel resolves
 * the loopback MAC at the RTR transition as for any verbs QP.
 *
 * Nothing is created before the first registration, which probes the path
 * once: one bind and one invalidate of a private buffer, all of it bounded
 * by the timeout. If anything fails, one warning names device:port, the GID
 * index and the reason, the QP is torn down and export stays disabled for
 * the md: registrations keep their MRs' keys and never wait again. After a
 * successful probe, every post waits for its completion at most the timeout;
 * a failure is logged as an error once and disables export the same way
 * (the registration still succeeds with its MR's key; a release revokes its
 * key by destroying the mkey). Destruction never waits for the QP.
 */
#ifndef UCT_IB_MLX5_UMR_H_
#define UCT_IB_MLX5_UMR_H_

#include <uct/ib/base/ib_md.h>
#include <ucs/time/time.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

typedef struct uct_ib_mlx5_umr_config {
    double                         timeout;      /* seconds */
    unsigned long                  gid_index;    /* UCS_ULUNITS_AUTO or index */
    const ucs_config_names_array_t *roce_subnets; /* may be NULL; outlives
                                                     the object */
    bool                           hca_force_loopback; /* only logged */
} uct_ib_mlx5_umr_config_t;

class uct_ib_mlx5_umr : public uct_ib_md_mem_export {
public:
    /** Export for @a dev with @a pd (both outlive the object). Cheap: the
     *  queue pair and the pool are created at the first export. */
    [[nodiscard]] static ucs_status_t
    create(const uct_ib_device &dev, struct ibv_pd *pd,
           const uct_ib_mlx5_umr_config_t *config, uct_ib_mlx5_umr **umr_p);
    ~uct_ib_mlx5_umr() override;

    uct_ib_mlx5_umr(const uct_ib_mlx5_umr&)            = delete;
    uct_ib_mlx5_umr &operator=(const uct_ib_mlx5_umr&) = delete;

    /** Bind @a mr to a pooled mkey; *handle_p is the mlx5dv_mkey. */
    [[nodiscard]] ucs_status_t export_mr(struct ibv_mr *mr, int access,
                                         uint32_t *rkey_p,
                                         void **handle_p) override;

    /** Invalidate the mkey and pool it (destroy it if that fails). */
    void release(void *handle) override;

private:
    enum class state { unprobed, ready, disabled };

    /* Entries of a pooled mkey: each describes up to 2 GiB of an MR, so a
     * registration of up to 8 GiB is exported and a larger one keeps its
     * MR's key */
    static constexpr uint16_t MKEY_ENTRIES  = 4;
    static constexpr uint64_t KLM_MAX_BYTES = 1ull << 31;
    static constexpr unsigned QP_LEN        = 16;

    uct_ib_mlx5_umr(const uct_ib_device &dev, struct ibv_pd *pd,
                    const uct_ib_mlx5_umr_config_t *config);

    ucs_status_t probe();
    ucs_status_t create_qp(std::string *why);
    ucs_status_t connect_qp(std::string *why);
    ucs_status_t modify_qp(struct ibv_qp_attr *attr, int mask, const char *to,
                           std::string *why);
    ucs_status_t get_mkey(struct mlx5dv_mkey **mkey_p, std::string *why);
    void         put_mkey(struct mlx5dv_mkey *mkey);
    void         destroy_mkey(struct mlx5dv_mkey *mkey);
    ucs_status_t bind(struct mlx5dv_mkey *mkey, struct ibv_mr *mr, int access,
                      ucs_time_t deadline, std::string *why);
    ucs_status_t invalidate(struct mlx5dv_mkey *mkey, ucs_time_t deadline,
                            std::string *why);
    ucs_status_t wait(uint64_t wr_id, const char *what, ucs_time_t deadline,
                      std::string *why);
    void         disable(const char *what, const std::string &why,
                         ucs_log_level_t level);
    void         destroy_qp();
    std::string  path_str() const;

    const uct_ib_device      &m_dev;
    struct ibv_pd            *const m_pd;
    const double             m_timeout;
    const unsigned long      m_cfg_gid_index;
    const ucs_config_names_array_t *m_roce_subnets;
    const bool                     m_hca_force_loopback;

    std::mutex               m_lock;
    state                    m_state     = state::unprobed;
    uint8_t                  m_port_num  = 0;
    bool                     m_have_gid  = false;
    uct_ib_device_gid_info_t m_gid_info  = {};
    struct ibv_cq            *m_cq       = nullptr;
    struct ibv_qp            *m_qp       = nullptr;
    struct ibv_qp_ex         *m_qpx      = nullptr;
    struct mlx5dv_qp_ex      *m_mqpx     = nullptr;
    uint64_t                 m_next_wr_id = 1;
    bool                     m_pending   = false; /* a post never completed */

    /* What the probe binds */
    alignas(64) uint8_t              m_probe_buf[64] = {};

    /* The pool: free mkeys, and every mkey that exists */
    std::vector<struct mlx5dv_mkey*> m_free;
    std::set<struct mlx5dv_mkey*>    m_mkeys;
};

#endif
