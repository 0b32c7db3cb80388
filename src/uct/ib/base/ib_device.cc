#include "ib_device.h"

#include <ucs/debug/log_def.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <new>

ucs_status_t uct_ib_device::open(struct ibv_device *ibv_dev, bool want_devx,
                                 uct_ib_device **dev_p)
{
    uct_ib_device *dev;
    ucs_status_t  status;
    int           devx = 0;
    int           ret;

    dev = new (std::nothrow) uct_ib_device();
    if (dev == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    dev->m_name = uct_ib_glue->get_device_name(ibv_dev);
    status      = uct_ib_glue_open_device(ibv_dev, want_devx, &dev->m_context,
                                          &devx);
    if (status != UCS_OK) {
        delete dev;
        return status;
    }
    dev->m_devx = devx;

    ret = uct_ib_glue->query_device(dev->m_context, &dev->m_attr);
    if (ret != 0) {
        errno = ret;
        ucs_error("query_device(%s) failed: %m", dev->name());
        delete dev;
        return UCS_ERR_IO_ERROR;
    }

    status = dev->query_ports();
    if (status != UCS_OK) {
        delete dev;
        return status;
    }

    *dev_p = dev;
    return UCS_OK;
}

ucs_status_t uct_ib_device::query_ports()
{
    struct ibv_gid_entry entry;
    int                  ret;

    m_ports.resize(m_attr.phys_port_cnt);
    for (uint8_t i = 0; i < m_attr.phys_port_cnt; ++i) {
        uct_ib_port &port = m_ports[i];

        port.port_num = i + 1;
        ret = uct_ib_glue->query_port(m_context, port.port_num, &port.attr);
        if (ret != 0) {
            errno = ret;
            ucs_error("query_port(%s) failed: %m",
                      port_name(port.port_num).c_str());
            return UCS_ERR_IO_ERROR;
        }

        for (int index = 0; index < port.attr.gid_tbl_len; ++index) {
            ret = uct_ib_glue->query_gid_ex(m_context, port.port_num, index,
                                            &entry, 0);
            if (ret == ENODATA) {
                continue; /* an empty slot */
            } else if (ret != 0) {
                errno = ret;
                ucs_error("query_gid_ex(%s index %d) failed: %m",
                          port_name(port.port_num).c_str(), index);
                return UCS_ERR_IO_ERROR;
            }
            port.gids.push_back(entry);
        }
    }
    return UCS_OK;
}

uct_ib_device::~uct_ib_device()
{
    if (m_context != nullptr) {
        (void)uct_ib_glue_close_device(m_context); /* warns on failure */
    }
}

const uct_ib_port *uct_ib_device::port(uint8_t port_num) const
{
    if ((port_num < 1) || (port_num > m_ports.size())) {
        return nullptr;
    }
    return &m_ports[port_num - 1];
}

const struct ibv_gid_entry *uct_ib_device::gid_entry(uint8_t port_num,
                                                     unsigned gid_index) const
{
    const uct_ib_port *p = port(port_num);

    if (p != nullptr) {
        for (const struct ibv_gid_entry &entry : p->gids) {
            if (entry.gid_index == gid_index) {
                return &entry;
            }
        }
    }
    return nullptr;
}

bool uct_ib_device::is_port_ib(uint8_t port_num) const
{
    const uct_ib_port *p = port(port_num);

    return (p != nullptr) && (p->attr.link_layer == IBV_LINK_LAYER_INFINIBAND);
}

bool uct_ib_device::is_port_roce(uint8_t port_num) const
{
    const uct_ib_port *p = port(port_num);

    return (p != nullptr) && (p->attr.link_layer == IBV_LINK_LAYER_ETHERNET);
}

std::string uct_ib_device::port_name(uint8_t port_num) const
{
    return m_name + ":" + std::to_string(port_num);
}

bool uct_ib_gid_is_ipv4_mapped(const union ibv_gid *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

bool uct_ib_gid_is_link_local(const union ibv_gid *gid)
{
    return (gid->raw[0] == 0xfe) && ((gid->raw[1] & 0xc0) == 0x80);
}

uct_ib_roce_version_info_t uct_ib_gid_roce_info(const struct ibv_gid_entry *entry)
{
    uct_ib_roce_version_info_t info;

    info.ver         = (entry->gid_type == IBV_GID_TYPE_ROCE_V2) ?
                       UCT_IB_DEVICE_ROCE_V2 : UCT_IB_DEVICE_ROCE_V1;
    info.addr_family = uct_ib_gid_is_ipv4_mapped(&entry->gid) ? AF_INET :
                                                                AF_INET6;
    return info;
}

std::string uct_ib_gid_str(const union ibv_gid *gid)
{
    char buf[INET6_ADDRSTRLEN];

    if (uct_ib_gid_is_ipv4_mapped(gid)) {
        inet_ntop(AF_INET, &gid->raw[12], buf, sizeof(buf));
    } else {
        inet_ntop(AF_INET6, gid->raw, buf, sizeof(buf));
    }
    return buf;
}

const char *uct_ib_roce_version_str(uct_ib_roce_version_t ver)
{
    switch (ver) {
    case UCT_IB_DEVICE_ROCE_V1:
        return "RoCE v1";
    case UCT_IB_DEVICE_ROCE_V2:
        return "RoCE v2";
    default:
        return "RoCE any";
    }
}

const char *uct_ib_wc_status_name(enum ibv_wc_status status)
{
#define UCT_IB_WC_STATUS_CASE(_name) case IBV_WC_##_name: return "IBV_WC_" #_name
    switch (status) {
    UCT_IB_WC_STATUS_CASE(SUCCESS);
    UCT_IB_WC_STATUS_CASE(LOC_LEN_ERR);
    UCT_IB_WC_STATUS_CASE(LOC_QP_OP_ERR);
    UCT_IB_WC_STATUS_CASE(LOC_EEC_OP_ERR);
    UCT_IB_WC_STATUS_CASE(LOC_PROT_ERR);
    UCT_IB_WC_STATUS_CASE(WR_FLUSH_ERR);
    UCT_IB_WC_STATUS_CASE(MW_BIND_ERR);
    UCT_IB_WC_STATUS_CASE(BAD_RESP_ERR);
    UCT_IB_WC_STATUS_CASE(LOC_ACCESS_ERR);
    UCT_IB_WC_STATUS_CASE(REM_INV_REQ_ERR);
    UCT_IB_WC_STATUS_CASE(REM_ACCESS_ERR);
    UCT_IB_WC_STATUS_CASE(REM_OP_ERR);
    UCT_IB_WC_STATUS_CASE(RETRY_EXC_ERR);
    UCT_IB_WC_STATUS_CASE(RNR_RETRY_EXC_ERR);
    UCT_IB_WC_STATUS_CASE(LOC_RDD_VIOL_ERR);
    UCT_IB_WC_STATUS_CASE(REM_INV_RD_REQ_ERR);
    UCT_IB_WC_STATUS_CASE(REM_ABORT_ERR);
    UCT_IB_WC_STATUS_CASE(INV_EECN_ERR);
    UCT_IB_WC_STATUS_CASE(INV_EEC_STATE_ERR);
    UCT_IB_WC_STATUS_CASE(FATAL_ERR);
    UCT_IB_WC_STATUS_CASE(RESP_TIMEOUT_ERR);
    UCT_IB_WC_STATUS_CASE(GENERAL_ERR);
    UCT_IB_WC_STATUS_CASE(TM_ERR);
    UCT_IB_WC_STATUS_CASE(TM_RNDV_INCOMPLETE);
    default:
        return "unknown status";
    }
#undef UCT_IB_WC_STATUS_CASE
}

uct_ib_device_list::uct_ib_device_list()
{
    m_list = uct_ib_glue->get_device_list(&m_count);
    if (m_list == nullptr) {
        m_count = 0; /* the caller decides how loud to be */
        m_error = errno;
    }
}

uct_ib_device_list::~uct_ib_device_list()
{
    if (m_list != nullptr) {
        uct_ib_glue->free_device_list(m_list);
    }
}

struct ibv_device *uct_ib_device_list::find(const char *name) const
{
    for (int i = 0; i < m_count; ++i) {
        if (strcmp(uct_ib_glue->get_device_name(m_list[i]), name) == 0) {
            return m_list[i];
        }
    }
    return nullptr;
}
