/*
 * Verbs objects the DevX path needs the mlx5 view of: the PD number, CQs
 * with their numbers (reporting to a completion channel, ib_comp_channel.h),
 * and a UAR page for doorbells. Each is a handle that
 * owns its object and releases it (warning with errno if that fails).
 */
#ifndef UCT_IB_MLX5_DV_OBJ_H_
#define UCT_IB_MLX5_DV_OBJ_H_

#include <uct/ib/base/ib_comp_channel.h>
#include <uct/ib/base/ib_device.h>

/* Errors name @a dev and the port the object is for. */

/** The PD number of @a pd. */
[[nodiscard]] ucs_status_t uct_ib_mlx5_get_pdn(const uct_ib_device &dev,
                                               uint8_t port_num,
                                               struct ibv_pd *pd,
                                               uint32_t *pdn_p);

/* A verbs CQ and its mlx5 layout. */
class uct_ib_mlx5_cq {
public:
    /** With @a channel, the CQ reports completions there once armed. */
    static ucs_status_t create(const uct_ib_device &dev, uint8_t port_num,
                               int cqe, uct_ib_mlx5_cq **cq_p,
                               const uct_ib_comp_channel *channel = nullptr);
    ~uct_ib_mlx5_cq();

    uct_ib_mlx5_cq(const uct_ib_mlx5_cq&)            = delete;
    uct_ib_mlx5_cq &operator=(const uct_ib_mlx5_cq&) = delete;

    struct ibv_cq          *cq() const { return m_cq; }
    uint32_t               cqn() const { return m_dv.cqn; }
    const struct mlx5dv_cq &dv() const { return m_dv; }

private:
    uct_ib_mlx5_cq(const uct_ib_device &dev, uint8_t port_num) :
        m_dev(dev), m_port_num(port_num)
    {
    }

    const uct_ib_device &m_dev;
    const uint8_t       m_port_num;
    struct ibv_cq       *m_cq = nullptr;
    struct mlx5dv_cq    m_dv  = {};
};

/* A UAR register doorbells go to. A BlueFlame one has two halves, which
 * doorbells take in turn (a write-combining write to one half is not held
 * up behind the previous one still draining from the other). */
typedef struct uct_ib_mlx5_bf_reg {
    uint8_t  *addr; /* where the next doorbell goes */
    uint32_t half;  /* the size of a half; 0: not BlueFlame, 8-byte
                       doorbells only */
} uct_ib_mlx5_bf_reg_t;

/* A DevX UAR page for doorbells: BlueFlame where the device has it,
 * otherwise non-cached. */
class uct_ib_mlx5_devx_uar {
public:
    /** @a bf_reg_size: the device's BlueFlame register size, 0 if it has
     *  none; a BlueFlame UAR the device refuses falls back to non-cached */
    static ucs_status_t create(const uct_ib_device &dev, uint8_t port_num,
                               unsigned bf_reg_size,
                               uct_ib_mlx5_devx_uar **uar_p);
    ~uct_ib_mlx5_devx_uar();

    uct_ib_mlx5_devx_uar(const uct_ib_mlx5_devx_uar&)            = delete;
    uct_ib_mlx5_devx_uar &operator=(const uct_ib_mlx5_devx_uar&) = delete;

    uint32_t             page_id() const { return m_uar->page_id; }
    /** The register every send queue rung through this UAR shares */
    uct_ib_mlx5_bf_reg_t *reg() { return &m_reg; }

private:
    uct_ib_mlx5_devx_uar() = default;

    struct mlx5dv_devx_uar *m_uar = nullptr;
    uct_ib_mlx5_bf_reg_t   m_reg  = {};
};

#endif
