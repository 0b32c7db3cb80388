#include "ib_ah.h"

#include <cerrno>

ucs_status_t uct_ib_transient_ah::create(struct ibv_pd *pd,
                                         struct ibv_ah_attr *attr,
                                         ucs_log_level_t fail_level)
{
    ucs_assert(m_ah == nullptr);

    errno = 0;
    m_ah  = uct_ib_glue->create_ah(pd, attr);
    if (m_ah != nullptr) {
        return UCS_OK;
    }

    if (errno == 0) {
        /* the provider's answer to a port outside 1..num_ports */
        ucs_log(fail_level, "create_ah(%s) failed: port %u is not a port of "
                "the device", m_dev.port_name(m_port_num).c_str(),
                attr->port_num);
        return UCS_ERR_INVALID_PARAM;
    }

    if (attr->is_global) {
        ucs_log(fail_level, "create_ah(%s) to %s failed: %m",
                m_dev.port_name(m_port_num).c_str(),
                uct_ib_gid_str(&attr->grh.dgid).c_str());
    } else {
        ucs_log(fail_level, "create_ah(%s) to lid %u failed: %m",
                m_dev.port_name(m_port_num).c_str(), attr->dlid);
    }

    switch (errno) {
    case ENOMEM:
        return UCS_ERR_NO_MEMORY;
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ETIMEDOUT:
    case ENODATA:
        return UCS_ERR_UNREACHABLE;
    default:
        return UCS_ERR_IO_ERROR;
    }
}

ucs_status_t uct_ib_transient_ah::av(struct mlx5_wqe_av **av_p) const
{
    struct mlx5dv_obj obj = {};
    struct mlx5dv_ah  dv_ah = {};
    int               ret;

    obj.ah.in  = m_ah;
    obj.ah.out = &dv_ah;
    ret        = uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH);
    if (ret != 0) {
        errno = ret;
        ucs_error("mlx5dv_init_obj(%s, AH) failed: %m",
                  m_dev.port_name(m_port_num).c_str());
        return UCS_ERR_IO_ERROR;
    }

    *av_p = dv_ah.av;
    return UCS_OK;
}

void uct_ib_transient_ah::destroy()
{
    int ret;

    if (m_ah == nullptr) {
        return;
    }

    ret = uct_ib_glue->destroy_ah(m_ah);
    if (ret != 0) {
        errno = ret;
        ucs_warn("destroy_ah(%s) failed: %m", m_dev.port_name(m_port_num).c_str());
    }
    m_ah = nullptr; /* never retried: the AH is not ours to touch again */
}
