/*
 * Operations on a live fabric (fabric_ctl.h) and the registry edits they
 * share with a joined process's test API (shm_fabric.h).
 */
#include <emu/api/fabric_ctl.h>
#include <emu/api/fabric_test.h>
#include <emu/fabric/member.h>
#include <emu/fabric/shm_fabric.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <functional>


namespace uct_ib_emu {
namespace fab {

namespace {

bool mac_usable(const uint8_t *mac)
{
    static const uint8_t zero[6] = {};

    return memcmp(mac, zero, 6) && !(mac[0] & 1);
}

} // namespace

/* The port of the same L2 segment other than @a self that has @a mac */
const port_rec *mac_holder(const fabric_rec *rec, const port_rec *self,
                           const uint8_t *mac, unsigned *h_p)
{
    for (unsigned h = 0; h < fab::host_count(rec); ++h) {
        for (const dev_rec &d : rec->hosts[h].devs) {
            const port_rec &p = d.port;

            if ((&p != self) && (p.link_layer == IBV_LINK_LAYER_ETHERNET) &&
                !strncmp(p.segment, self->segment, NAME_LEN) &&
                !memcmp(p.mac, mac, sizeof(p.mac))) {
                *h_p = h;
                return &p;
            }
        }
    }
    return nullptr;
}

ucs_status_t edit_mac(fabric_rec *rec, port_rec *p, const uint8_t *mac,
                      bool update_neigh, bool allow_duplicate)
{
    const port_rec *holder;
    unsigned       holder_host;

    if (p->link_layer != IBV_LINK_LAYER_ETHERNET) {
        ucs_error("emu: fabric %s: an InfiniBand port has no MAC", rec->name);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!mac_usable(mac)) {
        ucs_error("emu: fabric %s: a port's MAC cannot be zero or multicast",
                  rec->name);
        return UCS_ERR_INVALID_PARAM;
    }

    holder = mac_holder(rec, p, mac, &holder_host);
    if ((holder != nullptr) && !allow_duplicate) {
        ucs_error("emu: fabric %s: MAC %02x:%02x:%02x:%02x:%02x:%02x is "
                  "already %s's on L2 segment %.*s: two ports with one MAC "
                  "receive each other's frames (ucx_emu mac --force sets it anyway)",
                  rec->name, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5],
                  rec->hosts[holder_host].name, NAME_LEN, p->segment);
        return UCS_ERR_ALREADY_EXISTS;
    }

    memcpy(p->mac, mac, sizeof(p->mac));
    if (!update_neigh) {
        return UCS_OK;
    }

    /* a gratuitous ARP: every host of the segment learns the new MAC */
    for (unsigned h = 0; h < fab::host_count(rec); ++h) {
        for (const gid_rec &g : p->gids) {
            if (g.valid) {
                neigh_set(&rec->hosts[h], p->segment, g.raw, mac);
            }
        }
    }
    return UCS_OK;
}

ucs_status_t edit_drop(fabric_rec *rec, port_rec *p, bool drop_roce_v1,
                       bool drop_roce_v2)
{
    if (p->link_layer != IBV_LINK_LAYER_ETHERNET) {
        ucs_error("emu: fabric %s: an InfiniBand port carries no RoCE",
                  rec->name);
        return UCS_ERR_INVALID_PARAM;
    }

    p->drop_roce_v1 = drop_roce_v1;
    p->drop_roce_v2 = drop_roce_v2;
    return UCS_OK;
}

void edit_port_up(fabric_rec *rec, unsigned host, port_rec *p, bool up)
{
    const uint8_t state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;

    if (p->state == state) {
        return;
    }
    p->state = state;

    for (unsigned h = 0; h < fab::host_count(rec); ++h) {
        host_rec *other = &rec->hosts[h];

        for (const neigh_rec &n : other->neigh) {
            if (!n.valid || strncmp(n.segment, p->segment, NAME_LEN)) {
                continue;
            }
            if (h == host) {
                if (!up) { /* the link went down under its neighbours */
                    neigh_event_post(&other->neigh_events, NEIGH_EVENT_DEL,
                                     n.segment, n.gid, n.mac);
                }
                continue;
            }
            for (const gid_rec &g : p->gids) {
                /* a RoCEv1 and a RoCEv2 slot share an address: one event */
                if (g.valid && !memcmp(g.raw, n.gid, sizeof(n.gid))) {
                    neigh_event_post(&other->neigh_events,
                                     up ? NEIGH_EVENT_NEW : NEIGH_EVENT_FAILED,
                                     n.segment, n.gid, n.mac);
                    break;
                }
            }
        }
    }
}

void edit_neigh(fabric_rec *rec, unsigned h, const uint8_t *gid,
                const uint8_t *mac)
{
    host_rec *host = &rec->hosts[h];
    bool known     = false;

    for (neigh_rec &n : host->neigh) {
        if (n.valid && !memcmp(n.gid, gid, sizeof(n.gid))) {
            neigh_set(host, n.segment, gid, mac);
            known = true;
        }
    }
    if (known) {
        return;
    }

    for (unsigned o = 0; o < fab::host_count(rec); ++o) {
        for (const dev_rec &d : rec->hosts[o].devs) {
            for (const gid_rec &g : d.port.gids) {
                if (g.valid && !memcmp(g.raw, gid, sizeof(g.raw))) {
                    neigh_set(host, d.port.segment, gid, mac);
                    return;
                }
            }
        }
    }

    /* an address no port has: the host's first segment */
    neigh_set(host, host->devs[0].port.segment, gid, mac);
}

} // namespace fab
} // namespace uct_ib_emu


using namespace uct_ib_emu;

namespace {

enum class access { read, write };

/* A name field of the registry, which may lack its NUL if damaged */
template <size_t N> std::string field_str(const char (&field)[N])
{
    return std::string(field, strnlen(field, N));
}

/* Run fn on the mapped fabric, under its lock and, to write, the sequence
 * lock; to read it is mapped read-only, and nothing is written */
ucs_status_t with_fabric(const std::string &name,
                         const std::function<ucs_status_t(fab::fabric_rec*)>
                                 &fn, access how = access::write)
{
    fab::fabric_lock lock;
    fab::mapping map;
    ucs_status_t status;

    if (!fab::name_valid(name)) {
        ucs_error("emu: '%s' is not a fabric name (1..%zu letters, digits, "
                  "'_', '-' or '.')", name.c_str(), fab::MAX_FABRIC_NAME);
        return UCS_ERR_INVALID_PARAM;
    }

    status = lock.acquire(name);
    if (status != UCS_OK) {
        return status;
    }

    status = map.open(name, 0, 0, false, how == access::read);
    if (status != UCS_OK) {
        return status;
    }

    if (how == access::read) {
        return fn(map.get());
    }

    fab::write_begin(map.get());
    status = fn(map.get());
    fab::write_end(map.get());
    return status;
}

ucs_status_t with_port(const std::string &fabric, const std::string &host,
                       const std::string &device, uint8_t port,
                       const std::function<ucs_status_t(fab::fabric_rec*,
                                                        fab::port_rec*)> &fn)
{
    return with_fabric(fabric, [&](fab::fabric_rec *rec) {
        fab::port_rec *p;
        unsigned h;
        ucs_status_t status = fab::find_port(rec, host, device, port, &h, &p);

        return (status == UCS_OK) ? fn(rec, p) : status;
    });
}

int find_host_logged(fab::fabric_rec *rec, const std::string &host)
{
    int h = fab::find_host(rec, host);

    if (h < 0) {
        ucs_error("emu: fabric %s has no host '%s'", rec->name, host.c_str());
    }
    return h;
}

} // namespace


ucs_status_t uct_ib_emu_fabric_create(const std::string &fabric,
                                      unsigned hosts)
{
    fab::fabric_lock lock;
    fab::mapping map;
    ucs_status_t status;

    if (!fab::name_valid(fabric) || (hosts < 1) || (hosts > fab::MAX_HOSTS)) {
        ucs_error("emu: cannot create fabric '%s' with %u hosts: a name is "
                  "1..%zu letters, digits, '_', '-' or '.', and a fabric has "
                  "1..%u hosts", fabric.c_str(), hosts, fab::MAX_FABRIC_NAME,
                  fab::MAX_HOSTS);
        return UCS_ERR_INVALID_PARAM;
    }

    status = lock.acquire(fabric);
    if (status != UCS_OK) {
        return status;
    }

    if (uct_ib_emu_fabric_exists(fabric)) {
        status = map.open(fabric, 0, 0, false);
        if (status != UCS_OK) {
            return status;
        }
        if (fab::live_hosts(map.get()) > 0) {
            ucs_error("emu: fabric %s already exists, with %u live host(s)",
                      fabric.c_str(), fab::live_hosts(map.get()));
            return UCS_ERR_ALREADY_EXISTS;
        }
        /* nobody vouches for a fabric without members: a fresh one */
        fab::write_begin(map.get());
        fab::init_registry(map.get(), fabric, hosts, true);
        fab::write_end(map.get());
        return UCS_OK;
    }

    return map.open(fabric, hosts, 0, true);
}

bool uct_ib_emu_fabric_exists(const std::string &fabric)
{
    int fd = shm_open(fab::shm_name(fabric).c_str(), O_RDONLY | O_CLOEXEC, 0);

    if (fd < 0) {
        return false;
    }
    close(fd);
    return true;
}

ucs_status_t uct_ib_emu_fabric_destroy(const std::string &fabric, bool force)
{
    fab::fabric_lock lock;
    ucs_status_t status;
    unsigned alive;

    if (!fab::name_valid(fabric)) {
        ucs_error("emu: '%s' is not a fabric name", fabric.c_str());
        return UCS_ERR_INVALID_PARAM;
    }

    status = lock.acquire(fabric);
    if (status != UCS_OK) {
        return status;
    }

    if (!uct_ib_emu_fabric_exists(fabric)) {
        ucs_error("emu: fabric %s does not exist", fabric.c_str());
        return UCS_ERR_NO_ELEM;
    }

    /* the sockets say who is alive: a segment of another version, or a
     * damaged one, is removed all the same, without reading it */
    if (!force) {
        alive = fab::bound_hosts(fabric);
        if (alive > 0) {
            ucs_error("emu: fabric %s has %u live host(s); stop them first, "
                      "or force it", fabric.c_str(), alive);
            return UCS_ERR_BUSY;
        }
    }

    if (shm_unlink(fab::shm_name(fabric).c_str()) != 0) {
        ucs_error("emu: fabric %s: shm_unlink(%s) failed: %m", fabric.c_str(),
                  fab::shm_name(fabric).c_str());
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t uct_ib_emu_fabric_info(const std::string &fabric,
                                    uct_ib_emu_fabric_info_t *info)
{
    return with_fabric(fabric, [&](fab::fabric_rec *rec) {
        info->name       = field_str(rec->name);
        info->shm_name   = fab::shm_name(fabric);
        info->version    = rec->version;
        info->persistent = rec->persistent;
        info->hosts.clear();

        for (unsigned h = 0; h < fab::host_count(rec); ++h) {
            const fab::host_rec &hr = rec->hosts[h];
            uct_ib_emu_fabric_host_t host;
            const fab::counters_rec &c = hr.counters;

            host.name              = field_str(hr.name);
            host.alive             = fab::host_alive(fabric, h);
            host.pid               = host.alive ? hr.pid : 0;
            host.incarnation       = hr.incarnation;
            host.isolated          = hr.isolated;
            host.qps_alive         = host.alive ? c.qps_alive : 0;
            host.packets_sent      = c.packets_sent;
            host.packets_delivered = c.packets_delivered;
            host.retries           = c.retries;
            host.rnr_naks          = c.rnr_naks;
            host.err_cqes          = c.err_cqes;
            host.drops.assign(c.drops, c.drops + UCT_IB_EMU_DROP_LAST);

            for (const fab::dev_rec &d : hr.devs) {
                uct_ib_emu_fabric_port_t p;

                p.device       = field_str(d.name);
                p.port         = 1;
                p.link_layer   = d.port.link_layer;
                p.state        = static_cast<enum ibv_port_state>(d.port.state);
                p.active_mtu   = static_cast<enum ibv_mtu>(d.port.active_mtu);
                p.segment      = field_str(d.port.segment);
                p.lid          = d.port.lid;
                p.lmc          = d.port.lmc & 0x7; /* PortInfo's 3 bits */
                p.drop_roce_v1 = d.port.drop_roce_v1;
                p.drop_roce_v2 = d.port.drop_roce_v2;
                std::copy(d.port.mac, d.port.mac + 6, p.mac.begin());
                p.gids         = fab::gid_specs(d.port);
                host.ports.push_back(p);
            }

            for (const fab::neigh_rec &n : hr.neigh) {
                uct_ib_emu_fabric_neigh_t e;

                if (!n.valid) {
                    continue;
                }
                e.segment = field_str(n.segment);
                std::copy(n.gid, n.gid + 16, e.gid.begin());
                std::copy(n.mac, n.mac + 6, e.mac.begin());
                host.neigh.push_back(e);
            }

            for (const fab::conn_info &ci : fab::conn_read(&hr)) {
                uct_ib_emu_fabric_conn_t c;

                c.seq        = ci.gen;
                c.device     = field_str(
                        hr.devs[ci.dev % fab::DEVS_PER_HOST].name);
                c.port       = ci.port;
                c.qpn        = ci.qpn;
                c.remote_qpn = ci.remote_qpn;
                c.devx       = ci.devx;
                c.grh        = ci.grh;
                c.rlid       = ci.rlid;
                std::copy(ci.rmac, ci.rmac + 6, c.rmac.begin());
                std::copy(ci.rgid, ci.rgid + 16, c.rgid.begin());
                host.conns.push_back(c);
            }
            info->hosts.push_back(std::move(host));
        }
        return UCS_OK;
    }, access::read);
}

ucs_status_t uct_ib_emu_fabric_set_mac(const std::string &fabric,
                                       const std::string &host,
                                       const std::string &device, uint8_t port,
                                       const uct_ib_emu_mac_t &mac,
                                       bool update_neigh, bool allow_duplicate)
{
    return with_port(fabric, host, device, port,
                     [&](fab::fabric_rec *rec, fab::port_rec *p) {
        return fab::edit_mac(rec, p, mac.data(), update_neigh,
                             allow_duplicate);
    });
}

ucs_status_t uct_ib_emu_fabric_set_drop(const std::string &fabric,
                                        const std::string &host,
                                        const std::string &device,
                                        uint8_t port, bool drop_roce_v1,
                                        bool drop_roce_v2)
{
    return with_port(fabric, host, device, port,
                     [&](fab::fabric_rec *rec, fab::port_rec *p) {
        return fab::edit_drop(rec, p, drop_roce_v1, drop_roce_v2);
    });
}

ucs_status_t uct_ib_emu_fabric_set_port_up(const std::string &fabric,
                                           const std::string &host,
                                           const std::string &device,
                                           uint8_t port, bool up)
{
    return with_fabric(fabric, [&](fab::fabric_rec *rec) {
        fab::port_rec *p;
        unsigned h;
        ucs_status_t status = fab::find_port(rec, host, device, port, &h, &p);

        if (status == UCS_OK) {
            fab::edit_port_up(rec, h, p, up);
        }
        return status;
    });
}

ucs_status_t uct_ib_emu_fabric_neigh_set(const std::string &fabric,
                                         const std::string &host,
                                         const union ibv_gid &gid,
                                         const uct_ib_emu_mac_t &mac)
{
    static const uint8_t zero_gid[16] = {};

    if (!memcmp(gid.raw, zero_gid, sizeof(zero_gid))) {
        ucs_error("emu: fabric %s: the zero GID is no port's address; a "
                  "neighbour entry needs a port's GID", fabric.c_str());
        return UCS_ERR_INVALID_PARAM;
    }

    return with_fabric(fabric, [&](fab::fabric_rec *rec) {
        int h = find_host_logged(rec, host);

        if (h < 0) {
            return UCS_ERR_NO_ELEM;
        }
        fab::edit_neigh(rec, static_cast<unsigned>(h), gid.raw, mac.data());
        return UCS_OK;
    });
}

ucs_status_t uct_ib_emu_fabric_isolate(const std::string &fabric,
                                       const std::string &host, bool isolated)
{
    return with_fabric(fabric, [&](fab::fabric_rec *rec) {
        int h = find_host_logged(rec, host);

        if (h < 0) {
            return UCS_ERR_NO_ELEM;
        }
        __atomic_store_n(&rec->hosts[h].isolated, isolated ? 1u : 0u,
                         __ATOMIC_RELAXED);
        return UCS_OK;
    });
}

std::string uct_ib_emu_fabric_joined(std::string *host)
{
    emu_state &s = state();
    guard g(s.lock);

    if (s.fabric == nullptr) {
        return "";
    }
    if (host != nullptr) {
        *host = "host" + std::to_string(s.fabric->host());
    }
    return s.fabric->name();
}

std::string uct_ib_emu_fabric_shm_path(const std::string &fabric)
{
    return "/dev/shm" + fab::shm_name(fabric);
}


int uct_ib_emu_fabric_test_hold_host(const std::string &fabric, unsigned host)
{
    return fab::bind_abstract(fab::socket_name(fabric,
                                               "h" + std::to_string(host)));
}

ucs_status_t uct_ib_emu_fabric_test_plant_version(const std::string &fabric,
                                                  uint32_t version)
{
    uint32_t hdr[2] = {fab::MAGIC, version};
    int fd          = shm_open(fab::shm_name(fabric).c_str(),
                               O_RDWR | O_CREAT | O_EXCL, 0600);
    bool written;

    if (fd < 0) {
        ucs_error("emu: shm_open(%s) failed: %m",
                  fab::shm_name(fabric).c_str());
        return UCS_ERR_IO_ERROR;
    }
    written = (write(fd, hdr, sizeof(hdr)) == ssize_t(sizeof(hdr)));
    if (!written) {
        ucs_error("emu: write(%s) failed: %m", fab::shm_name(fabric).c_str());
    }
    close(fd);
    return written ? UCS_OK : UCS_ERR_IO_ERROR;
}

ucs_status_t uct_ib_emu_fabric_test_dead_member(const std::string &fabric,
                                                const std::string &host,
                                                const uct_ib_emu_mac_t &mac)
{
    return with_fabric(fabric, [&](fab::fabric_rec *rec) {
        int h = find_host_logged(rec, host);

        if (h < 0) {
            return UCS_ERR_NO_ELEM;
        }
        rec->hosts[h].joined = 1;
        rec->hosts[h].pid    = 1; /* init: never a member's */
        memcpy(rec->hosts[h].devs[0].port.mac, mac.data(), mac.size());
        return UCS_OK;
    });
}

ucs_status_t uct_ib_emu_fabric_test_record_conn(
        const std::string &fabric, const std::string &host,
        const uct_ib_emu_fabric_conn_t &conn)
{
    return with_fabric(fabric, [&](fab::fabric_rec *rec) {
        int h = find_host_logged(rec, host);
        fab::conn_info ci = {};

        if (h < 0) {
            return UCS_ERR_NO_ELEM;
        }
        for (ci.dev = 0; ci.dev < fab::DEVS_PER_HOST; ++ci.dev) {
            if (conn.device == rec->hosts[h].devs[ci.dev].name) {
                break;
            }
        }
        if (ci.dev == fab::DEVS_PER_HOST) {
            ucs_error("emu: fabric %s: host %s has no device %s", rec->name,
                      host.c_str(), conn.device.c_str());
            return UCS_ERR_NO_ELEM;
        }
        ci.qpn        = conn.qpn;
        ci.remote_qpn = conn.remote_qpn;
        ci.port       = conn.port;
        ci.grh        = conn.grh;
        ci.devx       = conn.devx;
        ci.rlid       = conn.rlid;
        memcpy(ci.rmac, conn.rmac.data(), sizeof(ci.rmac));
        memcpy(ci.rgid, conn.rgid.data(), sizeof(ci.rgid));
        fab::conn_write(&rec->hosts[h], ci);
        return UCS_OK;
    });
}
