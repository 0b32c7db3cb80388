/*
 * Driving the IB transports through the public UCT API on the emulated
 * device: a memory domain and an interface on one port, and its endpoints.
 */
#ifndef UCT_IB_UCT_TEST_H_
#define UCT_IB_UCT_TEST_H_

#include <uct/ib/ib_emu_test.h>

#include <uct/api/uct.h>
#include <uct/api/v2/uct_v2.h>

#include <string>
#include <vector>

namespace ib_test {

/* An md on one device and an iface of one transport on its port 1 */
class uct_port {
public:
    uct_port(const std::string &dev, const std::string &tl);
    ~uct_port();

    uct_port(const uct_port&)            = delete;
    uct_port &operator=(const uct_port&) = delete;

    /** Open md and iface; the status of the first failure. */
    ucs_status_t open();

    uct_md_h    md() const { return m_md; }
    uct_iface_h iface() const { return m_iface; }

    uct_ep_h             create_ep();
    std::vector<uint8_t> device_address() const;
    std::vector<uint8_t> ep_address(uct_ep_h ep) const;

    /** Connect @a ep to @a remote_ep of @a remote. */
    ucs_status_t connect(uct_ep_h ep, const uct_port &remote,
                         uct_ep_h remote_ep) const;

    uct_iface_attr_t attr() const;

private:
    std::string           m_dev;
    std::string           m_tl;
    uct_worker_h          m_worker = nullptr;
    uct_md_config_t       *m_md_config = nullptr;
    uct_md_h              m_md = nullptr;
    uct_iface_config_t    *m_iface_config = nullptr;
    uct_iface_h           m_iface = nullptr;
    std::vector<uct_ep_h> m_eps;
};

} // namespace ib_test

#endif
