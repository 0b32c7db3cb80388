/*
 * Joining, following and leaving a fabric (member.h).
 */
#include <emu/fabric/host_topology.h>
#include <emu/fabric/member.h>

#include <ucs/config/parser.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>


namespace uct_ib_emu {

namespace {

struct fabric_config {
    char     *fabric;
    char     *host;
    unsigned long hosts;
};

ucs_config_field_t fabric_config_table[] = {
    {"IB_EMU_FABRIC", "default",
     "The emulated fabric the process joins as a host: processes that name\n"
     "the same fabric (per user) reach each other as hosts of one cluster.\n"
     "\"none\" keeps the emulated devices private to the process.",
     offsetof(fabric_config, fabric), UCS_CONFIG_TYPE_STRING},

    {"IB_EMU_HOST", "auto",
     "The host of the emulated fabric to join as (\"host1\" or \"1\"); \"auto\"\n"
     "takes the first host no running process owns.",
     offsetof(fabric_config, host), UCS_CONFIG_TYPE_STRING},

    {"IB_EMU_HOSTS", "auto",
     "Hosts of an emulated fabric this process creates, and the number an\n"
     "existing one must have: 1 to 16, or \"auto\" (4 hosts for a new fabric,\n"
     "any number for an existing one).",
     offsetof(fabric_config, hosts), UCS_CONFIG_TYPE_ULUNITS},

    UCS_CONFIG_EMPTY_FIELD
};

void copy_port_state(const fab::port_rec &pr, port *p)
{
    std::copy(pr.mac, pr.mac + 6, p->mac.begin());
    p->state        = static_cast<enum ibv_port_state>(pr.state);
    p->drop_roce_v1 = pr.drop_roce_v1;
    p->drop_roce_v2 = pr.drop_roce_v2;
}

} // namespace

UCS_CONFIG_REGISTER_TABLE(fabric_config_table, "emulated fabric", "",
                          fabric_config)


ucs_status_t member::join(emu_state &s, std::unique_ptr<member> *member_p)
{
    fabric_config config = {};
    std::unique_ptr<member> m;
    std::string name, host;
    ucs_status_t status;
    unsigned hosts;

    member_p->reset();
    status = ucs_config_parser_fill_opts(&config, fabric_config_table,
                                         UCS_DEFAULT_ENV_PREFIX, "");
    if (status != UCS_OK) {
        ucs_error("emu: invalid emulated fabric configuration; no emulated "
                  "devices");
        s.devices.clear();
        return status;
    }

    name = config.fabric;
    host = config.host;
    const unsigned long hosts_knob = config.hosts;
    ucs_config_parser_release_opts(&config, fabric_config_table);

    if (name == "none") {
        return UCS_OK;
    }

    if (!fab::name_valid(name)) {
        ucs_error("emu: UCX_IB_EMU_FABRIC=%s: a fabric is named by 1..%zu "
                  "letters, digits, '_', '-' or '.'; no emulated devices",
                  name.c_str(), fab::MAX_FABRIC_NAME);
        s.devices.clear();
        return UCS_ERR_INVALID_PARAM;
    }

    if (hosts_knob == UCS_ULUNITS_AUTO) {
        hosts = 0; /* do_join: the default for a new fabric, any for one */
    } else if ((hosts_knob >= 1) && (hosts_knob <= fab::MAX_HOSTS)) {
        hosts = static_cast<unsigned>(hosts_knob);
    } else {
        ucs_error("emu: UCX_IB_EMU_HOSTS=%s: a fabric has 1 to %u hosts, or "
                  "\"auto\"; no emulated devices",
                  getenv("UCX_IB_EMU_HOSTS"), fab::MAX_HOSTS);
        s.devices.clear();
        return UCS_ERR_INVALID_PARAM;
    }

    m.reset(new member());
    status = m->do_join(s, name, host, hosts);
    if (status != UCS_OK) {
        s.devices.clear();
        s.peers.clear();
        return status;
    }

    *member_p = std::move(m);
    return UCS_OK;
}

ucs_status_t member::do_join(emu_state &s, const std::string &name,
                             const std::string &host, unsigned hosts)
{
    std::vector<uct_ib_emu_topology_t> all;
    fab::fabric_lock lock;
    fab::fabric_rec *rec;
    ucs_status_t status;
    int h, fd = -1;

    status = lock.acquire(name);
    if (status != UCS_OK) {
        return status;
    }

    status = m_map.open(name, hosts ? hosts : fab::DEFAULT_HOSTS, hosts, false);
    if (status != UCS_OK) {
        return status;
    }

    rec = m_map.get();
    if (host == "auto") {
        /* the host's socket name is its ownership: the first one bound */
        for (h = 0; h < int(fab::host_count(rec)); ++h) {
            fd = fab::bind_abstract(fab::socket_name(name,
                                                     "h" + std::to_string(h)));
            if (fd >= 0) {
                break;
            }
            if (errno != EADDRINUSE) {
                ucs_error("emu: fabric %s: cannot bind the socket of host%d: "
                          "%m", name.c_str(), h);
                return UCS_ERR_IO_ERROR;
            }
        }
        if (fd < 0) {
            ucs_error("emu: fabric %s is full: all its %u hosts are taken",
                      name.c_str(), rec->nhosts);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
    } else {
        h = fab::find_host(rec, host);
        if (h < 0) {
            ucs_error("emu: fabric %s has no host '%s' (UCX_IB_EMU_HOST; it "
                      "has host0..host%u)", name.c_str(), host.c_str(),
                      rec->nhosts - 1);
            return UCS_ERR_NO_ELEM;
        }
        fd = fab::bind_abstract(fab::socket_name(name,
                                                 "h" + std::to_string(h)));
        if ((fd < 0) && (errno == EADDRINUSE)) {
            ucs_error("emu: fabric %s: host %s is taken by another process "
                      "(pid %d)", name.c_str(), rec->hosts[h].name,
                      rec->hosts[h].pid);
            return UCS_ERR_BUSY;
        } else if (fd < 0) {
            ucs_error("emu: fabric %s: cannot bind the socket of %s: %m",
                      name.c_str(), rec->hosts[h].name);
            return UCS_ERR_IO_ERROR;
        }
    }

    m_name      = name;
    m_host      = static_cast<unsigned>(h);
    m_fabric_id = rec->fabric_id;
    m_net.reset(new wire::endpoint(fd, m_host, rec));

    for (unsigned i = 0; i < fab::host_count(rec); ++i) {
        all.push_back(host_topology(rec->hosts[i]));
    }

    status = apply_host_topology(s, m_host, all[m_host], all);
    if (status != UCS_OK) {
        ucs_error("emu: fabric %s: the topology of %s is invalid",
                  name.c_str(), rec->hosts[m_host].name);
        return status;
    }

    fab::write_begin(rec);
    {
        fab::host_rec &me = rec->hosts[m_host];

        me.joined     = 1;
        me.pid        = getpid();
        me.start_time = fab::process_start_time(me.pid);
        me.isolated   = 0;
        ++me.incarnation;
        memset(&me.counters, 0, sizeof(me.counters));
    }
    fab::write_end(rec);
    m_joined = true;

    for (const auto &dev : s.devices) {
        dev->shared = &rec->hosts[m_host];
    }

    sync_locked(s);
    ucs_debug("emu: joined fabric %s as %s", name.c_str(),
              rec->hosts[m_host].name);
    return UCS_OK;
}

member::~member()
{
    leave();
}

void member::leave()
{
    fab::fabric_lock lock;
    fab::fabric_rec *rec = m_map.get();

    if (rec == nullptr) {
        return;
    }

    /* without the lock (10 s of trying) the slot stays marked: its socket
     * is unbound once this process is gone, so nobody trusts it */
    if (lock.acquire(m_name) == UCS_OK) {
        if (m_joined && intact()) {
            fab::write_begin(rec);
            rec->hosts[m_host].joined = 0;
            rec->hosts[m_host].pid    = 0;
            fab::write_end(rec);
        }

        m_net.reset(); /* unbinds the host */
        if (m_damaged) {
            /* its counts cannot be trusted: the sockets say who is left,
             * and the last one out removes what nobody can use */
            if (fab::bound_hosts(m_name) == 0) {
                m_map.unlink_name();
            }
        } else if (!rec->persistent && (fab::live_hosts(rec) == 0)) {
            m_map.unlink_name();
        }
    }

    m_net.reset();
    m_map.close();
}

bool member::intact()
{
    const fab::fabric_rec *rec = m_map.get();
    std::string problem;

    if (m_damaged) {
        return false;
    }

    /* the segment's last byte: a truncated one faults here, whatever part
     * of it this pass would have read (segment_guard.h) */
    (void)*(reinterpret_cast<const volatile uint8_t*>(rec) +
            sizeof(*rec) - 1);
    if (m_map.lost()) {
        problem = "it was truncated under this process";
    } else if (!fab::header_intact(rec, m_fabric_id)) {
        problem = fab::registry_problem(rec, m_name);
        if (problem.empty()) {
            problem = "it was made anew under this process";
        }
    } else {
        return true;
    }

    ucs_error("emu: fabric %s: its segment %s is damaged (%s): host%u "
              "leaves the fabric, and its connections to other hosts fail",
              m_name.c_str(), ("/dev/shm" + fab::shm_name(m_name)).c_str(),
              problem.c_str(),
              m_host);
    m_damaged = true;
    return false;
}

bool member::sync_locked(emu_state &s)
{
    const fab::fabric_rec *rec = m_map.get();
    std::map<std::string, std::map<uct_ib_emu_gid_t, uct_ib_emu_mac_t>> neigh;
    uint32_t seq;

    if (!intact()) {
        return true; /* nothing more will change here */
    }

    seq = fab::read_begin(rec);
    if (seq == m_seen_seq) {
        return true;
    }

    for (unsigned tries = 0; tries < 64; ++tries) {
        const fab::host_rec &me = rec->hosts[m_host];

        neigh.clear();
        for (const fab::neigh_rec &n : me.neigh) {
            uct_ib_emu_gid_t gid;
            uct_ib_emu_mac_t mac;

            if (!n.valid) {
                continue;
            }
            std::copy(n.gid, n.gid + 16, gid.begin());
            std::copy(n.mac, n.mac + 6, mac.begin());
            neigh[n.segment][gid] = mac;
        }

        for (const auto &dev : s.devices) {
            copy_port_state(me.devs[dev->index].port, &dev->ports[0]);
        }
        for (const auto &dev : s.peers) {
            copy_port_state(rec->hosts[dev->host].devs[dev->index].port,
                            &dev->ports[0]);
        }

        if (!fab::read_retry(rec, seq)) {
            s.neigh    = std::move(neigh);
            m_seen_seq = seq;
            return true;
        }
        seq = fab::read_begin(rec);
    }
    return false; /* a writer is in the middle: the next pass tries again */
}

uint64_t member::neigh_events_newest()
{
    return intact() ? neigh_event_newest(&m_map.get()->hosts[m_host].neigh_events) :
                      0;
}

bool member::neigh_events_read(uint64_t *pos, std::vector<neigh_event> *out)
{
    if (!intact()) {
        return false;
    }
    return neigh_event_read(&m_map.get()->hosts[m_host].neigh_events, pos, out);
}

void member::publish_locked(const emu_state &s, bool did_work)
{
    fab::counters_rec *c = &m_map.get()->hosts[m_host].counters;
    uint64_t err_cqes    = 0;
    uint64_t qps         = 0;

    if (m_damaged) {
        return;
    }

    for (const auto &dev : s.devices) {
        qps += dev->qps.size();
    }
    if (!did_work && (qps == m_qps_published)) {
        return;
    }
    m_qps_published = qps;

    for (const auto &e : s.engine.err_cqes) {
        err_cqes += e.second;
    }

    __atomic_store_n(&c->packets_sent, s.engine.packets_sent,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&c->packets_delivered, s.engine.packets_delivered,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&c->retries, s.engine.retries, __ATOMIC_RELAXED);
    __atomic_store_n(&c->rnr_naks, s.engine.rnr_naks, __ATOMIC_RELAXED);
    __atomic_store_n(&c->err_cqes, err_cqes, __ATOMIC_RELAXED);
    __atomic_store_n(&c->qps_alive, qps, __ATOMIC_RELAXED);
    for (unsigned r = 0; r < UCT_IB_EMU_DROP_LAST; ++r) {
        auto it = s.drops.find(static_cast<uct_ib_emu_drop_t>(r));

        __atomic_store_n(&c->drops[r], (it == s.drops.end()) ? 0 : it->second,
                         __ATOMIC_RELAXED);
    }
}

void member::record_connect(const qp &q)
{
    fab::host_rec *me = &m_map.get()->hosts[m_host];
    fab::conn_info c  = {};

    if (m_damaged) {
        return;
    }

    for (unsigned d = 0; d < fab::DEVS_PER_HOST; ++d) {
        if (q.ctx->dev->name == me->devs[d].name) {
            c.dev = static_cast<uint8_t>(d);
        }
    }
    c.qpn        = q.qpn;
    c.remote_qpn = q.remote_qpn;
    c.port       = q.port;
    c.grh        = q.path.grh;
    c.devx       = q.devx;
    c.rlid       = q.path.rlid;
    memcpy(c.rmac, q.path.rmac.data(), sizeof(c.rmac));
    memcpy(c.rgid, q.path.rgid.data(), sizeof(c.rgid));
    fab::conn_write(me, c);
}

bool member::isolated(unsigned h) const
{
    const fab::fabric_rec *rec = m_map.get();

    return m_damaged ||
           __atomic_load_n(&rec->hosts[m_host].isolated, __ATOMIC_RELAXED) ||
           ((h < fab::host_count(rec)) &&
            __atomic_load_n(&rec->hosts[h].isolated, __ATOMIC_RELAXED));
}

ucs_status_t member::edit_locked(emu_state &s,
                                 const std::function<ucs_status_t(
                                         fab::fabric_rec*)> &fn)
{
    fab::fabric_lock lock;
    ucs_status_t status = lock.acquire(m_name);

    if (status != UCS_OK) {
        return status;
    }
    if (!intact()) {
        return UCS_ERR_IO_ERROR;
    }

    fab::write_begin(m_map.get());
    status = fn(m_map.get());
    fab::write_end(m_map.get());
    sync_locked(s);
    return status;
}

void record_connect_locked(emu_state &s, const qp *q)
{
    if (s.fabric != nullptr) {
        s.fabric->record_connect(*q);
    }
}

} // namespace uct_ib_emu
