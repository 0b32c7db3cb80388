#include "dv_obj.h"

#include <ucs/debug/log_def.h>

#include <cerrno>
#include <new>
#include <string>

ucs_status_t uct_ib_mlx5_get_pdn(const uct_ib_device &dev, uint8_t port_num,
                                 struct ibv_pd *pd, uint32_t *pdn_p)
{
    struct mlx5dv_obj obj   = {};
    struct mlx5dv_pd  dv_pd = {};
    int               ret;

    obj.pd.in  = pd;
    obj.pd.out = &dv_pd;
    ret        = uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD);
    if (ret != 0) {
        errno = ret;
        ucs_error("mlx5dv_init_obj(%s, PD) failed: %m",
                  dev.port_name(port_num).c_str());
        return UCS_ERR_IO_ERROR;
    }

    *pdn_p = dv_pd.pdn;
    return UCS_OK;
}

ucs_status_t uct_ib_mlx5_cq::create(const uct_ib_device &dev, uint8_t port_num,
                                    int cqe, uct_ib_mlx5_cq **cq_p,
                                    const uct_ib_comp_channel *channel)
{
    struct mlx5dv_obj obj = {};
    uct_ib_mlx5_cq    *cq;
    int               ret;

    cq = new (std::nothrow) uct_ib_mlx5_cq(dev, port_num);
    if (cq == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    cq->m_cq = uct_ib_glue->create_cq(dev.context(), cqe, nullptr,
                                      (channel != nullptr) ?
                                      channel->channel() : nullptr, 0);
    if (cq->m_cq == nullptr) {
        const int         err  = errno; /* before the name is built */
        const std::string name = dev.port_name(port_num);

        errno = err;
        ucs_error("create_cq(%s, cqe %d) failed: %m", name.c_str(), cqe);
        delete cq;
        return (err == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    obj.cq.in  = cq->m_cq;
    obj.cq.out = &cq->m_dv;
    ret        = uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ);
    if (ret != 0) {
        errno = ret;
        ucs_error("mlx5dv_init_obj(%s, CQ) failed: %m",
                  dev.port_name(port_num).c_str());
        delete cq;
        return UCS_ERR_IO_ERROR;
    }

    *cq_p = cq;
    return UCS_OK;
}

uct_ib_mlx5_cq::~uct_ib_mlx5_cq()
{
    int ret;

    if (m_cq == nullptr) {
        return;
    }

    ret = uct_ib_glue->destroy_cq(m_cq);
    if (ret != 0) {
        errno = ret;
        ucs_warn("destroy_cq(%s, cq 0x%x) failed: %m",
                 m_dev.port_name(m_port_num).c_str(), m_dv.cqn);
    }
}

ucs_status_t uct_ib_mlx5_devx_uar::create(const uct_ib_device &dev,
                                          uint8_t port_num,
                                          unsigned bf_reg_size,
                                          uct_ib_mlx5_devx_uar **uar_p)
{
    uct_ib_mlx5_devx_uar *uar = new (std::nothrow) uct_ib_mlx5_devx_uar();

    if (uar == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    if (bf_reg_size > 0) {
        uar->m_uar = uct_ib_glue->devx_alloc_uar(dev.context(),
                                                 MLX5DV_UAR_ALLOC_TYPE_BF);
        if (uar->m_uar != nullptr) {
            uar->m_reg.half = bf_reg_size / 2;
        } else {
            const int         err  = errno; /* before the name is built */
            const std::string name = dev.port_name(port_num);

            errno = err;
            ucs_debug("mlx5dv_devx_alloc_uar(%s, BlueFlame) failed: %m; a "
                      "non-cached UAR instead", name.c_str());
        }
    }
    if (uar->m_uar == nullptr) {
        uar->m_uar = uct_ib_glue->devx_alloc_uar(dev.context(),
                                                 MLX5DV_UAR_ALLOC_TYPE_NC);
    }
    if (uar->m_uar == nullptr) {
        const int         err  = errno; /* before the name is built */
        const std::string name = dev.port_name(port_num);

        errno = err;
        ucs_error("mlx5dv_devx_alloc_uar(%s) failed: %m", name.c_str());
        delete uar;
        return (err == EOPNOTSUPP) ? UCS_ERR_UNSUPPORTED : UCS_ERR_IO_ERROR;
    }

    uar->m_reg.addr = static_cast<uint8_t*>(uar->m_uar->reg_addr);
    *uar_p          = uar;
    return UCS_OK;
}

uct_ib_mlx5_devx_uar::~uct_ib_mlx5_devx_uar()
{
    if (m_uar != nullptr) {
        uct_ib_glue->devx_free_uar(m_uar);
    }
}
