/*
 * Tests of the IB transport on the emulated device: a fixture that installs
 * the emulated glue table with a two-port fabric of the link layer under
 * test (InfiniBand, RoCEv1-only, RoCEv2), and the facts about that fabric
 * the tests compute their expectations from.
 */
#ifndef UCT_IB_EMU_TEST_H_
#define UCT_IB_EMU_TEST_H_

#include <common/hwpath.h>
#include <common/test.h>

#include <uct/api/tools/ib_glue.h>
#include <emu/api/emu.h>

#include <arpa/inet.h>
#include <cstring>
#include <string>

namespace ib_test {

enum class link_layer { ib, roce_v1, roce_v2 };

std::string link_name(const ::testing::TestParamInfo<link_layer> &info);

/* One end of the fabric, as the topology declares it */
struct peer {
    const char       *dev;       /* "mlx5_0" */
    uct_ib_emu_mac_t mac;        /* Ethernet */
    uint32_t         ipv4;       /* Ethernet, host order */
    uint16_t         lid;        /* InfiniBand */
    uint64_t         guid;       /* InfiniBand port GUID */
};

/* The two Ethernet ports and the two InfiniBand ports of every fabric */
extern const peer eth_a, eth_b, ib_a, ib_b;

/** ::ffff:a.b.c.d for an IPv4 address in host order */
union ibv_gid ipv4_gid(uint32_t ipv4);

/** fe80::<EUI-64 of mac> */
union ibv_gid link_local_gid(const uct_ib_emu_mac_t &mac);

/** The UDP source port the mlx5 provider derives from a flow label */
uint16_t provider_udp_sport(uint32_t flow_label);

/* Installs the emulated device with a fabric; restores rdma-core after */
class emu_test : public ucs::test_base {
protected:
    void init() override;
    void cleanup() override;

    /** Replace the topology (no device may be open). */
    void set_topology(const uct_ib_emu_topology_t &topology);

    /** Ethernet ports a and b (with the GID types given) and IB ports a and
     *  b, each pair on one fabric. */
    static uct_ib_emu_topology_t topology(unsigned roce_gid_types);
};

/* Parameterised over the link layer */
class link_test : public emu_test,
                  public ::testing::WithParamInterface<link_layer> {
protected:
    void init() override;

    bool roce() const { return GetParam() != link_layer::ib; }
    const peer &a() const { return roce() ? eth_a : ib_a; }
    const peer &b() const { return roce() ? eth_b : ib_b; }

    /** The topology init() installs for this link layer. */
    uct_ib_emu_topology_t link_topology() const;

    /** "mlx5_0:1" */
    std::string port_name(const peer &p) const;

    /** The GID index auto selection must pick on this fabric. */
    unsigned expected_gid_index() const;

    /** The GID peers use to reach @a p (RoCE: the IPv4 one). */
    union ibv_gid expected_gid(const peer &p) const;

    /* What a DevX RC QP connected by the connect helper holds, beyond what
     * the fabric says: the knobs the test connected it with */
    struct qpc_expect {
        uint8_t  mtu;          /* IB encoding */
        uint8_t  log_rd;       /* log_rra_max and log_sra_max */
        uint8_t  min_rnr_nak;
        uint8_t  ack_timeout;
        uint8_t  hop_limit;
        uint8_t  sl;           /* InfiniBand sl, RoCE eth_prio */
        uint8_t  tclass;       /* RoCEv2: dscp << 2 */
        uint16_t udp_sport;    /* RoCEv2 */
    };

    /** The QP context of @a from's QP @a qpn, connected to @a to's QP
     *  @a dest_qpn as @a e says, read back from the emulated device. */
    void expect_connected_qpc(uint32_t qpn, const peer &from, const peer &to,
                              uint32_t dest_qpn, const qpc_expect &e) const;
};

#define UCT_IB_INSTANTIATE_LINK_TEST(_fixture) \
    INSTANTIATE_TEST_SUITE_P(emulated, _fixture, \
                             ::testing::Values(ib_test::link_layer::ib, \
                                               ib_test::link_layer::roce_v1, \
                                               ib_test::link_layer::roce_v2), \
                             ib_test::link_name)

} // namespace ib_test

#endif
