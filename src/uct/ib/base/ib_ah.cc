/* The error reports of uct_ib_transient_ah; its calls are inline. */
#include "ib_ah.h"

#include <cerrno>
#include <string>

ucs_status_t uct_ib_transient_ah::create_failed(const struct ibv_ah_attr *attr,
                                                ucs_log_level_t fail_level) const
{
    const int         err  = errno; /* before anything can touch it */
    const std::string name = m_dev.port_name(m_port_num);
    std::string       dest;

    if (m_dev.port(attr->port_num) == nullptr) {
        /* the provider fails a port outside 1..num_ports without errno */
        ucs_log(fail_level, "create_ah(%s) failed: port %u is not a port of "
                "the device", name.c_str(), attr->port_num);
        return UCS_ERR_INVALID_PARAM;
    }

    dest  = attr->is_global ? uct_ib_gid_str(&attr->grh.dgid) :
                              "lid " + std::to_string(attr->dlid);
    errno = err;
    ucs_log(fail_level, "create_ah(%s) to %s failed: %m", name.c_str(),
            dest.c_str());

    switch (err) {
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

ucs_status_t uct_ib_transient_ah::av_failed(int ret) const
{
    const std::string name = m_dev.port_name(m_port_num);

    errno = ret;
    ucs_error("mlx5dv_init_obj(%s, AH) failed: %m", name.c_str());
    return UCS_ERR_IO_ERROR;
}

void uct_ib_transient_ah::destroy_failed(int ret) const
{
    const std::string name = m_dev.port_name(m_port_num);

    errno = ret;
    ucs_warn("destroy_ah(%s) failed: %m", name.c_str());
}
