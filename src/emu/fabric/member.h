/*
 * fabric/ is the cross-process fabric (docs/emulator.md, "The fabric"): the
 * shared-memory registry (shm_fabric.h), a host's devices and fabric-wide
 * numbers (host_topology.h), the wire format and a host's socket (wire.h),
 * operations from outside (fabric_ctl.cc) and membership (this header).
 * fabric/ includes model/ and api/, never engine/, firmware/ or frontend/:
 * the engine calls the fabric, not the other way.
 *
 * A process's membership in a cross-process fabric: it joins as one host,
 * sees that host's devices, keeps its model of every port in step with the
 * shared registry, sends and receives the engine's packets, and leaves (the
 * last one out removes the fabric).
 *
 * Configuration:
 *   UCX_IB_EMU_FABRIC  the fabric's name (per user); "none" keeps the
 *                      emulated devices private to the process
 *   UCX_IB_EMU_HOST    the host to join as ("host1" or "1"); "auto": the
 *                      first host no live process owns
 *   UCX_IB_EMU_HOSTS   hosts of a fabric this process creates, and the
 *                      count an existing one must have; 0: 4, any
 */
#ifndef UCT_IB_EMU_FABRIC_MEMBER_H_
#define UCT_IB_EMU_FABRIC_MEMBER_H_

#include <emu/model/model.h>
#include <emu/fabric/shm_fabric.h>
#include <emu/fabric/wire.h>

#include <functional>
#include <memory>
#include <string>


namespace uct_ib_emu {

class member {
public:
    /*
     * Join the fabric the configuration names and install the host's
     * devices in s (s.lock held or s not shared yet). UCS_OK with
     * *member_p NULL for "none". On an error (logged once) s has no
     * devices at all.
     */
    static ucs_status_t join(emu_state &s, std::unique_ptr<member> *member_p);

    ~member();

    unsigned host() const
    {
        return m_host;
    }

    const std::string &name() const
    {
        return m_name;
    }

    wire::endpoint &net()
    {
        return *m_net;
    }

    /* Pull registry changes (MACs, port states, drop flags, the host's
     * neighbour table) into s's ports; false if a writer was in the middle
     * all along, so s still has the copy from before it */
    bool sync_locked(emu_state &s);

    /* Record a QP's INIT2RTR in the registry, where `ucx_emu qps` reads
     * the address it carries */
    void record_connect(const qp &q);

    /* Publish the host's counters to the registry: after a pass that did
     * work, or when the number of QPs changed */
    void publish_locked(const emu_state &s, bool did_work);

    /* The host's neighbour events (neigh_events.h): the newest one's
     * number, and those after *pos; false if some were lost (or the
     * registry cannot be read any more) */
    uint64_t neigh_events_newest();
    bool neigh_events_read(uint64_t *pos, std::vector<neigh_event> *out);

    /* Whether traffic between this host and host h is killed */
    bool isolated(unsigned h) const;

    /* Change the registry under the fabric lock, then sync s */
    ucs_status_t edit_locked(emu_state &s,
                             const std::function<ucs_status_t(
                                     fab::fabric_rec*)> &fn);

private:
    member() = default;
    ucs_status_t do_join(emu_state &s, const std::string &name,
                         const std::string &host, unsigned hosts);
    void leave();

    /* Whether the registry is still the one joined; the first time it is
     * not, one error names the segment and this host leaves the fabric:
     * its traffic to every other host is dropped, so its QPs fail with
     * retry-exceeded, and nothing more is read from or written to it */
    bool intact();

    std::string                     m_name;
    uint64_t                        m_fabric_id = 0;
    bool                            m_damaged   = false;
    unsigned                        m_host     = 0;
    fab::mapping                    m_map;
    std::unique_ptr<wire::endpoint> m_net;
    uint32_t                        m_seen_seq = UINT32_MAX;
    bool                            m_joined   = false;
    uint64_t                        m_qps_published = 0;
};

/* A QP reached RTR with an address (s.lock held): recorded if s is on a
 * fabric */
void record_connect_locked(emu_state &s, const qp *q);

} // namespace uct_ib_emu

#endif
