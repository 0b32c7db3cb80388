/*
 * An address handle that lives only inside one scope: created, used, and
 * destroyed when the scope ends, with a warning if the destroy fails. The
 * transport never keeps an AH on the DevX connect path: a cached AH would
 * keep a peer's MAC after the peer moved.
 *
 * Every connect goes through here, so the calls are inline and only the
 * error reports are out of line.
 */
#ifndef UCT_IB_AH_H_
#define UCT_IB_AH_H_

#include "ib_device.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/compiler_def.h>

class uct_ib_transient_ah {
public:
    uct_ib_transient_ah(const uct_ib_device &dev, uint8_t port_num) :
        m_dev(dev), m_port_num(port_num)
    {
    }

    ~uct_ib_transient_ah() { destroy(); }

    uct_ib_transient_ah(const uct_ib_transient_ah&)            = delete;
    uct_ib_transient_ah &operator=(const uct_ib_transient_ah&) = delete;

    /**
     * Create the AH. A failure is logged at @a fail_level with the device,
     * port, destination and errno, and returned as UCS_ERR_UNREACHABLE (no
     * route or neighbour), UCS_ERR_NO_MEMORY, UCS_ERR_INVALID_PARAM (a port
     * the device does not have) or UCS_ERR_IO_ERROR.
     */
    [[nodiscard]] ucs_status_t create(struct ibv_pd *pd, struct ibv_ah_attr *attr,
                                      ucs_log_level_t fail_level)
    {
        ucs_assert(m_ah == nullptr);
        m_ah = uct_ib_glue->create_ah(pd, attr);
        if (ucs_unlikely(m_ah == nullptr)) {
            return create_failed(attr, fail_level);
        }
        return UCS_OK;
    }

    /** The mlx5 address vector of the AH (valid until destroy()). */
    [[nodiscard]] ucs_status_t av(struct mlx5_wqe_av **av_p) const
    {
        struct mlx5dv_obj obj; /* the provider reads only the member asked for */
        struct mlx5dv_ah  dv_ah = {};
        int               ret;

        obj.ah.in  = m_ah;
        obj.ah.out = &dv_ah;
        ret        = uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH);
        if (ucs_unlikely(ret != 0)) {
            return av_failed(ret);
        }
        *av_p = dv_ah.av;
        return UCS_OK;
    }

    /** Destroy now; warns with errno if the provider refuses. */
    void destroy()
    {
        int ret;

        if (m_ah == nullptr) {
            return;
        }
        ret  = uct_ib_glue->destroy_ah(m_ah);
        m_ah = nullptr; /* never retried: the AH is not ours to touch again */
        if (ucs_unlikely(ret != 0)) {
            destroy_failed(ret);
        }
    }

    struct ibv_ah *ah() const { return m_ah; }

private:
    ucs_status_t create_failed(const struct ibv_ah_attr *attr,
                               ucs_log_level_t fail_level) const;
    ucs_status_t av_failed(int ret) const;
    void destroy_failed(int ret) const;

    const uct_ib_device &m_dev;
    const uint8_t       m_port_num;
    struct ibv_ah       *m_ah = nullptr;
};

#endif
