/*
 * Tests of the RC transports (rc_mlx5, rc_gda, gga_mlx5) through the public
 * UCT API on the emulated device: memory domains by device name, interfaces
 * on "mlx5_0:1", endpoints connected with uct_ep_connect_to_ep_v2(), and
 * what the emulator shows of the QPs they programmed. Expectations come from
 * the fabric the fixture declares and the default knobs, never from the
 * library.
 */
#ifndef UCT_IB_MLX5_RC_API_TEST_H_
#define UCT_IB_MLX5_RC_API_TEST_H_

#include "uct/ib/ib_emu_test.h"

#include <uct/api/uct.h>
#include <uct/api/v2/uct_v2.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ib_test {

/* PRM opcodes and QP states the tests count and compare */
constexpr uint16_t op_init2rtr = 0x503;
constexpr uint16_t op_rtr2rts  = 0x504;
constexpr uint16_t op_2rst     = 0x50a;
constexpr uint8_t  qp_state_init = 0x1;
constexpr uint8_t  qp_state_rts  = 0x3;

/* Knobs set on an interface configuration: {name without prefix, value} */
typedef std::vector<std::pair<std::string, std::string>> knobs_t;

/* What a peer learns of an endpoint */
struct ep_address {
    std::vector<uint8_t> dev;
    std::vector<uint8_t> iface;
    std::vector<uint8_t> ep;
};

/** The "ib" component, from the public list. */
uct_component_h ib_component();

class rc_api_test : public link_test {
protected:
    void cleanup() override;

    /** Memory domain of @a p's device (opened once per test). */
    uct_md_h md(const peer &p);

    /** Transports and devices of @a p's memory domain, as "tl/dev". */
    std::vector<std::string> tl_resources(const peer &p);

    /** Open @a tl on port 1 of @a p with @a knobs; closed at cleanup. */
    ucs_status_t try_open_iface(const char *tl, const peer &p,
                                const knobs_t &knobs, uct_iface_h *iface_p);
    uct_iface_h open_iface(const char *tl, const peer &p,
                           const knobs_t &knobs = {});

    /** An unconnected endpoint on @a path_index; destroyed at cleanup. */
    uct_ep_h create_ep(uct_iface_h iface, unsigned path_index = 0);

    /** Destroy @a ep now rather than at cleanup. */
    void destroy_ep(uct_ep_h ep);

    static uct_iface_attr_t query(uct_iface_h iface);

    /** The device address of @a iface, sized as uct_iface_query says. */
    static std::vector<uint8_t> device_address(uct_iface_h iface);

    /** The addresses of @a ep on @a iface, sized as uct_iface_query says. */
    static ep_address address(uct_iface_h iface, uct_ep_h ep);

    /** uct_ep_connect_to_ep_v2() to @a remote, with both lengths given. */
    static ucs_status_t connect(uct_ep_h ep, const ep_address &remote);

    /** The QP numbers in an rc endpoint address: 24 bits each, LSB first. */
    static std::vector<uint32_t> qpns(const ep_address &addr);

    static uct_ib_emu_qp_info_t qp_info(uint32_t qpn);

    /* what memory domains opened from now on get (md() opens each once) */
    knobs_t             m_md_knobs;

    /* what interfaces opened from now on get */
    uct_error_handler_t m_err_handler     = nullptr;
    void                *m_err_handler_arg = nullptr;
    size_t              m_rx_headroom     = 0;

    /** Two endpoints of @a ia and @a ib (rc_mlx5 or rc_verbs) connected to
     *  each other, the first one on path @a path_index_a; their QP
     *  numbers. */
    std::pair<uint32_t, uint32_t> connect_pair(uct_iface_h ia, uct_iface_h ib,
                                               unsigned path_index_a = 0);

    /** The topology of this link layer with the RC force-loopback
     *  capability on every device (answered on RoCE ports). */
    uct_ib_emu_topology_t force_loopback_topology() const;

    /**
     * The QPC of @a qpn on @a from after a connect to @a dest_qpn on @a to,
     * with the default knobs: LID on InfiniBand; on RoCE the MAC, GID and
     * GID index the fabric declares, without force loopback.
     */
    void expect_qpc(uint32_t qpn, const peer &from, const peer &to,
                    uint32_t dest_qpn) const;

    /** The QPC of @a qpn looped back with the fl bit to @a dest_qpn. */
    void expect_fl_qpc(uint32_t qpn, uint32_t dest_qpn) const;

    /** AHs created since the last counter reset (and all of them gone). */
    static void expect_ah(uint64_t created);

private:
    std::map<std::string, uct_md_h> m_mds;
    uct_worker_h                    m_worker = nullptr;

    std::vector<uct_iface_h>        m_ifaces;
    std::vector<uct_ep_h>           m_eps;
};

} // namespace ib_test

#endif
