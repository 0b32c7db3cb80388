#include "uct/ib/rc/rc_api_test.h"
#include "uct/uct_test_util.h"

#include <algorithm>

#include <uct/api/uct.h>
#include <uct/ib/mlx5/rc/rc_mlx5_iface.h>

namespace ib_test {

namespace {

/* The default knobs, and what the QPC must show for them */
constexpr unsigned roce_tclass     = 106; /* IB_TRAFFIC_CLASS=auto on RoCE */
constexpr unsigned hop_limit       = 255; /* IB_HOP_LIMIT */
constexpr unsigned exp_log_rd      = 2;   /* log2(RC_MAX_RD_ATOMIC=4) */
constexpr unsigned exp_ack_timeout = 18;  /* 4.096 us * 2^18 >= 1 s */
constexpr unsigned exp_min_rnr_nak = 14;  /* 1.28 ms >= RC_RNR_TIMEOUT=1ms */

} // namespace

void rc_api_test::cleanup()
{
    for (uct_ep_h ep : m_eps) {
        uct_ep_destroy(ep);
    }
    m_eps.clear();
    for (uct_iface_h iface : m_ifaces) {
        uct_iface_close(iface);
    }
    m_ifaces.clear();
    if (m_worker != nullptr) {
        uct_worker_destroy(m_worker);
        m_worker = nullptr;
    }
    for (const auto &md : m_mds) {
        uct_md_close(md.second);
    }
    m_mds.clear();
    link_test::cleanup();
}

uct_component_h ib_component()
{
    uct_component_h found = ucs::find_component("ib");

    EXPECT_NE(nullptr, found) << "no ib component";
    return found;
}

uct_md_h rc_api_test::md(const peer &p)
{
    auto            it = m_mds.find(p.dev);
    uct_md_config_t *config;
    uct_md_h        md = nullptr;

    if (it != m_mds.end()) {
        return it->second;
    }

    EXPECT_EQ(UCS_OK, uct_md_config_read(ib_component(), nullptr, nullptr,
                                         &config));
    for (const auto &knob : m_md_knobs) {
        EXPECT_EQ(UCS_OK, uct_config_modify(config, knob.first.c_str(),
                                            knob.second.c_str()))
                << knob.first << "=" << knob.second;
    }
    EXPECT_EQ(UCS_OK, uct_md_open(ib_component(), p.dev, config, &md));
    uct_config_release(config);
    if (md != nullptr) {
        m_mds[p.dev] = md;
    }
    return md;
}

std::vector<std::string> rc_api_test::tl_resources(const peer &p)
{
    std::vector<std::string> result;
    uct_tl_resource_desc_t   *resources;
    unsigned                 num_resources;

    EXPECT_EQ(UCS_OK, uct_md_query_tl_resources(md(p), &resources,
                                                &num_resources));
    for (unsigned i = 0; i < num_resources; ++i) {
        result.push_back(std::string(resources[i].tl_name) + "/" +
                         resources[i].dev_name);
    }
    uct_release_tl_resource_list(resources);
    return result;
}

ucs_status_t rc_api_test::try_open_iface(const char *tl, const peer &p,
                                         const knobs_t &knobs,
                                         uct_iface_h *iface_p)
{
    std::string        dev_name = port_name(p);
    uct_iface_params_t params   = {};
    uct_iface_config_t *config;
    ucs_status_t       status;

    if (m_worker == nullptr) {
        status = uct_worker_create(nullptr, UCS_THREAD_MODE_SINGLE, &m_worker);
        if (status != UCS_OK) {
            return status;
        }
    }

    status = uct_md_iface_config_read(md(p), tl, nullptr, nullptr, &config);
    if (status != UCS_OK) {
        return status;
    }

    for (const auto &knob : knobs) {
        status = uct_config_modify(config, knob.first.c_str(),
                                   knob.second.c_str());
        if (status != UCS_OK) {
            uct_config_release(config);
            return status;
        }
    }

    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = tl;
    params.mode.device.dev_name = dev_name.c_str();
    if (m_err_handler != nullptr) {
        params.field_mask     |= UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                 UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                 UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
        params.err_handler     = m_err_handler;
        params.err_handler_arg = m_err_handler_arg;
    }
    if (m_rx_headroom != 0) {
        params.field_mask |= UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
        params.rx_headroom = m_rx_headroom;
    }

    status = uct_iface_open(md(p), m_worker, &params, config, iface_p);
    uct_config_release(config);
    if (status == UCS_OK) {
        m_ifaces.push_back(*iface_p);
    }
    return status;
}

uct_iface_h rc_api_test::open_iface(const char *tl, const peer &p,
                                    const knobs_t &knobs)
{
    uct_iface_h iface = nullptr;

    EXPECT_EQ(UCS_OK, try_open_iface(tl, p, knobs, &iface))
            << tl << " on " << port_name(p);
    return iface;
}

uct_ep_h rc_api_test::create_ep(uct_iface_h iface, unsigned path_index)
{
    uct_ep_params_t params = {};
    uct_ep_h        ep     = nullptr;

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                        UCT_EP_PARAM_FIELD_PATH_INDEX;
    params.iface      = iface;
    params.path_index = path_index;
    EXPECT_EQ(UCS_OK, uct_ep_create(&params, &ep));
    if (ep != nullptr) {
        m_eps.push_back(ep);
    }
    return ep;
}

std::pair<uint32_t, uint32_t>
rc_api_test::connect_pair(uct_iface_h ia, uct_iface_h ib, unsigned path_index_a)
{
    uct_ep_h   ea = create_ep(ia, path_index_a), eb = create_ep(ib);
    ep_address aa = address(ia, ea), ab = address(ib, eb);

    EXPECT_EQ(UCS_OK, connect(ea, ab));
    EXPECT_EQ(UCS_OK, connect(eb, aa));
    EXPECT_TRUE(uct_rc_ep_is_connected(ea));
    EXPECT_TRUE(uct_rc_ep_is_connected(eb));
    return {qpns(aa).at(0), qpns(ab).at(0)};
}

void rc_api_test::destroy_ep(uct_ep_h ep)
{
    m_eps.erase(std::remove(m_eps.begin(), m_eps.end(), ep), m_eps.end());
    uct_ep_destroy(ep);
}

uct_iface_attr_t rc_api_test::query(uct_iface_h iface)
{
    uct_iface_attr_t attr = {};

    EXPECT_EQ(UCS_OK, uct_iface_query(iface, &attr));
    return attr;
}

std::vector<uint8_t> rc_api_test::device_address(uct_iface_h iface)
{
    std::vector<uint8_t> addr(query(iface).device_addr_len + 1);

    EXPECT_EQ(UCS_OK, uct_iface_get_device_address(
                      iface, reinterpret_cast<uct_device_addr_t*>(addr.data())));
    addr.pop_back();
    return addr;
}

ep_address rc_api_test::address(uct_iface_h iface, uct_ep_h ep)
{
    uct_iface_attr_t attr = query(iface);
    ep_address       addr;

    /* one byte more: an empty address still needs a buffer to be written */
    addr.dev = device_address(iface);
    addr.iface.resize(attr.iface_addr_len + 1);
    addr.ep.resize(attr.ep_addr_len + 1);
    EXPECT_EQ(UCS_OK, uct_iface_get_address(
                      iface, reinterpret_cast<uct_iface_addr_t*>(addr.iface.data())));
    EXPECT_EQ(UCS_OK, uct_ep_get_address(
                      ep, reinterpret_cast<uct_ep_addr_t*>(addr.ep.data())));
    addr.iface.resize(attr.iface_addr_len);
    addr.ep.resize(attr.ep_addr_len);
    return addr;
}

ucs_status_t rc_api_test::connect(uct_ep_h ep, const ep_address &remote)
{
    uct_ep_connect_to_ep_params_t params = {};

    params.field_mask         = UCT_EP_CONNECT_TO_EP_PARAM_FIELD_DEVICE_ADDR_LENGTH |
                                UCT_EP_CONNECT_TO_EP_PARAM_FIELD_EP_ADDR_LENGTH;
    params.device_addr_length = remote.dev.size();
    params.ep_addr_length     = remote.ep.size();
    return uct_ep_connect_to_ep_v2(
            ep, reinterpret_cast<const uct_device_addr_t*>(remote.dev.data()),
            reinterpret_cast<const uct_ep_addr_t*>(remote.ep.data()), &params);
}

std::vector<uint32_t> rc_api_test::qpns(const ep_address &addr)
{
    std::vector<uint32_t> result;

    EXPECT_EQ(0u, addr.ep.size() % 3);
    for (size_t i = 0; i + 3 <= addr.ep.size(); i += 3) {
        result.push_back(addr.ep[i] | (addr.ep[i + 1] << 8) |
                         (addr.ep[i + 2] << 16));
    }
    return result;
}

uct_ib_emu_qp_info_t rc_api_test::qp_info(uint32_t qpn)
{
    uct_ib_emu_qp_info_t info = {};

    EXPECT_EQ(UCS_OK, uct_ib_emu_qp_info(qpn, &info)) << "qp " << qpn;
    return info;
}

uct_ib_emu_topology_t rc_api_test::force_loopback_topology() const
{
    uct_ib_emu_topology_t topo = link_topology();

    for (auto &dev : topo.devices) {
        dev.fl_rc_qp_when_roce_enabled = true;
    }
    return topo;
}

void rc_api_test::expect_qpc(uint32_t qpn, const peer &from, const peer &to,
                             uint32_t dest_qpn) const
{
    qpc_expect e;

    e.mtu         = roce() ? IBV_MTU_1024 : IBV_MTU_4096;
    e.log_rd      = exp_log_rd;
    e.min_rnr_nak = exp_min_rnr_nak;
    e.ack_timeout = exp_ack_timeout;
    e.hop_limit   = hop_limit;
    e.sl          = 0;
    e.tclass      = roce_tclass;
    e.udp_sport   = 0xC000; /* path 0 */
    expect_connected_qpc(qpn, from, to, dest_qpn, e);
}

void rc_api_test::expect_fl_qpc(uint32_t qpn, uint32_t dest_qpn) const
{
    uct_ib_emu_qp_info_t info = qp_info(qpn);

    SCOPED_TRACE("qp " + std::to_string(qpn) + " loops back to qp " +
                 std::to_string(dest_qpn));
    EXPECT_EQ(qp_state_rts, info.state);
    EXPECT_EQ(dest_qpn, info.remote_qpn);
    EXPECT_EQ(1, info.primary.fl);
    EXPECT_EQ(1, info.primary.vhca_port_num);
    EXPECT_EQ(uct_ib_emu_mac_t{}, info.primary.rmac) << "no MAC";
    EXPECT_EQ(uct_ib_emu_gid_t{}, info.primary.rgid) << "no GID";
    EXPECT_EQ(0, info.primary.src_addr_index);
    EXPECT_EQ(0, info.primary.udp_sport);
}

void rc_api_test::expect_ah(uint64_t created)
{
    uct_ib_emu_counters_t c = uct_ib_emu_counters();

    EXPECT_EQ(created, c.ah_created);
    EXPECT_EQ(created, c.ah_destroyed);
    EXPECT_EQ(0u, c.ah_alive);
}

} // namespace ib_test
