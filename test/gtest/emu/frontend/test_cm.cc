/*
 * The connection manager that serves librdmacm on the drop-in
 * (emu/api/cm.h), called through its table as the preload calls it, in one
 * process: a listener on mlx5_0's address (198.18.0.1) and a client on
 * mlx5_1's (198.18.0.2). Connect, accept and reject with private data, a
 * port nobody listens on, an address nobody has, UD (SIDR), a connection
 * made without a QP on the id (UCX's way), a non-blocking channel, a MAC
 * move (ADDR_CHANGE), and nothing left behind.
 */
#include "emu/emu_test.h"

#include <emu/api/cm.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>

#include <string>


namespace {

using namespace emu_test;

const uct_ib_emu_cm_ops_t &cm = uct_ib_emu_cm_ops;

constexpr int EVENT_WAIT_MS = 5000;

struct sockaddr_in ip4(const char *addr, uint16_t port)
{
    struct sockaddr_in in = {};

    in.sin_family = AF_INET;
    in.sin_port   = htons(port);
    inet_pton(AF_INET, addr, &in.sin_addr);
    return in;
}

struct sockaddr *sa(struct sockaddr_in &in)
{
    return reinterpret_cast<struct sockaddr*>(&in);
}

/* A connection's two sides: the listener's channel and id, the client's,
 * and the id the listener's side accepts on */
class test_emu_cm : public emu_fixture {
protected:
    void init() override
    {
        emu_fixture::init();
        m_server_ch = cm.create_event_channel();
        m_client_ch = cm.create_event_channel();
        ASSERT_NE(nullptr, m_server_ch);
        ASSERT_NE(nullptr, m_client_ch);
    }

    void cleanup() override
    {
        for (struct rdma_cm_id *id : {m_accepted, m_client, m_listener}) {
            if (id != nullptr) {
                if (id->qp != nullptr) {
                    cm.destroy_qp(id);
                }
                EXPECT_EQ(0, cm.destroy_id(id));
            }
        }
        cm.destroy_event_channel(m_client_ch);
        cm.destroy_event_channel(m_server_ch);
        EXPECT_EQ(0, uct_ib_emu_cm_release()) << "the CM kept an id";
        emu_fixture::cleanup();
    }

    /* The next event of ch, which must be of this type (the test fails
     * after EVENT_WAIT_MS without one); acked by the caller */
    static struct rdma_cm_event *expect_event(struct rdma_event_channel *ch,
                                              enum rdma_cm_event_type type)
    {
        struct pollfd pfd = {ch->fd, POLLIN, 0};
        struct rdma_cm_event *ev = nullptr;

        EXPECT_EQ(1, poll(&pfd, 1, EVENT_WAIT_MS))
                << "no " << type << " within " << EVENT_WAIT_MS << " ms";
        if (pfd.revents == 0) {
            return nullptr;
        }
        EXPECT_EQ(0, cm.get_cm_event(ch, &ev)) << strerror(errno);
        if (ev != nullptr) {
            EXPECT_EQ(type, ev->event) << "status " << ev->status;
        }
        return ev;
    }

    static std::string pdata(const struct rdma_conn_param &p)
    {
        return std::string(static_cast<const char*>(p.private_data),
                           p.private_data_len);
    }

    void listen(enum rdma_port_space ps = RDMA_PS_TCP, uint16_t port = PORT)
    {
        struct sockaddr_in addr = ip4(SERVER_IP, port);

        ASSERT_EQ(0, cm.create_id(m_server_ch, &m_listener, nullptr, ps));
        ASSERT_EQ(0, cm.bind_addr(m_listener, sa(addr)));
        ASSERT_EQ(0, cm.listen(m_listener, 8));
    }

    /* The client's id, its address and route resolved */
    void resolve(enum rdma_port_space ps = RDMA_PS_TCP, uint16_t port = PORT)
    {
        struct sockaddr_in src = ip4(CLIENT_IP, 0);
        struct sockaddr_in dst = ip4(SERVER_IP, port);
        struct rdma_cm_event *ev;

        ASSERT_EQ(0, cm.create_id(m_client_ch, &m_client, nullptr, ps));
        ASSERT_EQ(0, cm.resolve_addr(m_client, sa(src), sa(dst), 1000));
        ev = expect_event(m_client_ch, RDMA_CM_EVENT_ADDR_RESOLVED);
        ASSERT_NE(nullptr, ev);
        EXPECT_EQ(m_client, ev->id);
        cm.ack_cm_event(ev);
        ASSERT_NE(nullptr, m_client->verbs);
        EXPECT_STREQ("mlx5_1", m_client->verbs->device->name);

        ASSERT_EQ(0, cm.resolve_route(m_client, 1000));
        ev = expect_event(m_client_ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
        ASSERT_NE(nullptr, ev);
        cm.ack_cm_event(ev);
        EXPECT_EQ(1, m_client->route.num_paths);
    }

    static void make_qp(struct rdma_cm_id *id)
    {
        struct ibv_qp_init_attr attr = {};

        attr.cap.max_send_wr  = 4;
        attr.cap.max_recv_wr  = 4;
        attr.cap.max_send_sge = 1;
        attr.cap.max_recv_sge = 1;
        ASSERT_EQ(0, cm.create_qp(id, nullptr, &attr)) << strerror(errno);
        ASSERT_NE(nullptr, id->qp);
    }

    static enum ibv_qp_state qp_state(struct ibv_qp *qp)
    {
        struct ibv_qp_attr attr;
        struct ibv_qp_init_attr init;

        EXPECT_EQ(0, uct_ib_glue->query_qp(qp, &attr, IBV_QP_STATE, &init));
        return attr.qp_state;
    }

    /* The server's side of a request: its event, the new id */
    struct rdma_cm_event *take_request()
    {
        struct rdma_cm_event *ev = expect_event(m_server_ch,
                                                RDMA_CM_EVENT_CONNECT_REQUEST);

        if (ev != nullptr) {
            EXPECT_EQ(m_listener, ev->listen_id);
            m_accepted = ev->id;
        }
        return ev;
    }

    static constexpr const char *SERVER_IP = "198.18.0.1"; /* mlx5_0 */
    static constexpr const char *CLIENT_IP = "198.18.0.2"; /* mlx5_1 */
    static constexpr uint16_t   PORT       = 7471;

    struct rdma_event_channel *m_server_ch = nullptr;
    struct rdma_event_channel *m_client_ch = nullptr;
    struct rdma_cm_id         *m_listener  = nullptr;
    struct rdma_cm_id         *m_client    = nullptr;
    struct rdma_cm_id         *m_accepted  = nullptr;
};

constexpr const char *test_emu_cm::SERVER_IP;
constexpr const char *test_emu_cm::CLIENT_IP;


/* RC: private data both ways, both QPs in RTS and connected to each
 * other (a send goes through), a disconnect seen by both */
TEST_F(test_emu_cm, connect_accept_send_disconnect)
{
    listen();
    resolve();
    make_qp(m_client);

    const char hello[] = "hello";
    struct rdma_conn_param param = {};
    param.private_data        = hello;
    param.private_data_len    = sizeof(hello);
    param.responder_resources = 2;
    param.initiator_depth     = 2;
    param.retry_count         = 7;
    param.rnr_retry_count     = 7;
    ASSERT_EQ(0, cm.connect(m_client, &param));

    struct rdma_cm_event *ev = take_request();
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(std::string(hello, sizeof(hello)), pdata(ev->param.conn));
    EXPECT_EQ(m_client->qp->qp_num, ev->param.conn.qp_num);
    EXPECT_STREQ("mlx5_0", m_accepted->verbs->device->name);
    cm.ack_cm_event(ev);

    make_qp(m_accepted);
    const char welcome[] = "welcome";
    struct rdma_conn_param reply = {};
    reply.private_data        = welcome;
    reply.private_data_len    = sizeof(welcome);
    reply.responder_resources = 2;
    reply.initiator_depth     = 2;
    ASSERT_EQ(0, cm.accept(m_accepted, &reply));

    ev = expect_event(m_client_ch, RDMA_CM_EVENT_ESTABLISHED);
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(std::string(welcome, sizeof(welcome)), pdata(ev->param.conn));
    cm.ack_cm_event(ev);
    ev = expect_event(m_server_ch, RDMA_CM_EVENT_ESTABLISHED);
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(m_accepted, ev->id);
    cm.ack_cm_event(ev);
    EXPECT_EQ(IBV_QPS_RTS, qp_state(m_client->qp));
    EXPECT_EQ(IBV_QPS_RTS, qp_state(m_accepted->qp));

    /* a send from the client's QP lands in the server's receive */
    uint64_t out = 0x5eed, in = 0;
    struct ibv_mr *smr = uct_ib_glue->reg_mr(m_client->pd, &out, 8,
                                             IBV_ACCESS_LOCAL_WRITE);
    struct ibv_mr *rmr = uct_ib_glue->reg_mr(m_accepted->pd, &in, 8,
                                             IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(nullptr, smr);
    ASSERT_NE(nullptr, rmr);
    struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(&in), 8, rmr->lkey};
    struct ibv_recv_wr rwr = {}, *bad_r;
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    ASSERT_EQ(0, uct_ib_glue->post_recv(m_accepted->qp, &rwr, &bad_r));
    struct ibv_sge ssge = {reinterpret_cast<uintptr_t>(&out), 8, smr->lkey};
    struct ibv_send_wr swr = {}, *bad_s;
    swr.sg_list    = &ssge;
    swr.num_sge    = 1;
    swr.opcode     = IBV_WR_SEND;
    swr.send_flags = IBV_SEND_SIGNALED;
    ASSERT_EQ(0, uct_ib_glue->post_send(m_client->qp, &swr, &bad_s));
    struct ibv_wc wc;
    int n = 0;
    for (int i = 0; (i < 5000) && (n == 0); ++i) {
        n = uct_ib_glue->poll_cq(m_accepted->recv_cq, 1, &wc);
        usleep((n == 0) ? 1000 : 0);
    }
    ASSERT_EQ(1, n);
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
    EXPECT_EQ(0x5eedu, in);
    for (int i = 0; (i < 5000) &&
                    (uct_ib_glue->poll_cq(m_client->send_cq, 1, &wc) == 0);
         ++i) {
        usleep(1000);
    }
    EXPECT_EQ(0, uct_ib_glue->dereg_mr(smr));
    EXPECT_EQ(0, uct_ib_glue->dereg_mr(rmr));

    ASSERT_EQ(0, cm.disconnect(m_client));
    ev = expect_event(m_server_ch, RDMA_CM_EVENT_DISCONNECTED);
    ASSERT_NE(nullptr, ev);
    cm.ack_cm_event(ev);
    ev = expect_event(m_client_ch, RDMA_CM_EVENT_DISCONNECTED);
    ASSERT_NE(nullptr, ev);
    cm.ack_cm_event(ev);
    EXPECT_EQ(IBV_QPS_ERR, qp_state(m_client->qp));
    EXPECT_EQ(IBV_QPS_ERR, qp_state(m_accepted->qp));
    EXPECT_EQ(0, cm.disconnect(m_accepted)) << "the peer's came first";
}

TEST_F(test_emu_cm, reject_carries_private_data)
{
    listen();
    resolve();
    make_qp(m_client);
    ASSERT_EQ(0, cm.connect(m_client, nullptr));

    struct rdma_cm_event *ev = take_request();
    ASSERT_NE(nullptr, ev);
    cm.ack_cm_event(ev);
    const char busy[] = "busy";
    ASSERT_EQ(0, cm.reject(m_accepted, busy, sizeof(busy)));

    ev = expect_event(m_client_ch, RDMA_CM_EVENT_REJECTED);
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(28, ev->status) << "IB CM's consumer-defined reason";
    EXPECT_EQ(std::string(busy, sizeof(busy)), pdata(ev->param.conn));
    cm.ack_cm_event(ev);
}

TEST_F(test_emu_cm, nobody_listening_is_rejected)
{
    listen();
    resolve(RDMA_PS_TCP, PORT + 1);
    make_qp(m_client);
    ASSERT_EQ(0, cm.connect(m_client, nullptr));

    struct rdma_cm_event *ev = expect_event(m_client_ch,
                                            RDMA_CM_EVENT_REJECTED);
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(8, ev->status) << "IB CM's invalid service ID";
    cm.ack_cm_event(ev);
}

TEST_F(test_emu_cm, address_nobody_has_is_an_addr_error)
{
    struct sockaddr_in dst = ip4("10.1.2.3", PORT);

    ASSERT_EQ(0, cm.create_id(m_client_ch, &m_client, nullptr, RDMA_PS_TCP));
    ASSERT_EQ(0, cm.resolve_addr(m_client, nullptr, sa(dst), 1000));
    struct rdma_cm_event *ev = expect_event(m_client_ch,
                                            RDMA_CM_EVENT_ADDR_ERROR);
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(-EHOSTUNREACH, ev->status);
    cm.ack_cm_event(ev);

    /* and binding to it is refused */
    struct rdma_cm_id *other;
    ASSERT_EQ(0, cm.create_id(m_client_ch, &other, nullptr, RDMA_PS_TCP));
    EXPECT_EQ(-1, cm.bind_addr(other, sa(dst)));
    EXPECT_EQ(EADDRNOTAVAIL, errno);
    EXPECT_EQ(0, cm.destroy_id(other));
}

/* UD: the client's ESTABLISHED names the server's QP, Q_Key and address */
TEST_F(test_emu_cm, ud_sidr)
{
    listen(RDMA_PS_UDP);
    resolve(RDMA_PS_UDP);
    make_qp(m_client);
    EXPECT_EQ(IBV_QPT_UD, m_client->qp->qp_type);
    EXPECT_EQ(IBV_QPS_RTS, qp_state(m_client->qp));

    const char hi[] = "datagrams";
    struct rdma_conn_param param = {};
    param.private_data     = hi;
    param.private_data_len = sizeof(hi);
    ASSERT_EQ(0, cm.connect(m_client, &param));

    struct rdma_cm_event *ev = take_request();
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(std::string(hi, sizeof(hi)),
              std::string(static_cast<const char*>(
                                  ev->param.ud.private_data),
                          ev->param.ud.private_data_len));
    cm.ack_cm_event(ev);
    make_qp(m_accepted);
    ASSERT_EQ(0, cm.accept(m_accepted, nullptr));

    ev = expect_event(m_client_ch, RDMA_CM_EVENT_ESTABLISHED);
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(m_accepted->qp->qp_num, ev->param.ud.qp_num);
    EXPECT_EQ(0x01234567u, ev->param.ud.qkey);
    EXPECT_EQ(1, ev->param.ud.ah_attr.is_global);
    struct sockaddr_in server = ip4(SERVER_IP, 0);
    EXPECT_EQ(0, memcmp(&ev->param.ud.ah_attr.grh.dgid.raw[12],
                        &server.sin_addr, 4));
    cm.ack_cm_event(ev);
}

/* UD to a port nobody listens on: SIDR's answer makes it UNREACHABLE */
TEST_F(test_emu_cm, ud_nobody_listening_is_unreachable)
{
    listen(RDMA_PS_UDP);
    resolve(RDMA_PS_UDP, PORT + 1);
    make_qp(m_client);
    ASSERT_EQ(0, cm.connect(m_client, nullptr));

    struct rdma_cm_event *ev = expect_event(m_client_ch,
                                            RDMA_CM_EVENT_UNREACHABLE);
    ASSERT_NE(nullptr, ev);
    cm.ack_cm_event(ev);
}

/* UCX's way: no QP on the id, its number in the parameters; the client
 * gets CONNECT_RESPONSE and answers with rdma_establish */
TEST_F(test_emu_cm, connect_without_a_qp)
{
    listen();
    resolve();

    struct rdma_conn_param param = {};
    param.qp_num = 0x123456;
    ASSERT_EQ(0, cm.connect(m_client, &param));
    struct rdma_cm_event *ev = take_request();
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(0x123456u, ev->param.conn.qp_num);
    cm.ack_cm_event(ev);

    struct rdma_conn_param reply = {};
    reply.qp_num = 0x654321;
    ASSERT_EQ(0, cm.accept(m_accepted, &reply));
    ev = expect_event(m_client_ch, RDMA_CM_EVENT_CONNECT_RESPONSE);
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(0x654321u, ev->param.conn.qp_num);
    cm.ack_cm_event(ev);

    ASSERT_EQ(0, cm.establish(m_client));
    ev = expect_event(m_server_ch, RDMA_CM_EVENT_ESTABLISHED);
    ASSERT_NE(nullptr, ev);
    cm.ack_cm_event(ev);

    /* the QP's attributes for the peer, as rdma_init_qp_attr gives them */
    struct ibv_qp_attr attr = {};
    int mask                = 0;
    attr.qp_state = IBV_QPS_RTR;
    ASSERT_EQ(0, cm.init_qp_attr(m_client, &attr, &mask));
    EXPECT_EQ(0x654321u, attr.dest_qp_num);
    EXPECT_TRUE(mask & IBV_QP_AV);
}

TEST_F(test_emu_cm, non_blocking_channel_answers_eagain)
{
    struct rdma_cm_event *ev = nullptr;
    int flags = fcntl(m_client_ch->fd, F_GETFL);

    ASSERT_EQ(0, fcntl(m_client_ch->fd, F_SETFL, flags | O_NONBLOCK));
    EXPECT_EQ(-1, cm.get_cm_event(m_client_ch, &ev));
    EXPECT_EQ(EAGAIN, errno);
}

/* The client's port moves to another MAC: its id gets ADDR_CHANGE */
TEST_F(test_emu_cm, mac_move_is_an_addr_change)
{
    listen();
    resolve();

    const uct_ib_emu_mac_t moved = {0x02, 0xc9, 0xaa, 0x00, 0x00, 0x02};
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_1", 1, moved));
    struct rdma_cm_event *ev = expect_event(m_client_ch,
                                            RDMA_CM_EVENT_ADDR_CHANGE);
    ASSERT_NE(nullptr, ev);
    EXPECT_EQ(m_client, ev->id);
    cm.ack_cm_event(ev);
}

} // namespace
