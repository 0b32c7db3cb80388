/*
 * The connection manager's addresses: an IPv4 address is a RoCE port's,
 * the one whose GID table has it as an IPv4-mapped RoCEv2 GID (the
 * fabric's 198.18.0.0/15 addresses, docs/emulator.md), on this host or
 * another. Resolving an address picks this host's port on the same L2
 * segment; the route is the GIDs of the two ports. The MAC is not fixed
 * here: a QP the CM connects resolves it when it moves to RTR, from the
 * neighbour table as it is then, as the kernel's rdma_cm does per
 * connection.
 */
#include <emu/frontend/cm/cm.h>
#include <emu/fabric/member.h>

#include <arpa/inet.h>


namespace uct_ib_emu {
namespace cm {

namespace {

constexpr uint16_t EPHEMERAL_BASE = 40000;

/* The RoCEv2 GID index of port p that carries IPv4 address ip, or -1 */
int gid_index_of(const port &p, uint32_t ip)
{
    for (uint32_t i = 0; i < p.gids.size(); ++i) {
        const gid_slot &g = p.gids[i];

        if (g.valid && (g.type == IBV_GID_TYPE_ROCE_V2) &&
            (g.gid.raw[10] == 0xff) && (g.gid.raw[11] == 0xff) &&
            (memcmp(&g.gid.raw[12], &ip, 4) == 0)) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

/* The port of the fabric with ip, and the device it is on (s.lock held) */
const port *port_of_ip(const emu_state &s, uint32_t ip, const device **dev_p)
{
    for (const auto *devs : {&s.devices, &s.peers}) {
        for (const auto &dev : *devs) {
            for (const port &p : dev->ports) {
                if (p.is_eth() && (gid_index_of(p, ip) >= 0)) {
                    *dev_p = dev.get();
                    return &p;
                }
            }
        }
    }
    return nullptr;
}

/* A port of this host on L2 segment @a fabric, active, with an IPv4 GID;
 * its IP (s.lock held) */
bool local_port_on(const emu_state &s, const std::string &fabric,
                   int *dev_index, uint8_t *port_num, uint32_t *ip)
{
    for (const auto &dev : s.devices) {
        for (const port &p : dev->ports) {
            if (!p.is_eth() || (p.fabric != fabric) ||
                (p.state != IBV_PORT_ACTIVE)) {
                continue;
            }
            for (const gid_slot &g : p.gids) {
                if (g.valid && (g.type == IBV_GID_TYPE_ROCE_V2) &&
                    (g.gid.raw[10] == 0xff) && (g.gid.raw[11] == 0xff)) {
                    *dev_index = static_cast<int>(dev->index);
                    *port_num  = p.num;
                    memcpy(ip, &g.gid.raw[12], 4);
                    return true;
                }
            }
        }
    }
    return false;
}

/* The context of this host's device dev_index, opened once, with the PD
 * its ids get (librdmacm's) */
struct ibv_context *device_context(int dev_index, struct ibv_pd **pd_p)
{
    cm_state &cm = the_cm();
    struct ibv_context *ctx = nullptr;
    struct ibv_device **list;
    struct ibv_pd *pd;
    int n = 0;

    {
        std::lock_guard<std::mutex> g(cm.lock);
        if ((size_t(dev_index) < cm.devices.size()) &&
            (cm.devices[dev_index] != nullptr)) {
            *pd_p = cm.pds[dev_index];
            return cm.devices[dev_index];
        }
    }

    list = uct_ib_emu_glue_ops.get_device_list(&n);
    if ((list != nullptr) && (dev_index < n)) {
        ctx = uct_ib_emu_glue_ops.open_device(list[dev_index]);
    }
    if (list != nullptr) {
        uct_ib_emu_glue_ops.free_device_list(list);
    }
    if (ctx == nullptr) {
        return nullptr;
    }
    pd = uct_ib_emu_glue_ops.alloc_pd(ctx);
    if (pd == nullptr) {
        uct_ib_emu_glue_ops.close_device(ctx);
        return nullptr;
    }

    hook_engine();
    std::lock_guard<std::mutex> g(cm.lock);
    if (cm.devices.size() <= size_t(dev_index)) {
        cm.devices.resize(dev_index + 1, nullptr);
        cm.pds.resize(dev_index + 1, nullptr);
    }
    if (cm.devices[dev_index] != nullptr) {
        /* another thread opened it meanwhile */
        uct_ib_emu_glue_ops.dealloc_pd(pd);
        uct_ib_emu_glue_ops.close_device(ctx);
    } else {
        cm.devices[dev_index] = ctx;
        cm.pds[dev_index]     = pd;
    }
    *pd_p = cm.pds[dev_index];
    return cm.devices[dev_index];
}

/* A port number nobody of this process has bound ip to (cm lock held) */
uint16_t ephemeral_port()
{
    static uint16_t next = 0;

    return htons(EPHEMERAL_BASE + (next++ % 20000));
}

bool in_use(const cm_state &cm, const id *self, uint32_t ip, uint16_t port)
{
    for (const auto &entry : cm.owned) {
        const id *o = entry.second.get();

        if ((o != self) && (o->src.sin_port == port) &&
            ((o->state == id_state::BOUND) ||
             (o->state == id_state::LISTEN)) &&
            ((o->src.sin_addr.s_addr == ip) ||
             (o->src.sin_addr.s_addr == INADDR_ANY) ||
             (ip == INADDR_ANY))) {
            return true;
        }
    }
    return false;
}

} // namespace


bool find_ip(uint32_t ip, unsigned *host, int *dev_index, uint8_t *port_num)
{
    emu_state &s = state();
    guard g(s.lock);
    const device *dev = nullptr;
    const port *p     = port_of_ip(s, ip, &dev);

    if (p == nullptr) {
        return false;
    }
    *host      = dev->peer ? static_cast<unsigned>(dev->host) :
                 ((s.fabric != nullptr) ? s.fabric->host() : 0);
    *dev_index = static_cast<int>(dev->index);
    *port_num  = p->num;
    return !dev->peer || (s.fabric != nullptr);
}

int attach_device(id *i, int dev_index, uint8_t port_num, uint32_t ip)
{
    struct ibv_pd *pd       = nullptr;
    struct ibv_context *ctx = device_context(dev_index, &pd);
    uct_ib_emu_mac_t mac;
    int index;

    if (ctx == nullptr) {
        return ENODEV;
    }

    {
        emu_state &s = state();
        guard g(s.lock);
        const device *dev = s.devices.at(dev_index).get();
        const port *p     = dev->get_port(port_num);

        index = (p != nullptr) ? gid_index_of(*p, ip) : -1;
        if (index < 0) {
            return EADDRNOTAVAIL;
        }
        i->sgid = p->gids[index].gid;
        mac     = p->mac;
    }

    std::lock_guard<std::mutex> g(the_cm().lock); /* the engine reads */
    i->pub.verbs                 = ctx;
    i->pub.pd                    = pd;
    i->pub.port_num              = port_num;
    i->dev_index                 = dev_index;
    i->sgid_index                = static_cast<uint8_t>(index);
    i->mac                       = mac;
    i->src.sin_family            = AF_INET;
    i->src.sin_addr.s_addr       = ip;
    memcpy(&i->pub.route.addr.src_addr, &i->src, sizeof(i->src));
    i->pub.route.addr.addr.ibaddr.sgid = i->sgid;
    i->pub.route.addr.addr.ibaddr.pkey = htobe16(0xffff);
    return 0;
}

int bind_addr(id *i, const struct sockaddr *addr)
{
    struct sockaddr_in in;
    unsigned host;
    int dev_index;
    uint8_t port_num;
    int err;

    if ((addr == nullptr) || (addr->sa_family != AF_INET)) {
        return EAFNOSUPPORT;
    }
    if (i->state != id_state::IDLE) {
        return EINVAL;
    }
    memcpy(&in, addr, sizeof(in));

    if (in.sin_addr.s_addr != INADDR_ANY) {
        if (!find_ip(in.sin_addr.s_addr, &host, &dev_index, &port_num) ||
            (host != own_host())) {
            return EADDRNOTAVAIL;
        }
        err = attach_device(i, dev_index, port_num, in.sin_addr.s_addr);
        if (err != 0) {
            return err;
        }
    }

    cm_state &cm = the_cm();
    std::lock_guard<std::mutex> g(cm.lock);
    if (in.sin_port == 0) {
        do {
            in.sin_port = ephemeral_port();
        } while (in_use(cm, i, in.sin_addr.s_addr, in.sin_port));
    } else if (in_use(cm, i, in.sin_addr.s_addr, in.sin_port)) {
        return EADDRINUSE;
    }
    i->src.sin_family = AF_INET;
    i->src.sin_addr   = in.sin_addr;
    i->src.sin_port   = in.sin_port;
    memcpy(&i->pub.route.addr.src_addr, &i->src, sizeof(i->src));
    i->state = id_state::BOUND;
    return 0;
}

int resolve_addr(id *i, const struct sockaddr *src, const struct sockaddr *dst)
{
    struct sockaddr_in to;
    unsigned host;
    int dev_index    = -1;
    uint8_t port_num = 0;
    uint32_t ip      = 0;
    int err;

    if ((dst == nullptr) || (dst->sa_family != AF_INET)) {
        return EAFNOSUPPORT;
    }
    memcpy(&to, dst, sizeof(to));
    if ((i->state == id_state::IDLE) && (src != nullptr)) {
        err = bind_addr(i, src);
        if (err != 0) {
            return err;
        }
    }
    if ((i->state != id_state::IDLE) && (i->state != id_state::BOUND)) {
        return EINVAL;
    }

    i->dst = to;
    memcpy(&i->pub.route.addr.dst_addr, &to, sizeof(to));
    if (!find_ip(to.sin_addr.s_addr, &host, &dev_index, &port_num)) {
        post_event(i, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH);
        return 0;
    }

    if (i->pub.verbs == nullptr) {
        /* this host's port on the destination's segment */
        {
            emu_state &s = state();
            guard g(s.lock);
            const device *dev = nullptr;
            const port *p     = port_of_ip(s, to.sin_addr.s_addr, &dev);

            if ((p == nullptr) ||
                !local_port_on(s, p->fabric, &dev_index, &port_num, &ip)) {
                dev_index = -1;
            }
        }
        if ((dev_index < 0) ||
            (attach_device(i, dev_index, port_num, ip) != 0)) {
            post_event(i, RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH);
            return 0;
        }
    }
    if (i->state == id_state::IDLE) {
        struct sockaddr_in any = i->src;

        any.sin_port = 0;
        err = bind_addr(i, reinterpret_cast<struct sockaddr*>(&any));
        if (err != 0) {
            return err;
        }
    }

    i->pub.route.addr.addr.ibaddr.dgid.raw[10] = 0xff;
    i->pub.route.addr.addr.ibaddr.dgid.raw[11] = 0xff;
    memcpy(&i->pub.route.addr.addr.ibaddr.dgid.raw[12], &to.sin_addr, 4);
    i->peer_gid  = i->pub.route.addr.addr.ibaddr.dgid;
    i->peer_host = host;
    {
        std::lock_guard<std::mutex> g(the_cm().lock);
        i->state = id_state::ADDR_RESOLVED;
    }
    post_event(i, RDMA_CM_EVENT_ADDR_RESOLVED);
    return 0;
}

int resolve_route(id *i)
{
    struct ibv_sa_path_rec &path = i->path;
    struct ibv_port_attr attr;

    if (i->state != id_state::ADDR_RESOLVED) {
        return EINVAL;
    }
    if (uct_ib_emu_glue_ops.query_port(i->pub.verbs, i->pub.port_num,
                                       &attr) != 0) {
        return ENODEV;
    }

    path              = {};
    path.sgid         = i->sgid;
    path.dgid         = i->peer_gid;
    path.pkey         = htobe16(0xffff);
    path.mtu          = attr.active_mtu;
    path.hop_limit    = 64;
    path.reversible   = 1;
    path.numb_path    = 1;
    path.packet_life_time = 14;
    i->pub.route.num_paths = 1;
    {
        std::lock_guard<std::mutex> g(the_cm().lock);
        i->state = id_state::ROUTE_RESOLVED;
    }
    post_event(i, RDMA_CM_EVENT_ROUTE_RESOLVED);
    return 0;
}

struct ibv_context **get_devices(int *num)
{
    struct ibv_context **list;
    int n = 0;

    {
        emu_state &s = state();
        guard g(s.lock);
        n = static_cast<int>(s.devices.size());
    }
    list = static_cast<struct ibv_context**>(calloc(n + 1, sizeof(*list)));
    if (list == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
    for (int d = 0; d < n; ++d) {
        struct ibv_pd *pd;

        list[d] = device_context(d, &pd);
    }
    if (num != nullptr) {
        *num = n;
    }
    return list;
}

} // namespace cm
} // namespace uct_ib_emu
