/*
 * Verbs objects the DevX path needs the mlx5 view of: the PD number, CQs
 * with their numbers, and a UAR page for doorbells. Each is a handle that
 * owns its object and releases it (warning with errno if that fails).
 */
#ifndef UCT_IB_MLX5_DV_OBJ_H_
#define UCT_IB_MLX5_DV_OBJ_H_

#include <uct/ib/base/ib_device.h>

/* Errors name @a dev and the port the object is for. */

/** The PD number of @a pd. */
[[nodiscard]] ucs_status_t uct_ib_mlx5_get_pdn(const uct_ib_device &dev,
                                               uint8_t port_num,
                                               struct ibv_pd *pd,
                                               uint32_t *pdn_p);

/* A completion channel: the fd on which armed CQs report completions;
 * non-blocking, so draining it never waits. */
class uct_ib_comp_channel {
public:
    static ucs_status_t create(const uct_ib_device &dev, uint8_t port_num,
                               uct_ib_comp_channel **channel_p);
    ~uct_ib_comp_channel();

    uct_ib_comp_channel(const uct_ib_comp_channel&)            = delete;
    uct_ib_comp_channel &operator=(const uct_ib_comp_channel&) = delete;

    struct ibv_comp_channel *channel() const { return m_channel; }
    int                     fd() const { return m_channel->fd; }

    /**
     * Take one event without waiting and acknowledge it: the CQ it came
     * from, or NULL when none is queued.
     */
    struct ibv_cq *get_event() const;

private:
    uct_ib_comp_channel(const uct_ib_device &dev, uint8_t port_num) :
        m_dev(dev), m_port_num(port_num)
    {
    }

    const uct_ib_device     &m_dev;
    const uint8_t           m_port_num;
    struct ibv_comp_channel *m_channel = nullptr;
};

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

/* A DevX UAR page (BlueFlame registers) for doorbells. */
class uct_ib_mlx5_devx_uar {
public:
    static ucs_status_t create(const uct_ib_device &dev, uint8_t port_num,
                               uct_ib_mlx5_devx_uar **uar_p);
    ~uct_ib_mlx5_devx_uar();

    uct_ib_mlx5_devx_uar(const uct_ib_mlx5_devx_uar&)            = delete;
    uct_ib_mlx5_devx_uar &operator=(const uct_ib_mlx5_devx_uar&) = delete;

    uint32_t page_id() const { return m_uar->page_id; }
    void     *reg_addr() const { return m_uar->reg_addr; }

private:
    uct_ib_mlx5_devx_uar() = default;

    struct mlx5dv_devx_uar *m_uar = nullptr;
};

#endif
