/*
 * An address handle that lives only inside one scope: created, used, and
 * destroyed when the scope ends, with a warning if the destroy fails. The
 * transport never keeps an AH on the DevX connect path: a cached AH would
 * keep a peer's MAC after the peer moved.
 */
#ifndef UCT_IB_AH_H_
#define UCT_IB_AH_H_

#include "ib_device.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>

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
     * route or neighbour), UCS_ERR_NO_MEMORY or UCS_ERR_IO_ERROR.
     */
    [[nodiscard]] ucs_status_t create(struct ibv_pd *pd, struct ibv_ah_attr *attr,
                                      ucs_log_level_t fail_level);

    /** The mlx5 address vector of the AH (valid until destroy()). */
    [[nodiscard]] ucs_status_t av(struct mlx5_wqe_av **av_p) const;

    /** Destroy now; warns with errno if the provider refuses. */
    void destroy();

    struct ibv_ah *ah() const { return m_ah; }

private:
    const uct_ib_device &m_dev;
    const uint8_t       m_port_num;
    struct ibv_ah       *m_ah = nullptr;
};

#endif
