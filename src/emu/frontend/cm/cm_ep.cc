/*
 * librdmacm's entry points on the connection manager (cm.h), with its
 * conventions (0, or -1 with errno), and its synchronous interface: an id
 * made without a channel gets one of its own, and each call that would
 * raise an event waits for it (rdma_resolve_addr, rdma_resolve_route,
 * rdma_connect, rdma_accept, rdma_get_request), as librdmacm does.
 */
#include <emu/frontend/cm/cm.h>

#include <poll.h>
#include <unistd.h>


namespace uct_ib_emu {
namespace cm {

namespace {

constexpr int SYNC_WAIT_MS = 30000; /* nothing waits forever */

int fail(int err)
{
    errno = err;
    return -1;
}

int result(int err)
{
    return (err == 0) ? 0 : fail(err);
}

/* The id behind a program's pointer, or NULL (EINVAL) */
id *lookup(struct rdma_cm_id *pub)
{
    cm_state &cm = the_cm();
    std::lock_guard<std::mutex> g(cm.lock);
    id *i = (pub != nullptr) ? find_id(pub) : nullptr;

    if (i == nullptr) {
        errno = EINVAL;
    }
    return i;
}

channel *find_channel(struct rdma_event_channel *pub)
{
    cm_state &cm = the_cm();
    std::lock_guard<std::mutex> g(cm.lock);
    auto it = cm.channels.find(reinterpret_cast<channel*>(pub));

    return (it != cm.channels.end()) ? it->second.get() : nullptr;
}

/* Wait for and take the next event of ch: 0, or an errno (EAGAIN on a
 * non-blocking channel with none; ETIMEDOUT after timeout_ms when >= 0) */
int next_event(channel *ch, event **ev_p, int timeout_ms)
{
    cm_state &cm = the_cm();

    for (;;) {
        char byte;
        pending p;
        bool have = false;

        if (timeout_ms >= 0) {
            struct pollfd pfd = {ch->pub.fd, POLLIN, 0};
            int n = poll(&pfd, 1, timeout_ms);

            if (n == 0) {
                return ETIMEDOUT;
            }
            if (n < 0) {
                return errno;
            }
        }
        ssize_t n = read(ch->pub.fd, &byte, 1);
        if (n != 1) {
            return (n == 0) ? EBADF : errno;
        }
        {
            std::lock_guard<std::mutex> g(cm.lock);
            if (!ch->queue.empty()) {
                p = ch->queue.front();
                ch->queue.pop_front();
                have = true;
            }
        }
        if (!have) {
            continue; /* its id went away */
        }

        auto ev = std::make_unique<event>();
        if (take(p, ev.get())) {
            *ev_p = ev.release();
            return 0;
        }
    }
}

/* A synchronous id's event of this type: 0, or an errno */
int wait_for(id *i, enum rdma_cm_event_type type)
{
    event *ev = nullptr;
    int err   = next_event(i->ch, &ev, SYNC_WAIT_MS);
    int status;

    if (err != 0) {
        return err;
    }
    status = ev->pub.status;
    err    = (ev->pub.event == type) ? 0 :
             (ev->pub.event == RDMA_CM_EVENT_REJECTED) ? ECONNREFUSED :
             (ev->pub.event == RDMA_CM_EVENT_UNREACHABLE) ? ETIMEDOUT :
             (status < 0) ? -status : EIO;
    delete ev;
    return err;
}

/* ---- the entry points ---- */

struct rdma_event_channel *cm_create_event_channel()
{
    channel *ch = channel_create();

    return (ch != nullptr) ? &ch->pub : nullptr;
}

void cm_destroy_event_channel(struct rdma_event_channel *pub)
{
    channel *ch = find_channel(pub);

    if ((ch != nullptr) && (ch->ids == 0)) {
        channel_destroy(ch);
    }
}

int cm_create_id(struct rdma_event_channel *pub, struct rdma_cm_id **id_p,
                 void *context, enum rdma_port_space ps)
{
    channel *ch;
    id *i;

    if (id_p == nullptr) {
        return fail(EINVAL);
    }
    if ((ps != RDMA_PS_TCP) && (ps != RDMA_PS_UDP) && (ps != RDMA_PS_IB)) {
        return fail(EPROTONOSUPPORT);
    }
    ch = (pub != nullptr) ? find_channel(pub) : channel_create();
    if (ch == nullptr) {
        return fail((pub != nullptr) ? EINVAL : errno);
    }
    i       = id_create(ch, context, ps);
    i->sync = (pub == nullptr);
    *id_p   = &i->pub;
    return 0;
}

int cm_destroy_id(struct rdma_cm_id *pub)
{
    id *i = lookup(pub);
    channel *own;

    if (i == nullptr) {
        return -1;
    }
    own = i->sync ? i->ch : nullptr;
    if (i->pub.qp == nullptr) {
        destroy_qp(i); /* the CQs rdma_create_qp made beside the QP */
    }
    id_destroy(i);
    if (own != nullptr) {
        channel_destroy(own);
    }
    return 0;
}

int cm_migrate_id(struct rdma_cm_id *pub, struct rdma_event_channel *to)
{
    id *i       = lookup(pub);
    channel *ch = (to != nullptr) ? find_channel(to) : channel_create();
    cm_state &cm   = the_cm();

    if ((i == nullptr) || (ch == nullptr)) {
        return fail(EINVAL);
    }

    std::lock_guard<std::mutex> g(cm.lock);
    std::deque<pending> &q = i->ch->queue;
    for (auto p = q.begin(); p != q.end();) {
        if (p->target == i) {
            post_locked(ch, *p);
            p = q.erase(p);
        } else {
            ++p;
        }
    }
    --i->ch->ids;
    ++ch->ids;
    i->ch          = ch;
    i->sync        = (to == nullptr);
    i->pub.channel = &ch->pub;
    return 0;
}

int cm_set_option(struct rdma_cm_id *pub, int level, int optname,
                  void *optval, size_t optlen)
{
    (void)level; (void)optname; (void)optval; (void)optlen;
    /* the type of service, address reuse, IPv6-only, the ACK timeout:
     * nothing the fabric has a use for */
    return (lookup(pub) != nullptr) ? 0 : -1;
}

int cm_bind_addr(struct rdma_cm_id *pub, struct sockaddr *addr)
{
    id *i = lookup(pub);

    return (i == nullptr) ? -1 : result(bind_addr(i, addr));
}

int cm_resolve_addr(struct rdma_cm_id *pub, struct sockaddr *src,
                    struct sockaddr *dst, int timeout_ms)
{
    id *i = lookup(pub);
    int err;

    (void)timeout_ms;
    if (i == nullptr) {
        return -1;
    }
    err = resolve_addr(i, src, dst);
    if ((err == 0) && i->sync) {
        err = wait_for(i, RDMA_CM_EVENT_ADDR_RESOLVED);
    }
    return result(err);
}

int cm_resolve_route(struct rdma_cm_id *pub, int timeout_ms)
{
    id *i = lookup(pub);
    int err;

    (void)timeout_ms;
    if (i == nullptr) {
        return -1;
    }
    err = resolve_route(i);
    if ((err == 0) && i->sync) {
        err = wait_for(i, RDMA_CM_EVENT_ROUTE_RESOLVED);
    }
    return result(err);
}

int cm_create_qp(struct rdma_cm_id *pub, struct ibv_pd *pd,
                 struct ibv_qp_init_attr *attr)
{
    id *i = lookup(pub);

    return (i == nullptr) ? -1 : result(create_qp(i, pd, attr));
}

void cm_destroy_qp(struct rdma_cm_id *pub)
{
    id *i = lookup(pub);

    if (i != nullptr) {
        destroy_qp(i);
    }
}

int cm_init_qp_attr(struct rdma_cm_id *pub, struct ibv_qp_attr *attr,
                    int *mask)
{
    id *i = lookup(pub);

    return (i == nullptr) ? -1 : result(init_qp_attr(i, attr, mask));
}

int cm_listen(struct rdma_cm_id *pub, int backlog)
{
    id *i = lookup(pub);

    return (i == nullptr) ? -1 : result(listen(i, backlog));
}

int cm_connect(struct rdma_cm_id *pub, struct rdma_conn_param *param)
{
    id *i = lookup(pub);
    int err;

    if (i == nullptr) {
        return -1;
    }
    err = connect(i, param);
    if ((err == 0) && i->sync) {
        err = wait_for(i, RDMA_CM_EVENT_ESTABLISHED);
    }
    return result(err);
}

int cm_establish(struct rdma_cm_id *pub)
{
    id *i = lookup(pub);

    return (i == nullptr) ? -1 : result(establish(i));
}

int cm_accept(struct rdma_cm_id *pub, struct rdma_conn_param *param)
{
    id *i = lookup(pub);
    int err;

    if (i == nullptr) {
        return -1;
    }
    err = accept(i, param);
    if ((err == 0) && i->sync && (i->pub.qp_type != IBV_QPT_UD)) {
        err = wait_for(i, RDMA_CM_EVENT_ESTABLISHED);
    }
    return result(err);
}

int cm_reject(struct rdma_cm_id *pub, const void *pdata, uint8_t len)
{
    id *i = lookup(pub);

    return (i == nullptr) ? -1 : result(reject(i, pdata, len));
}

int cm_disconnect(struct rdma_cm_id *pub)
{
    id *i = lookup(pub);

    return (i == nullptr) ? -1 : result(disconnect(i));
}

int cm_get_cm_event(struct rdma_event_channel *pub,
                    struct rdma_cm_event **event_p)
{
    channel *ch = find_channel(pub);
    event *ev   = nullptr;
    int err;

    if ((ch == nullptr) || (event_p == nullptr)) {
        return fail(EINVAL);
    }
    err = next_event(ch, &ev, -1);
    if (err != 0) {
        return fail(err);
    }
    *event_p = &ev->pub;
    return 0;
}

int cm_ack_cm_event(struct rdma_cm_event *pub)
{
    if (pub == nullptr) {
        return fail(EINVAL);
    }
    delete reinterpret_cast<event*>(pub);
    return 0;
}

int cm_create_ep(struct rdma_cm_id **id_p, struct rdma_addrinfo *res,
                 struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
    struct rdma_cm_id *pub;
    id *i;
    int err;

    if ((id_p == nullptr) || (res == nullptr)) {
        return fail(EINVAL);
    }
    if (cm_create_id(nullptr, &pub, nullptr,
                     static_cast<enum rdma_port_space>(res->ai_port_space))) {
        return -1;
    }
    i = lookup(pub);

    if (res->ai_flags & RAI_PASSIVE) {
        err = bind_addr(i, res->ai_src_addr);
        if ((err == 0) && (qp_init_attr != nullptr)) {
            i->has_ep_qp = true;
            i->ep_qp     = *qp_init_attr;
            i->ep_pd     = pd;
        }
    } else {
        err = resolve_addr(i, res->ai_src_addr, res->ai_dst_addr);
        err = (err != 0) ? err : wait_for(i, RDMA_CM_EVENT_ADDR_RESOLVED);
        err = (err != 0) ? err : resolve_route(i);
        err = (err != 0) ? err : wait_for(i, RDMA_CM_EVENT_ROUTE_RESOLVED);
        if ((err == 0) && (qp_init_attr != nullptr)) {
            err = create_qp(i, pd, qp_init_attr);
        }
    }
    if (err != 0) {
        cm_destroy_id(pub);
        return fail(err);
    }
    *id_p = pub;
    return 0;
}

void cm_destroy_ep(struct rdma_cm_id *pub)
{
    id *i = lookup(pub);

    if (i != nullptr) {
        destroy_qp(i);
        cm_destroy_id(pub);
    }
}

int cm_get_request(struct rdma_cm_id *listen_pub, struct rdma_cm_id **id_p)
{
    id *l = lookup(listen_pub);
    event *ev = nullptr;
    id *i;
    int err;

    if ((l == nullptr) || (id_p == nullptr) ||
        (l->state != id_state::LISTEN)) {
        return fail(EINVAL);
    }
    do {
        if (ev != nullptr) {
            delete ev;
            ev = nullptr;
        }
        err = next_event(l->ch, &ev, -1);
        if (err != 0) {
            return fail(err);
        }
    } while (ev->pub.event != RDMA_CM_EVENT_CONNECT_REQUEST);

    i = lookup(ev->pub.id);
    delete ev;
    /* the new id waits on a channel of its own */
    if ((i == nullptr) || (cm_migrate_id(&i->pub, nullptr) != 0)) {
        return fail(EIO);
    }
    if (l->has_ep_qp) {
        struct ibv_qp_init_attr attr = l->ep_qp;

        err = create_qp(i, l->ep_pd, &attr);
        if (err != 0) {
            reject(i, nullptr, 0);
            cm_destroy_id(&i->pub);
            return fail(err);
        }
    }
    *id_p = &i->pub;
    return 0;
}

struct ibv_context **cm_get_devices(int *num)
{
    return get_devices(num);
}

void cm_free_devices(struct ibv_context **list)
{
    free(list); /* the contexts stay open, as librdmacm's */
}

} // namespace

} // namespace cm
} // namespace uct_ib_emu


extern "C" const uct_ib_emu_cm_ops_t uct_ib_emu_cm_ops = {
    UCT_IB_EMU_CM_VERSION,
    uct_ib_emu::cm::cm_create_event_channel,
    uct_ib_emu::cm::cm_destroy_event_channel,
    uct_ib_emu::cm::cm_create_id,
    uct_ib_emu::cm::cm_destroy_id,
    uct_ib_emu::cm::cm_migrate_id,
    uct_ib_emu::cm::cm_set_option,
    uct_ib_emu::cm::cm_bind_addr,
    uct_ib_emu::cm::cm_resolve_addr,
    uct_ib_emu::cm::cm_resolve_route,
    uct_ib_emu::cm::cm_create_qp,
    uct_ib_emu::cm::cm_destroy_qp,
    uct_ib_emu::cm::cm_init_qp_attr,
    uct_ib_emu::cm::cm_listen,
    uct_ib_emu::cm::cm_connect,
    uct_ib_emu::cm::cm_establish,
    uct_ib_emu::cm::cm_accept,
    uct_ib_emu::cm::cm_reject,
    uct_ib_emu::cm::cm_disconnect,
    uct_ib_emu::cm::cm_get_cm_event,
    uct_ib_emu::cm::cm_ack_cm_event,
    uct_ib_emu::cm::cm_create_ep,
    uct_ib_emu::cm::cm_destroy_ep,
    uct_ib_emu::cm::cm_get_request,
    uct_ib_emu::cm::cm_get_devices,
    uct_ib_emu::cm::cm_free_devices
};
