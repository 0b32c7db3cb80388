#include "ib_uct_test.h"

namespace ib_test {

uct_port::uct_port(const std::string &dev, const std::string &tl) :
    m_dev(dev), m_tl(tl)
{
}

uct_port::~uct_port()
{
    for (uct_ep_h ep : m_eps) {
        uct_ep_destroy(ep);
    }
    if (m_iface != nullptr) {
        uct_iface_close(m_iface);
    }
    if (m_iface_config != nullptr) {
        uct_config_release(m_iface_config);
    }
    if (m_md != nullptr) {
        uct_md_close(m_md);
    }
    if (m_md_config != nullptr) {
        uct_config_release(m_md_config);
    }
    if (m_worker != nullptr) {
        uct_worker_destroy(m_worker);
    }
}

ucs_status_t uct_port::open()
{
    uct_component_h    *components;
    unsigned           num_components;
    uct_component_h    ib = nullptr;
    uct_iface_params_t params = {};
    std::string        dev_port = m_dev + ":1";
    ucs_status_t       status;

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        return status;
    }
    for (unsigned i = 0; i < num_components; ++i) {
        uct_component_attr_t attr = {};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            (std::string(attr.name) == "ib")) {
            ib = components[i];
        }
    }
    uct_release_component_list(components);
    if (ib == nullptr) {
        return UCS_ERR_NO_DEVICE;
    }

    status = uct_worker_create(nullptr, UCS_THREAD_MODE_SINGLE, &m_worker);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_md_config_read(ib, nullptr, nullptr, &m_md_config);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_md_open(ib, m_dev.c_str(), m_md_config, &m_md);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_md_iface_config_read(m_md, m_tl.c_str(), nullptr, nullptr,
                                      &m_iface_config);
    if (status != UCS_OK) {
        return status;
    }

    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = m_tl.c_str();
    params.mode.device.dev_name = dev_port.c_str();
    return uct_iface_open(m_md, m_worker, &params, m_iface_config, &m_iface);
}

uct_ep_h uct_port::create_ep()
{
    uct_ep_params_t params = {};
    uct_ep_h        ep     = nullptr;

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = m_iface;
    EXPECT_EQ(UCS_OK, uct_ep_create(&params, &ep));
    if (ep != nullptr) {
        m_eps.push_back(ep);
    }
    return ep;
}

uct_iface_attr_t uct_port::attr() const
{
    uct_iface_attr_t attr = {};

    EXPECT_EQ(UCS_OK, uct_iface_query(m_iface, &attr));
    return attr;
}

std::vector<uint8_t> uct_port::device_address() const
{
    std::vector<uint8_t> addr(attr().device_addr_len);

    EXPECT_EQ(UCS_OK, uct_iface_get_device_address(
                      m_iface, reinterpret_cast<uct_device_addr_t*>(addr.data())));
    return addr;
}

std::vector<uint8_t> uct_port::ep_address(uct_ep_h ep) const
{
    std::vector<uint8_t> addr(attr().ep_addr_len);

    EXPECT_EQ(UCS_OK, uct_ep_get_address(
                      ep, reinterpret_cast<uct_ep_addr_t*>(addr.data())));
    return addr;
}

ucs_status_t uct_port::connect(uct_ep_h ep, const uct_port &remote,
                               uct_ep_h remote_ep) const
{
    std::vector<uint8_t>          dev_addr = remote.device_address();
    std::vector<uint8_t>          ep_addr  = remote.ep_address(remote_ep);
    uct_ep_connect_to_ep_params_t params   = {};

    return uct_ep_connect_to_ep_v2(
            ep, reinterpret_cast<const uct_device_addr_t*>(dev_addr.data()),
            reinterpret_cast<const uct_ep_addr_t*>(ep_addr.data()), &params);
}

} // namespace ib_test
