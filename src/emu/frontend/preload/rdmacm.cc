/*
 * librdmacm's entry points on the drop-in (docs/drop-in.md, "librdmacm"):
 * each forwards to the model's connection manager (emu/api/cm.h), so a
 * program linked with Debian's librdmacm.so.1 (rping, udaddy, rdma_server
 * and rdma_client, UCX's rdmacm transport) connects over the emulated
 * fabric by IP address. Those that keep no state are answered here: the
 * address information (through the C library's resolver), the event
 * names, the ports of an id's addresses. Multicast, SRQs of an id, the
 * extended QP creation and ECE are refused (EOPNOTSUPP); the rsocket calls
 * are left to the system's library, which has no kernel rdma_cm to use.
 */
#include <emu/frontend/preload/preload.h>

#include <emu/api/cm.h>

#include <rdma/rdma_verbs.h>

#include <arpa/inet.h>
#include <netdb.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>


namespace {

const uct_ib_emu_cm_ops_t *cm()
{
    const uct_ib_emu_cm_ops_t *ops = preload_cm_ops();

    if (ops == nullptr) {
        errno = ENOSYS;
    }
    return ops;
}

#define CM_M1(_slot, ...) \
    do { \
        const uct_ib_emu_cm_ops_t *ops = cm(); \
        return (ops == nullptr) ? -1 : ops->_slot(__VA_ARGS__); \
    } while (0)

#define CM_PTR(_slot, ...) \
    do { \
        const uct_ib_emu_cm_ops_t *ops = cm(); \
        return (ops == nullptr) ? nullptr : ops->_slot(__VA_ARGS__); \
    } while (0)

#define CM_VOID(_slot, ...) \
    do { \
        const uct_ib_emu_cm_ops_t *ops = cm(); \
        if (ops != nullptr) { \
            ops->_slot(__VA_ARGS__); \
        } \
    } while (0)

struct sockaddr *copy_addr(const struct sockaddr *sa, socklen_t len)
{
    void *copy = malloc(len);

    if (copy != nullptr) {
        memcpy(copy, sa, len);
    }
    return static_cast<struct sockaddr*>(copy);
}

__be16 port_of(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        return reinterpret_cast<const struct sockaddr_in*>(sa)->sin_port;
    }
    if (sa->sa_family == AF_INET6) {
        return reinterpret_cast<const struct sockaddr_in6*>(sa)->sin6_port;
    }
    return 0;
}

} // namespace


PRELOAD_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
    CM_PTR(create_event_channel);
}

PRELOAD_EXPORT void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
    CM_VOID(destroy_event_channel, channel);
}

PRELOAD_EXPORT int rdma_create_id(struct rdma_event_channel *channel,
                                  struct rdma_cm_id **id, void *context,
                                  enum rdma_port_space ps)
{
    CM_M1(create_id, channel, id, context, ps);
}

PRELOAD_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
    CM_M1(destroy_id, id);
}

PRELOAD_EXPORT int rdma_migrate_id(struct rdma_cm_id *id,
                                   struct rdma_event_channel *channel)
{
    CM_M1(migrate_id, id, channel);
}

PRELOAD_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level,
                                   int optname, void *optval, size_t optlen)
{
    CM_M1(set_option, id, level, optname, optval, optlen);
}

PRELOAD_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
    CM_M1(bind_addr, id, addr);
}

PRELOAD_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id,
                                     struct sockaddr *src_addr,
                                     struct sockaddr *dst_addr,
                                     int timeout_ms)
{
    CM_M1(resolve_addr, id, src_addr, dst_addr, timeout_ms);
}

PRELOAD_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
    CM_M1(resolve_route, id, timeout_ms);
}

PRELOAD_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
                                  struct ibv_qp_init_attr *qp_init_attr)
{
    CM_M1(create_qp, id, pd, qp_init_attr);
}

PRELOAD_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
    CM_VOID(destroy_qp, id);
}

PRELOAD_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id,
                                     struct ibv_qp_attr *qp_attr,
                                     int *qp_attr_mask)
{
    CM_M1(init_qp_attr, id, qp_attr, qp_attr_mask);
}

PRELOAD_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
    CM_M1(listen, id, backlog);
}

PRELOAD_EXPORT int rdma_connect(struct rdma_cm_id *id,
                                struct rdma_conn_param *conn_param)
{
    CM_M1(connect, id, conn_param);
}

PRELOAD_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
    CM_M1(establish, id);
}

PRELOAD_EXPORT int rdma_accept(struct rdma_cm_id *id,
                               struct rdma_conn_param *conn_param)
{
    CM_M1(accept, id, conn_param);
}

PRELOAD_EXPORT int rdma_reject(struct rdma_cm_id *id,
                               const void *private_data,
                               uint8_t private_data_len)
{
    CM_M1(reject, id, private_data, private_data_len);
}

PRELOAD_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
    CM_M1(disconnect, id);
}

PRELOAD_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
                                     struct rdma_cm_event **event)
{
    CM_M1(get_cm_event, channel, event);
}

PRELOAD_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
    CM_M1(ack_cm_event, event);
}

PRELOAD_EXPORT int rdma_create_ep(struct rdma_cm_id **id,
                                  struct rdma_addrinfo *res,
                                  struct ibv_pd *pd,
                                  struct ibv_qp_init_attr *qp_init_attr)
{
    CM_M1(create_ep, id, res, pd, qp_init_attr);
}

PRELOAD_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
    CM_VOID(destroy_ep, id);
}

PRELOAD_EXPORT int rdma_get_request(struct rdma_cm_id *listen,
                                    struct rdma_cm_id **id)
{
    CM_M1(get_request, listen, id);
}

PRELOAD_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
    CM_PTR(get_devices, num_devices);
}

PRELOAD_EXPORT void rdma_free_devices(struct ibv_context **list)
{
    CM_VOID(free_devices, list);
}

PRELOAD_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
    return port_of(&id->route.addr.src_addr);
}

PRELOAD_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
    return port_of(&id->route.addr.dst_addr);
}

PRELOAD_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
    static const char *const names[] = {
        "RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
        "RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR",
        "RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
        "RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
        "RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED",
        "RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
        "RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
        "RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT"
    };

    return ((unsigned)event < sizeof(names) / sizeof(names[0])) ?
           names[event] : "UNKNOWN EVENT";
}

/* The C library resolves the names; an address is the fabric's if a port
 * has it, which the CM finds when the address is used */
PRELOAD_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
                                    const struct rdma_addrinfo *hints,
                                    struct rdma_addrinfo **res)
{
    struct addrinfo h = {}, *ai = nullptr;
    struct rdma_addrinfo *r;
    int ret;

    if (res == nullptr) {
        errno = EINVAL;
        return -1;
    }
    h.ai_family   = ((hints != nullptr) && hints->ai_family) ?
                    hints->ai_family : AF_INET;
    h.ai_socktype = SOCK_STREAM;
    if (hints != nullptr) {
        h.ai_flags |= (hints->ai_flags & RAI_PASSIVE) ? AI_PASSIVE : 0;
        h.ai_flags |= (hints->ai_flags & RAI_NUMERICHOST) ? AI_NUMERICHOST :
                                                            0;
    }
    ret = getaddrinfo(node, service, &h, &ai);
    if (ret != 0) {
        errno = (ret == EAI_SYSTEM) ? errno : EADDRNOTAVAIL;
        return ret;
    }

    r = static_cast<struct rdma_addrinfo*>(calloc(1, sizeof(*r)));
    if (r == nullptr) {
        freeaddrinfo(ai);
        errno = ENOMEM;
        return EAI_MEMORY;
    }
    r->ai_flags      = (hints != nullptr) ? hints->ai_flags : 0;
    r->ai_family     = ai->ai_family;
    r->ai_qp_type    = ((hints != nullptr) && hints->ai_qp_type) ?
                       hints->ai_qp_type : IBV_QPT_RC;
    r->ai_port_space = ((hints != nullptr) && hints->ai_port_space) ?
                       hints->ai_port_space : RDMA_PS_TCP;
    if (r->ai_flags & RAI_PASSIVE) {
        r->ai_src_addr = copy_addr(ai->ai_addr, ai->ai_addrlen);
        r->ai_src_len  = ai->ai_addrlen;
    } else {
        r->ai_dst_addr = copy_addr(ai->ai_addr, ai->ai_addrlen);
        r->ai_dst_len  = ai->ai_addrlen;
        if ((hints != nullptr) && (hints->ai_src_addr != nullptr)) {
            r->ai_src_addr = copy_addr(hints->ai_src_addr,
                                       hints->ai_src_len);
            r->ai_src_len  = hints->ai_src_len;
        }
    }
    freeaddrinfo(ai);
    if (((r->ai_flags & RAI_PASSIVE) ? r->ai_src_addr : r->ai_dst_addr) ==
        nullptr) {
        free(r);
        errno = ENOMEM;
        return EAI_MEMORY;
    }
    *res = r;
    return 0;
}

PRELOAD_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
    while (res != nullptr) {
        struct rdma_addrinfo *next = res->ai_next;

        free(res->ai_src_addr);
        free(res->ai_dst_addr);
        free(res->ai_src_canonname);
        free(res->ai_dst_canonname);
        free(res->ai_route);
        free(res->ai_connect);
        free(res);
        res = next;
    }
}

/* What the connection manager has not got */
PRELOAD_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
    (void)id; (void)event;
    return 0; /* the CM needs no word of the QP's first receive */
}

#define REFUSED(_ret, _name, ...) \
    PRELOAD_EXPORT _ret _name(__VA_ARGS__) \
    { \
        errno = EOPNOTSUPP; \
        return -1; \
    }

REFUSED(int, rdma_join_multicast, struct rdma_cm_id *, struct sockaddr *,
        void *)
REFUSED(int, rdma_join_multicast_ex, struct rdma_cm_id *,
        struct rdma_cm_join_mc_attr_ex *, void *)
REFUSED(int, rdma_leave_multicast, struct rdma_cm_id *, struct sockaddr *)
REFUSED(int, rdma_create_qp_ex, struct rdma_cm_id *,
        struct ibv_qp_init_attr_ex *)
REFUSED(int, rdma_create_srq, struct rdma_cm_id *, struct ibv_pd *,
        struct ibv_srq_init_attr *)
REFUSED(int, rdma_create_srq_ex, struct rdma_cm_id *,
        struct ibv_srq_init_attr_ex *)
REFUSED(int, rdma_set_local_ece, struct rdma_cm_id *, struct ibv_ece *)
REFUSED(int, rdma_get_remote_ece, struct rdma_cm_id *, struct ibv_ece *)
REFUSED(int, rdma_reject_ece, struct rdma_cm_id *, const void *, uint8_t)

PRELOAD_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
    (void)id; /* rdma_create_srq made none */
}
