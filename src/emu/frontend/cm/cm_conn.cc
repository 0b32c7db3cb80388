/*
 * Connections (cm.h): the QP of an id, and the messages of the IB CM's
 * exchange as the kernel's rdma_cm drives it. RC: the active side sends a
 * REQ (its QPN and first PSN, private data); the listener's program gets a
 * CONNECT_REQUEST on a new id, accepts (its QP to RTR and RTS, a REP) or
 * rejects (a REJ, whose private data the other side's REJECTED carries);
 * the REP moves the active QP to RTR and RTS and answers with an RTU, and
 * each side gets ESTABLISHED. An active id without a QP (UCX) gets
 * CONNECT_RESPONSE instead and answers with rdma_establish. A DREQ moves
 * the QP to ERR, is answered by a DREP, and each side gets DISCONNECTED.
 * UD: SIDR_REQ and SIDR_REP, whose ESTABLISHED carries the address, QPN
 * and Q_Key to send to. A REQ for a port nobody listens on is rejected
 * (invalid service ID); one unanswered for REQ_TIMEOUT, or to a host that
 * is gone, is UNREACHABLE; a connected peer whose process died is
 * DISCONNECTED; an id whose port's MAC moved gets ADDR_CHANGE.
 */
#include <emu/frontend/cm/cm.h>
#include <emu/fabric/shm_fabric.h>
#include <emu/fabric/member.h>

#include <arpa/inet.h>


namespace uct_ib_emu {
namespace cm {

namespace {

constexpr uint64_t REQ_TIMEOUT_NS  = 4000000000ull; /* as the kernel's 4 s */
constexpr uint64_t LIVENESS_NS     = 100000000ull;  /* peers looked at */
constexpr uint32_t UDP_QKEY        = 0x01234567;    /* RDMA_UDP_QKEY */
constexpr uint8_t  ACK_TIMEOUT     = 14;
constexpr uint8_t  MIN_RNR_TIMER   = 12;
constexpr int      QP_ACCESS       = IBV_ACCESS_LOCAL_WRITE |
                                     IBV_ACCESS_REMOTE_WRITE |
                                     IBV_ACCESS_REMOTE_READ |
                                     IBV_ACCESS_REMOTE_ATOMIC;

const uct_ib_glue_ops_t &glue = uct_ib_emu_glue_ops;

void set_state(id *i, id_state st)
{
    std::lock_guard<std::mutex> g(the_cm().lock);
    i->state = st;
}

bool is_ud(const id *i)
{
    return i->pub.qp_type == IBV_QPT_UD;
}

msg message(const id *i, msg_type type)
{
    msg m = {};

    m.type      = type;
    m.qp_type   = static_cast<uint8_t>(i->pub.qp_type);
    m.src_token = i->token;
    m.dst_token = i->peer_token;
    m.src_ip    = i->src.sin_addr.s_addr;
    m.dst_ip    = i->dst.sin_addr.s_addr;
    m.src_port  = i->src.sin_port;
    m.dst_port  = i->dst.sin_port;
    m.psn       = i->psn;
    m.retry     = i->retry;
    m.rnr_retry = i->rnr_retry;
    memcpy(m.src_gid, i->sgid.raw, sizeof(m.src_gid));
    if (i->pub.qp != nullptr) {
        m.qpn = i->pub.qp->qp_num;
    }
    return m;
}

int set_pdata(msg *m, const void *pdata, size_t len, size_t max)
{
    if (len > max) {
        return EINVAL;
    }
    m->pdata_len = static_cast<uint8_t>(len);
    if (len > 0) {
        memcpy(m->pdata, pdata, len);
    }
    return 0;
}

/* What QP state @a st needs of i's connection */
void qp_attr_for(const id *i, enum ibv_qp_state st, struct ibv_qp_attr *a,
                 int *mask)
{
    *a            = {};
    a->qp_state   = st;
    switch (st) {
    case IBV_QPS_INIT:
        a->pkey_index = 0;
        a->port_num   = i->pub.port_num;
        *mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
        if (is_ud(i)) {
            a->qkey = UDP_QKEY;
            *mask  |= IBV_QP_QKEY;
        } else {
            a->qp_access_flags = QP_ACCESS;
            *mask             |= IBV_QP_ACCESS_FLAGS;
        }
        break;
    case IBV_QPS_RTR:
        *mask = IBV_QP_STATE;
        if (!is_ud(i)) {
            a->path_mtu              = (i->path.mtu != 0) ?
                                       static_cast<enum ibv_mtu>(i->path.mtu) :
                                       IBV_MTU_1024;
            a->dest_qp_num           = i->peer_qpn;
            a->rq_psn                = i->peer_psn;
            a->max_dest_rd_atomic    = std::max<uint8_t>(1, i->peer_init_depth);
            a->min_rnr_timer         = MIN_RNR_TIMER;
            a->ah_attr.is_global     = 1;
            a->ah_attr.port_num      = i->pub.port_num;
            a->ah_attr.grh.dgid      = i->peer_gid;
            a->ah_attr.grh.sgid_index = i->sgid_index;
            a->ah_attr.grh.hop_limit = 64;
            *mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                     IBV_QP_MIN_RNR_TIMER;
        }
        break;
    case IBV_QPS_RTS:
        a->sq_psn = i->psn;
        *mask     = IBV_QP_STATE | IBV_QP_SQ_PSN;
        if (!is_ud(i)) {
            a->timeout       = ACK_TIMEOUT;
            a->retry_cnt     = i->retry;
            a->rnr_retry     = i->rnr_retry;
            a->max_rd_atomic = std::max<uint8_t>(1, i->peer_resp_res);
            *mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                     IBV_QP_MAX_QP_RD_ATOMIC;
        }
        break;
    default:
        *mask = IBV_QP_STATE;
        break;
    }
}

int qp_move(id *i, enum ibv_qp_state st)
{
    struct ibv_qp_attr a;
    int mask;

    qp_attr_for(i, st, &a, &mask);
    return glue.modify_qp(i->pub.qp, &a, mask);
}

/* The connected QP: RTR, then RTS */
int qp_connect(id *i)
{
    int err = qp_move(i, IBV_QPS_RTR);

    return (err != 0) ? err : qp_move(i, IBV_QPS_RTS);
}

void take_peer(id *i, unsigned host, const msg &m)
{
    i->peer_host       = host;
    i->peer_token      = m.src_token;
    i->peer_qpn        = m.qpn;
    i->peer_psn        = m.psn;
    i->peer_qkey       = m.qkey;
    i->peer_resp_res   = m.resp_res;
    i->peer_init_depth = m.init_depth;
    memcpy(i->peer_gid.raw, m.src_gid, sizeof(i->peer_gid.raw));
}

void conn_param(event *ev, const msg &m)
{
    ev->pdata.assign(m.pdata, m.pdata + m.pdata_len);
    ev->pub.param.conn.private_data        = ev->pdata.data();
    ev->pub.param.conn.private_data_len    = m.pdata_len;
    ev->pub.param.conn.responder_resources = m.resp_res;
    ev->pub.param.conn.initiator_depth     = m.init_depth;
    ev->pub.param.conn.retry_count         = m.retry;
    ev->pub.param.conn.rnr_retry_count     = m.rnr_retry;
    ev->pub.param.conn.qp_num              = m.qpn;
}

/* A REQ or SIDR_REQ taken from listener l: the id of the new connection */
bool take_request(id *l, unsigned host, const msg &m, event *ev)
{
    unsigned ip_host;
    int dev_index;
    uint8_t port_num;
    id *i = id_create(l->ch, l->pub.context, l->pub.ps);

    if (!find_ip(m.dst_ip, &ip_host, &dev_index, &port_num) ||
        (attach_device(i, dev_index, port_num, m.dst_ip) != 0)) {
        id_destroy(i);
        return false;
    }
    i->src.sin_port        = m.dst_port;
    i->dst.sin_family      = AF_INET;
    i->dst.sin_addr.s_addr = m.src_ip;
    i->dst.sin_port        = m.src_port;
    memcpy(&i->pub.route.addr.src_addr, &i->src, sizeof(i->src));
    memcpy(&i->pub.route.addr.dst_addr, &i->dst, sizeof(i->dst));
    take_peer(i, host, m);
    i->pub.route.addr.addr.ibaddr.dgid = i->peer_gid;
    i->retry     = m.retry;
    i->rnr_retry = m.rnr_retry;
    i->listener  = l;
    i->path.mtu  = IBV_MTU_1024;
    {
        struct ibv_port_attr attr;
        if (glue.query_port(i->pub.verbs, port_num, &attr) == 0) {
            i->path.mtu = attr.active_mtu;
        }
    }
    set_state(i, id_state::REQ_RECEIVED);

    ev->pub.id        = &i->pub;
    ev->pub.listen_id = &l->pub;
    ev->pub.event     = RDMA_CM_EVENT_CONNECT_REQUEST;
    if (m.type == MSG_SIDR_REQ) {
        ev->pdata.assign(m.pdata, m.pdata + m.pdata_len);
        ev->pub.param.ud.private_data     = ev->pdata.data();
        ev->pub.param.ud.private_data_len = m.pdata_len;
    } else {
        conn_param(ev, m);
    }
    return true;
}

} // namespace


int create_qp(id *i, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    struct ibv_qp_init_attr a;
    struct ibv_qp *qp;
    int err;

    if ((i->pub.verbs == nullptr) || (attr == nullptr) ||
        (i->pub.qp != nullptr) || ((pd != nullptr) &&
                                   (pd->context != i->pub.verbs))) {
        return EINVAL;
    }
    if (pd == nullptr) {
        pd = i->pub.pd; /* the device's, as librdmacm's */
    }

    a         = *attr;
    a.qp_type = i->pub.qp_type;
    if ((a.send_cq == nullptr) || (a.recv_cq == nullptr)) {
        /* librdmacm's own: a CQ and a completion channel each way */
        i->pub.send_cq_channel = glue.create_comp_channel(i->pub.verbs);
        i->pub.recv_cq_channel = glue.create_comp_channel(i->pub.verbs);
        i->pub.send_cq = (i->pub.send_cq_channel == nullptr) ? nullptr :
                glue.create_cq(i->pub.verbs, a.cap.max_send_wr + 1, i,
                               i->pub.send_cq_channel, 0);
        i->pub.recv_cq = (i->pub.recv_cq_channel == nullptr) ? nullptr :
                glue.create_cq(i->pub.verbs, a.cap.max_recv_wr + 1, i,
                               i->pub.recv_cq_channel, 0);
        i->own_cqs = true;
        if ((i->pub.send_cq == nullptr) || (i->pub.recv_cq == nullptr)) {
            err = errno;
            destroy_qp(i);
            return err;
        }
        a.send_cq = i->pub.send_cq;
        a.recv_cq = i->pub.recv_cq;
    }

    qp = glue.create_qp(pd, &a);
    if (qp == nullptr) {
        err = errno;
        destroy_qp(i);
        return err;
    }
    i->pub.qp = qp;

    err = qp_move(i, IBV_QPS_INIT);
    if ((err == 0) && is_ud(i)) {
        err = qp_connect(i); /* a UD QP is ready at once */
    }
    if (err != 0) {
        destroy_qp(i);
        return err;
    }
    *attr = a;
    return 0;
}

void destroy_qp(id *i)
{
    if (i->pub.qp != nullptr) {
        (void)glue.destroy_qp(i->pub.qp);
        i->pub.qp = nullptr;
    }
    if (i->own_cqs) {
        for (struct ibv_cq **c : {&i->pub.send_cq, &i->pub.recv_cq}) {
            if (*c != nullptr) {
                (void)glue.destroy_cq(*c);
                *c = nullptr;
            }
        }
        for (struct ibv_comp_channel **ch : {&i->pub.send_cq_channel,
                                            &i->pub.recv_cq_channel}) {
            if (*ch != nullptr) {
                (void)glue.destroy_comp_channel(*ch);
                *ch = nullptr;
            }
        }
        i->own_cqs = false;
    }
}

int init_qp_attr(id *i, struct ibv_qp_attr *attr, int *mask)
{
    if ((attr == nullptr) || (mask == nullptr) ||
        (i->pub.verbs == nullptr)) {
        return EINVAL;
    }
    if ((attr->qp_state == IBV_QPS_RTR) && !is_ud(i) &&
        (i->peer_qpn == 0)) {
        return EINVAL; /* no peer yet */
    }
    qp_attr_for(i, attr->qp_state, attr, mask);
    return 0;
}

int listen(id *i, int backlog)
{
    if (i->state == id_state::IDLE) {
        struct sockaddr_in any = {};
        int err;

        any.sin_family = AF_INET;
        err = bind_addr(i, reinterpret_cast<struct sockaddr*>(&any));
        if (err != 0) {
            return err;
        }
    }
    if (i->state != id_state::BOUND) {
        return EINVAL;
    }
    if (i->pub.verbs == nullptr) {
        /* on every address: every device opened, so the engine runs and
         * takes the requests that come to any of them */
        free(get_devices(nullptr));
    }
    i->backlog = (backlog > 0) ? backlog : 1024;
    set_state(i, id_state::LISTEN);
    return 0;
}

int connect(id *i, struct rdma_conn_param *param)
{
    msg m;
    int err;

    if (i->state != id_state::ROUTE_RESOLVED) {
        return EINVAL;
    }
    if (is_ud(i)) {
        m   = message(i, MSG_SIDR_REQ);
        err = (param == nullptr) ? 0 :
              set_pdata(&m, param->private_data, param->private_data_len,
                        216 - 36 /* SIDR_REQ's */);
    } else {
        if ((i->pub.qp == nullptr) &&
            ((param == nullptr) || (param->qp_num == 0))) {
            return EINVAL;
        }
        if (param != nullptr) {
            i->retry     = std::min<uint8_t>(param->retry_count, 7);
            i->rnr_retry = std::min<uint8_t>(param->rnr_retry_count, 7);
        }
        m = message(i, MSG_REQ);
        if (param != nullptr) {
            m.resp_res   = param->responder_resources;
            m.init_depth = param->initiator_depth;
            if (i->pub.qp == nullptr) {
                m.qpn = param->qp_num;
            }
        }
        err = (param == nullptr) ? 0 :
              set_pdata(&m, param->private_data, param->private_data_len,
                        56 /* a REQ's */);
    }
    if (err != 0) {
        return err;
    }

    {
        std::lock_guard<std::mutex> g(the_cm().lock);
        i->state    = id_state::CONNECTING;
        i->deadline = now_ns() + REQ_TIMEOUT_NS;
    }
    if (!send_msg(i->peer_host, m)) {
        set_state(i, id_state::ROUTE_RESOLVED);
        post_event(i, RDMA_CM_EVENT_UNREACHABLE, -EHOSTUNREACH);
    }
    return 0;
}

int establish(id *i)
{
    if (i->state != id_state::RESPONDED) {
        return EINVAL;
    }
    set_state(i, id_state::CONNECTED);
    send_msg(i->peer_host, message(i, MSG_RTU));
    return 0;
}

int accept(id *i, struct rdma_conn_param *param)
{
    msg m;
    int err;

    if (i->state == id_state::LISTEN) {
        return EINVAL;
    }
    if (i->state != id_state::REQ_RECEIVED) {
        return EINVAL;
    }

    if (is_ud(i)) {
        if (i->pub.qp == nullptr) {
            return EINVAL;
        }
        m      = message(i, MSG_SIDR_REP);
        m.qkey = UDP_QKEY;
        err    = (param == nullptr) ? 0 :
                 set_pdata(&m, param->private_data, param->private_data_len,
                           136 /* a SIDR_REP's */);
        if (err != 0) {
            return err;
        }
        set_state(i, id_state::CONNECTED);
        send_msg(i->peer_host, m);
        return 0;
    }

    if (param != nullptr) {
        /* the QP reads as many as the REQ's side initiates, and initiates
         * as many as it said it answers */
        i->peer_init_depth = std::min(param->responder_resources,
                                      i->peer_init_depth ?
                                      i->peer_init_depth : uint8_t(0xff));
        i->peer_resp_res   = param->initiator_depth;
        i->rnr_retry       = std::min<uint8_t>(param->rnr_retry_count, 7);
    }
    if (i->pub.qp != nullptr) {
        err = qp_connect(i);
        if (err != 0) {
            return err;
        }
    } else if ((param == nullptr) || (param->qp_num == 0)) {
        return EINVAL;
    }

    m = message(i, MSG_REP);
    if (i->pub.qp == nullptr) {
        m.qpn = param->qp_num;
    }
    if (param != nullptr) {
        m.resp_res   = param->responder_resources;
        m.init_depth = param->initiator_depth;
        err = set_pdata(&m, param->private_data, param->private_data_len,
                        PDATA_MAX);
        if (err != 0) {
            return err;
        }
    }
    set_state(i, id_state::ACCEPTED);
    send_msg(i->peer_host, m);
    return 0;
}

int reject(id *i, const void *pdata, uint8_t len)
{
    msg m;
    int err;

    if (i->state != id_state::REQ_RECEIVED) {
        return EINVAL;
    }
    m            = message(i, is_ud(i) ? MSG_SIDR_REP : MSG_REJ);
    m.rej_reason = REJ_CONSUMER_DEFINED;
    err          = set_pdata(&m, pdata, len, 148 /* a REJ's */);
    if (err != 0) {
        return err;
    }
    set_state(i, id_state::DISCONNECTED);
    send_msg(i->peer_host, m);
    return 0;
}

int disconnect(id *i)
{
    switch (i->state) {
    case id_state::CONNECTED:
    case id_state::ACCEPTED:
    case id_state::RESPONDED:
        break;
    case id_state::DISCONNECTED:
        return 0; /* the peer's DREQ came first: answered already */
    default:
        return EINVAL;
    }
    if ((i->pub.qp != nullptr) && !is_ud(i)) {
        (void)qp_move(i, IBV_QPS_ERR);
    }
    set_state(i, id_state::DISCONNECTED);
    if (!send_msg(i->peer_host, message(i, MSG_DREQ))) {
        post_event(i, RDMA_CM_EVENT_DISCONNECTED);
    }
    return 0;
}

void receive_locked(unsigned src_host, const msg &m)
{
    cm_state &cm = the_cm();
    std::vector<msg> replies;
    {
        std::lock_guard<std::mutex> g(cm.lock);
        pending p;

        p.is_msg   = true;
        p.m        = m;
        p.src_host = src_host;
        if ((m.type == MSG_REQ) || (m.type == MSG_SIDR_REQ)) {
            id *l = nullptr;

            for (const auto &entry : cm.owned) {
                id *o = entry.second.get();

                if ((o->state == id_state::LISTEN) &&
                    (o->src.sin_port == m.dst_port) &&
                    ((o->src.sin_addr.s_addr == INADDR_ANY) ||
                     (o->src.sin_addr.s_addr == m.dst_ip)) &&
                    ((o->pub.qp_type == IBV_QPT_UD) ==
                     (m.type == MSG_SIDR_REQ))) {
                    l = o;
                    break;
                }
            }
            if (l == nullptr) {
                msg rej = {};

                rej.type       = (m.type == MSG_REQ) ? MSG_REJ :
                                                       MSG_SIDR_REP;
                rej.dst_token  = m.src_token;
                rej.rej_reason = REJ_INVALID_SERVICE_ID;
                replies.push_back(rej);
            } else {
                p.target = l;
                post_locked(l->ch, p);
            }
        } else {
            auto it = cm.ids.find(m.dst_token);

            if (it != cm.ids.end()) {
                p.target = it->second;
                post_locked(it->second->ch, p);
            } else if (m.type == MSG_DREQ) {
                msg drep = {};

                drep.type      = MSG_DREP;
                drep.dst_token = m.src_token;
                replies.push_back(drep);
            }
        }
    }

    /* s.lock is still held: the replies go out as the engine's own */
    for (const msg &r : replies) {
        emu_state &s = state();

        if ((s.fabric == nullptr) || (src_host == s.fabric->host())) {
            receive_locked(src_host, r);
        } else {
            s.fabric->net().add_cm(src_host, &r, sizeof(r));
        }
    }
}

bool take(const pending &p, event *ev)
{
    id *i = p.target;
    const msg &m = p.m;

    ev->pub.id = &i->pub;
    if (!p.is_msg) {
        if ((p.type == RDMA_CM_EVENT_DISCONNECTED) &&
            (i->pub.qp != nullptr) && !is_ud(i)) {
            (void)qp_move(i, IBV_QPS_ERR); /* as on a DREQ */
        }
        ev->pub.event  = p.type;
        ev->pub.status = p.status;
        return true;
    }

    switch (m.type) {
    case MSG_REQ:
    case MSG_SIDR_REQ:
        return take_request(i, p.src_host, m, ev);
    case MSG_REP:
        if (i->state != id_state::CONNECTING) {
            return false;
        }
        take_peer(i, p.src_host, m);
        conn_param(ev, m);
        if (i->pub.qp == nullptr) {
            set_state(i, id_state::RESPONDED);
            ev->pub.event = RDMA_CM_EVENT_CONNECT_RESPONSE;
            return true;
        }
        if (qp_connect(i) != 0) {
            msg rej      = message(i, MSG_REJ);
            rej.rej_reason = REJ_CONSUMER_DEFINED;
            set_state(i, id_state::DISCONNECTED);
            send_msg(i->peer_host, rej);
            ev->pub.event  = RDMA_CM_EVENT_CONNECT_ERROR;
            ev->pub.status = -EIO;
            return true;
        }
        set_state(i, id_state::CONNECTED);
        send_msg(i->peer_host, message(i, MSG_RTU));
        ev->pub.event = RDMA_CM_EVENT_ESTABLISHED;
        return true;
    case MSG_RTU:
        if (i->state != id_state::ACCEPTED) {
            return false;
        }
        set_state(i, id_state::CONNECTED);
        ev->pub.event = RDMA_CM_EVENT_ESTABLISHED;
        return true;
    case MSG_REJ:
        if ((i->state != id_state::CONNECTING) &&
            (i->state != id_state::ACCEPTED)) {
            return false;
        }
        set_state(i, id_state::ROUTE_RESOLVED);
        conn_param(ev, m);
        ev->pub.event  = RDMA_CM_EVENT_REJECTED;
        ev->pub.status = m.rej_reason;
        return true;
    case MSG_SIDR_REP:
        if (i->state != id_state::CONNECTING) {
            return false;
        }
        if (m.rej_reason != 0) {
            set_state(i, id_state::ROUTE_RESOLVED);
            ev->pub.event  = (m.rej_reason == REJ_INVALID_SERVICE_ID) ?
                             RDMA_CM_EVENT_UNREACHABLE :
                             RDMA_CM_EVENT_REJECTED;
            ev->pub.status = m.rej_reason;
            return true;
        }
        take_peer(i, p.src_host, m);
        set_state(i, id_state::CONNECTED);
        ev->pdata.assign(m.pdata, m.pdata + m.pdata_len);
        ev->pub.event                        = RDMA_CM_EVENT_ESTABLISHED;
        ev->pub.param.ud.private_data        = ev->pdata.data();
        ev->pub.param.ud.private_data_len    = m.pdata_len;
        ev->pub.param.ud.qp_num              = m.qpn;
        ev->pub.param.ud.qkey                = m.qkey;
        ev->pub.param.ud.ah_attr.is_global   = 1;
        ev->pub.param.ud.ah_attr.port_num    = i->pub.port_num;
        ev->pub.param.ud.ah_attr.grh.dgid    = i->peer_gid;
        ev->pub.param.ud.ah_attr.grh.sgid_index = i->sgid_index;
        ev->pub.param.ud.ah_attr.grh.hop_limit  = 64;
        return true;
    case MSG_DREQ:
        if (i->state == id_state::DISCONNECTED) {
            send_msg(p.src_host, message(i, MSG_DREP));
            return false;
        }
        if ((i->pub.qp != nullptr) && !is_ud(i)) {
            (void)qp_move(i, IBV_QPS_ERR);
        }
        set_state(i, id_state::DISCONNECTED);
        send_msg(p.src_host, message(i, MSG_DREP));
        ev->pub.event = RDMA_CM_EVENT_DISCONNECTED;
        return true;
    case MSG_DREP:
        ev->pub.event = RDMA_CM_EVENT_DISCONNECTED;
        return true;
    default:
        return false;
    }
}

bool tick_locked()
{
    static uint64_t next_liveness = 0;
    cm_state &cm        = the_cm();
    emu_state &s     = state();
    const uint64_t t = now_ns();
    bool liveness    = (s.fabric != nullptr) && (t >= next_liveness);
    bool did         = false;

    if (liveness) {
        next_liveness = t + LIVENESS_NS;
    }

    std::lock_guard<std::mutex> g(cm.lock);
    for (const auto &entry : cm.owned) {
        id *i = entry.second.get();
        pending p;

        p.target = i;
        if ((i->dev_index >= 0) && !i->addr_changed &&
            (size_t(i->dev_index) < s.devices.size()) &&
            (s.devices[i->dev_index]->get_port(i->pub.port_num) != nullptr) &&
            (s.devices[i->dev_index]->get_port(i->pub.port_num)->mac !=
             i->mac)) {
            /* the port's MAC moved (a bond's failover, as the kernel
             * names it): once */
            i->addr_changed = true;
            p.type          = RDMA_CM_EVENT_ADDR_CHANGE;
        } else if ((i->state == id_state::CONNECTING) && (t >= i->deadline)) {
            i->state = id_state::ROUTE_RESOLVED;
            p.type   = RDMA_CM_EVENT_UNREACHABLE;
            p.status = -ETIMEDOUT;
        } else if (liveness &&
                   ((i->state == id_state::CONNECTED) ||
                    (i->state == id_state::ACCEPTED)) &&
                   (i->peer_host != s.fabric->host()) &&
                   !fab::host_alive(s.fabric->name(), i->peer_host)) {
            /* the peer's process is gone: nothing will answer a DREQ */
            i->state = id_state::DISCONNECTED;
            p.type   = RDMA_CM_EVENT_DISCONNECTED;
        } else {
            continue;
        }
        post_locked(i->ch, p);
        did = true;
    }
    return did;
}

} // namespace cm
} // namespace uct_ib_emu
