/*
 * The verbs entry points on the engine: post_send / post_recv /
 * post_srq_recv write the same ring WQEs as the mlx5 provider, poll_cq reads
 * the engine's CQEs as work completions. Two verbs QPs of mlx5_0 connected
 * to each other through the port (RoCEv2), step mode.
 */
#include "emu/emu_test.h"

#include <emu/api/dropin.h>

#include <iterator>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>


namespace {

using namespace emu_test;

class test_emu_engine_verbs : public emu_fixture {
protected:
    void init() override
    {
        emu_fixture::init();
        ASSERT_EQ(UCS_OK, uct_ib_emu_engine_set_step_mode(true));
        m_ctx = open("mlx5_0");
        ASSERT_NE(nullptr, m_ctx);
        m_pd = uct_ib_glue->alloc_pd(m_ctx);
        ASSERT_NE(nullptr, m_pd);
        m_cq = uct_ib_glue->create_cq(m_ctx, 64, nullptr, nullptr, 0);
        ASSERT_NE(nullptr, m_cq);
    }

    void cleanup() override
    {
        for (struct ibv_qp *qp : m_qps) {
            EXPECT_EQ(0, uct_ib_glue->destroy_qp(qp));
        }
        if (m_srq != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->destroy_srq(m_srq));
        }
        for (struct ibv_mr *mr : m_mrs) {
            EXPECT_EQ(0, uct_ib_glue->dereg_mr(mr));
        }
        EXPECT_EQ(0, uct_ib_glue->destroy_cq(m_cq));
        if (m_channel != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->destroy_comp_channel(m_channel));
        }
        EXPECT_EQ(0, uct_ib_glue->dealloc_pd(m_pd));
        emu_fixture::cleanup();
        EXPECT_EQ(UCS_OK, uct_ib_emu_engine_set_step_mode(false));
    }

    /* Replace the fixture's CQ by one on a completion channel */
    void use_channel()
    {
        m_channel = uct_ib_glue->create_comp_channel(m_ctx);
        ASSERT_NE(nullptr, m_channel);
        ASSERT_EQ(0, uct_ib_glue->destroy_cq(m_cq));
        m_cq = uct_ib_glue->create_cq(m_ctx, 64, this, m_channel, 0);
        ASSERT_NE(nullptr, m_cq);
    }

    bool readable(int timeout_ms)
    {
        struct pollfd pfd = {m_channel->fd, POLLIN, 0};
        return ::poll(&pfd, 1, timeout_ms) == 1;
    }

    struct ibv_qp *create_qp(struct ibv_srq *srq = nullptr,
                             enum ibv_qp_type type = IBV_QPT_RC)
    {
        struct ibv_qp_init_attr attr = {};

        attr.send_cq            = m_cq;
        attr.recv_cq            = m_cq;
        attr.srq                = srq;
        attr.qp_type            = type;
        attr.cap.max_send_wr    = 16;
        attr.cap.max_recv_wr    = 16;
        attr.cap.max_send_sge   = 2;
        attr.cap.max_recv_sge   = 2;
        attr.cap.max_inline_data = 64;

        struct ibv_qp *qp = uct_ib_glue->create_qp(m_pd, &attr);
        EXPECT_NE(nullptr, qp);
        if (qp != nullptr) {
            m_qps.push_back(qp);
        }
        return qp;
    }

    void to_rts(struct ibv_qp *qp, uint32_t dest_qpn, uint8_t retry = 7)
    {
        struct ibv_qp_attr attr = {};

        attr.qp_state        = IBV_QPS_INIT;
        attr.port_num        = 1;
        attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ |
                               IBV_ACCESS_REMOTE_ATOMIC;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, 0x39));

        attr                        = {};
        attr.qp_state               = IBV_QPS_RTR;
        attr.path_mtu               = IBV_MTU_1024;
        attr.dest_qp_num            = dest_qpn;
        attr.max_dest_rd_atomic     = 4;
        attr.min_rnr_timer          = 1;
        attr.ah_attr.is_global      = 1;
        attr.ah_attr.port_num       = 1;
        attr.ah_attr.grh.dgid       = gid_of(m_ctx, 1, 3);
        attr.ah_attr.grh.sgid_index = 3;
        attr.ah_attr.grh.hop_limit  = 64;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, 0x129181));

        attr           = {};
        attr.qp_state  = IBV_QPS_RTS;
        attr.timeout   = 14;
        attr.retry_cnt = retry;
        attr.rnr_retry = 7;
        attr.max_rd_atomic = 4;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, 0x12e01));
    }

    /* A UC QP to RTS: the RC attributes of reliability are not UC's */
    void uc_to_rts(struct ibv_qp *qp, uint32_t dest_qpn)
    {
        struct ibv_qp_attr attr = {};

        attr.qp_state        = IBV_QPS_INIT;
        attr.port_num        = 1;
        attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                            IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                            IBV_QP_ACCESS_FLAGS));

        attr                        = {};
        attr.qp_state               = IBV_QPS_RTR;
        attr.path_mtu               = IBV_MTU_1024;
        attr.dest_qp_num            = dest_qpn;
        attr.max_dest_rd_atomic     = 4;
        attr.ah_attr.is_global      = 1;
        attr.ah_attr.port_num       = 1;
        attr.ah_attr.grh.dgid       = gid_of(m_ctx, 1, 3);
        attr.ah_attr.grh.sgid_index = 3;
        attr.ah_attr.grh.hop_limit  = 64;
        const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                        IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
        EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, rtr |
                                                 IBV_QP_MAX_DEST_RD_ATOMIC))
                << "no responder resources on UC";
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, rtr));

        attr          = {};
        attr.qp_state = IBV_QPS_RTS;
        attr.timeout  = 14;
        EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                                 IBV_QP_SQ_PSN | IBV_QP_TIMEOUT))
                << "no ack timeout on UC";
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE |
                                            IBV_QP_SQ_PSN));
    }

    void connect_uc_pair()
    {
        m_a = create_qp(nullptr, IBV_QPT_UC);
        m_b = create_qp(nullptr, IBV_QPT_UC);
        ASSERT_NE(nullptr, m_a);
        ASSERT_NE(nullptr, m_b);
        uc_to_rts(m_a, m_b->qp_num);
        uc_to_rts(m_b, m_a->qp_num);
    }

    void connect_pair(struct ibv_srq *srq = nullptr)
    {
        m_a = create_qp();
        m_b = create_qp(srq);
        ASSERT_NE(nullptr, m_b);
        to_rts(m_a, m_b->qp_num);
        to_rts(m_b, m_a->qp_num);
    }

    struct ibv_mr *reg(void *buf, size_t len)
    {
        struct ibv_mr *mr = uct_ib_glue->reg_mr(
                m_pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
                IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                IBV_ACCESS_REMOTE_ATOMIC);

        EXPECT_NE(nullptr, mr);
        m_mrs.push_back(mr);
        return mr;
    }

    /* Whether the context has an asynchronous event to take */
    bool async_readable() const
    {
        struct pollfd pfd = {m_ctx->async_fd, POLLIN, 0};

        EXPECT_LE(0, ::poll(&pfd, 1, 0)) << strerror(errno);
        return pfd.revents & POLLIN;
    }

    int post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
                  struct ibv_sge *sge, int num_sge, unsigned flags = 0,
                  uint64_t raddr = 0, uint32_t rkey = 0)
    {
        struct ibv_send_wr wr = {}, *bad = nullptr;

        wr.wr_id      = wr_id;
        wr.opcode     = op;
        wr.sg_list    = sge;
        wr.num_sge    = num_sge;
        wr.send_flags = flags;
        wr.imm_data   = htobe32(0xabcd);
        if ((op == IBV_WR_ATOMIC_FETCH_AND_ADD) ||
            (op == IBV_WR_ATOMIC_CMP_AND_SWP)) {
            wr.wr.atomic.remote_addr = raddr;
            wr.wr.atomic.rkey        = rkey;
            wr.wr.atomic.compare_add = 5;
        } else {
            wr.wr.rdma.remote_addr = raddr;
            wr.wr.rdma.rkey        = rkey;
        }
        return uct_ib_glue->post_send(qp, &wr, &bad);
    }

    int post_recv(struct ibv_qp *qp, uint64_t wr_id, struct ibv_sge *sge)
    {
        struct ibv_recv_wr wr = {}, *bad = nullptr;

        wr.wr_id   = wr_id;
        wr.sg_list = sge;
        wr.num_sge = 1;
        return uct_ib_glue->post_recv(qp, &wr, &bad);
    }

    std::vector<struct ibv_wc> poll()
    {
        std::vector<struct ibv_wc> wcs(64);
        uct_ib_emu_engine_run();
        int n = uct_ib_glue->poll_cq(m_cq, static_cast<int>(wcs.size()),
                                     wcs.data());
        EXPECT_GE(n, 0);
        wcs.resize(std::max(n, 0));
        return wcs;
    }

    /* The completions of one QP, in order: requester and responder share
     * the CQ, and a receive completes before the ACK reaches the sender */
    static std::vector<struct ibv_wc> of(const std::vector<struct ibv_wc> &wcs,
                                         const struct ibv_qp *qp)
    {
        std::vector<struct ibv_wc> result;

        std::copy_if(wcs.begin(), wcs.end(), std::back_inserter(result),
                     [qp](const struct ibv_wc &wc) {
                         return wc.qp_num == qp->qp_num;
                     });
        return result;
    }

    struct ibv_context          *m_ctx = nullptr;
    struct ibv_pd               *m_pd  = nullptr;
    struct ibv_cq               *m_cq  = nullptr;
    struct ibv_srq              *m_srq = nullptr;
    struct ibv_comp_channel     *m_channel = nullptr;
    struct ibv_qp               *m_a   = nullptr;
    struct ibv_qp               *m_b   = nullptr;
    std::vector<struct ibv_qp*> m_qps;
    std::vector<struct ibv_mr*> m_mrs;
};


TEST_F(test_emu_engine_verbs, send_write_read_atomic)
{
    connect_pair();
    uint64_t src[4] = {11, 22, 33, 44}, dst[4] = {}, remote = 100;
    struct ibv_mr *mr_s = reg(src, sizeof(src));
    struct ibv_mr *mr_d = reg(dst, sizeof(dst));
    struct ibv_mr *mr_r = reg(&remote, sizeof(remote));
    struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(&dst[0]), 8, mr_d->lkey};
    struct ibv_sge ssge = {reinterpret_cast<uintptr_t>(&src[0]), 8, mr_s->lkey};

    ASSERT_EQ(0, post_recv(m_b, 0xb0, &rsge));
    ASSERT_EQ(0, post_send(m_a, IBV_WR_SEND_WITH_IMM, 0xa0, &ssge, 1,
                           IBV_SEND_SIGNALED | IBV_SEND_INLINE));
    std::vector<struct ibv_wc> wcs = poll();
    std::vector<struct ibv_wc> req = of(wcs, m_a), resp = of(wcs, m_b);
    ASSERT_EQ(1u, req.size());
    ASSERT_EQ(1u, resp.size());
    EXPECT_EQ(0xa0u, req[0].wr_id);
    EXPECT_EQ(IBV_WC_SEND, req[0].opcode);
    EXPECT_EQ(IBV_WC_SUCCESS, req[0].status);
    EXPECT_EQ(0xb0u, resp[0].wr_id);
    EXPECT_EQ(IBV_WC_RECV, resp[0].opcode);
    EXPECT_EQ(IBV_WC_SUCCESS, resp[0].status);
    EXPECT_EQ(8u, resp[0].byte_len);
    EXPECT_TRUE(resp[0].wc_flags & IBV_WC_WITH_IMM);
    EXPECT_EQ(htobe32(0xabcd), resp[0].imm_data);
    EXPECT_EQ(m_a->qp_num, resp[0].src_qp);
    EXPECT_EQ(11u, dst[0]);

    struct ibv_sge wsge = {reinterpret_cast<uintptr_t>(&src[1]), 16,
                           mr_s->lkey};
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 0xa1, &wsge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&dst[1]), mr_d->rkey));
    struct ibv_sge gsge = {reinterpret_cast<uintptr_t>(&src[3]), 8,
                           mr_s->lkey};
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_READ, 0xa2, &gsge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&dst[0]), mr_d->rkey));
    uint64_t fetched = 0;
    struct ibv_mr *mr_f = reg(&fetched, 8);
    struct ibv_sge asge = {reinterpret_cast<uintptr_t>(&fetched), 8,
                           mr_f->lkey};
    ASSERT_EQ(0, post_send(m_a, IBV_WR_ATOMIC_FETCH_AND_ADD, 0xa3, &asge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&remote), mr_r->rkey));

    wcs = poll();
    ASSERT_EQ(3u, wcs.size());
    EXPECT_EQ(IBV_WC_RDMA_WRITE, wcs[0].opcode);
    EXPECT_EQ(IBV_WC_RDMA_READ, wcs[1].opcode);
    EXPECT_EQ(IBV_WC_FETCH_ADD, wcs[2].opcode);
    EXPECT_EQ(0xa3u, wcs[2].wr_id);
    EXPECT_EQ(22u, dst[1]);
    EXPECT_EQ(33u, dst[2]);
    EXPECT_EQ(11u, src[3]) << "read back dst[0]";
    EXPECT_EQ(100u, fetched) << "host order: IBV_ATOMIC_HCA";
    EXPECT_EQ(105u, remote);
}

/* The ibv_wr_* data operations, as perftest posts them by default */
TEST_F(test_emu_engine_verbs, wr_api_send_write_read_atomic)
{
    struct ibv_qp_init_attr_ex attr = {};

    attr.comp_mask       = IBV_QP_INIT_ATTR_PD |
                           IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    attr.pd              = m_pd;
    attr.send_cq         = m_cq;
    attr.recv_cq         = m_cq;
    attr.qp_type         = IBV_QPT_RC;
    attr.cap.max_send_wr = 16;
    attr.cap.max_recv_wr = 16;
    attr.cap.max_send_sge = 2;
    attr.cap.max_recv_sge = 2;
    attr.cap.max_inline_data = 64;
    attr.send_ops_flags  = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
                           IBV_QP_EX_WITH_RDMA_READ |
                           IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
    m_a = uct_ib_glue->mlx5dv_create_qp(m_ctx, &attr, nullptr);
    ASSERT_NE(nullptr, m_a);
    m_qps.push_back(m_a);
    m_b = create_qp();
    to_rts(m_a, m_b->qp_num);
    to_rts(m_b, m_a->qp_num);

    struct ibv_qp_ex *x = uct_ib_glue->qp_to_qp_ex(m_a);
    ASSERT_NE(nullptr, x);
    /* only the operations asked for */
    EXPECT_EQ(nullptr, x->wr_send_imm);
    EXPECT_EQ(nullptr, x->wr_atomic_cmp_swp);

    uint64_t src[2] = {11, 22}, dst[4] = {}, remote = 100, fetched = 0;
    uint64_t rd[2]  = {};
    char hello[8]   = "hello!";
    struct ibv_mr *mr_s = reg(src, sizeof(src));
    struct ibv_mr *mr_d = reg(dst, sizeof(dst));
    struct ibv_mr *mr_r = reg(&remote, sizeof(remote));
    struct ibv_mr *mr_f = reg(&fetched, sizeof(fetched));
    struct ibv_mr *mr_rd = reg(rd, sizeof(rd));
    struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(&dst[3]), 8, mr_d->lkey};
    struct ibv_sge read_sges[2] = {
        {reinterpret_cast<uintptr_t>(&rd[1]), 8, mr_rd->lkey},
        {reinterpret_cast<uintptr_t>(&rd[0]), 8, mr_rd->lkey}};

    ASSERT_EQ(0, post_recv(m_b, 0xb0, &rsge));
    x->wr_start(x);
    x->wr_id    = 0xc0;
    x->wr_flags = IBV_SEND_SIGNALED;
    x->wr_send(x);
    x->wr_set_inline_data(x, hello, sizeof(hello));
    hello[0]    = 'J'; /* copied when set, as the provider does */
    x->wr_id    = 0xc1;
    x->wr_rdma_write(x, mr_d->rkey, reinterpret_cast<uintptr_t>(&dst[0]));
    x->wr_set_sge(x, mr_s->lkey, reinterpret_cast<uintptr_t>(&src[0]), 16);
    x->wr_id    = 0xc2;
    x->wr_rdma_read(x, mr_d->rkey, reinterpret_cast<uintptr_t>(&dst[0]));
    x->wr_set_sge_list(x, 2, read_sges); /* 16 bytes into two entries */
    x->wr_id    = 0xc3;
    x->wr_atomic_fetch_add(x, mr_r->rkey, reinterpret_cast<uintptr_t>(&remote),
                           5);
    x->wr_set_sge(x, mr_f->lkey, reinterpret_cast<uintptr_t>(&fetched), 8);
    ASSERT_EQ(0, x->wr_complete(x));

    std::vector<struct ibv_wc> wcs = poll();
    std::vector<struct ibv_wc> req = of(wcs, m_a), resp = of(wcs, m_b);
    ASSERT_EQ(4u, req.size());
    ASSERT_EQ(1u, resp.size());
    const uint64_t ids[4]     = {0xc0, 0xc1, 0xc2, 0xc3};
    const ibv_wc_opcode ops[4] = {IBV_WC_SEND, IBV_WC_RDMA_WRITE,
                                  IBV_WC_RDMA_READ, IBV_WC_FETCH_ADD};
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(ids[i], req[i].wr_id);
        EXPECT_EQ(ops[i], req[i].opcode);
        EXPECT_EQ(IBV_WC_SUCCESS, req[i].status);
    }
    EXPECT_EQ(sizeof(hello), resp[0].byte_len);
    EXPECT_STREQ("hello!", reinterpret_cast<const char*>(&dst[3]));
    EXPECT_EQ(11u, dst[0]);
    EXPECT_EQ(22u, dst[1]);
    EXPECT_EQ(11u, rd[1]) << "the gather list in its order";
    EXPECT_EQ(22u, rd[0]);
    EXPECT_EQ(100u, fetched);
    EXPECT_EQ(105u, remote);

    /* a setter before any builder: nothing of the batch is posted */
    x->wr_start(x);
    x->wr_set_sge(x, mr_s->lkey, reinterpret_cast<uintptr_t>(&src[0]), 8);
    x->wr_rdma_write(x, mr_d->rkey, reinterpret_cast<uintptr_t>(&dst[2]));
    x->wr_set_sge(x, mr_s->lkey, reinterpret_cast<uintptr_t>(&src[0]), 8);
    EXPECT_EQ(EINVAL, x->wr_complete(x));
    /* a builder outside wr_start/wr_complete */
    x->wr_rdma_write(x, mr_d->rkey, reinterpret_cast<uintptr_t>(&dst[2]));
    EXPECT_EQ(EINVAL, x->wr_complete(x));
    /* an aborted batch */
    x->wr_start(x);
    x->wr_rdma_write(x, mr_d->rkey, reinterpret_cast<uintptr_t>(&dst[2]));
    x->wr_set_sge(x, mr_s->lkey, reinterpret_cast<uintptr_t>(&src[0]), 8);
    x->wr_abort(x);
    EXPECT_TRUE(poll().empty());
    EXPECT_EQ(0u, dst[2]);
}

TEST_F(test_emu_engine_verbs, unsignaled_requests_retire_with_the_next)
{
    connect_pair();
    uint64_t word = 0;
    struct ibv_mr *mr = reg(&word, 8);
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&word), 8, mr->lkey};
    unsigned completions = 0;

    /* several times the queue's depth: only possible if the signaled
     * completion frees the unsignaled requests before it */
    for (unsigned i = 0; i < 200; ++i) {
        bool last_of_four = (i % 4) == 3;
        ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, i, &sge, 1,
                               last_of_four ? IBV_SEND_SIGNALED : 0,
                               reinterpret_cast<uintptr_t>(&word), mr->rkey))
                << "request " << i;
        if (last_of_four) {
            std::vector<struct ibv_wc> wcs = poll();
            ASSERT_EQ(1u, wcs.size());
            EXPECT_EQ(i, wcs[0].wr_id);
            ++completions;
        }
    }
    EXPECT_EQ(50u, completions);
}

TEST_F(test_emu_engine_verbs, srq_recycles_its_entries)
{
    struct ibv_srq_init_attr sattr = {};
    sattr.attr.max_wr  = 7;
    sattr.attr.max_sge = 1;
    m_srq = uct_ib_glue->create_srq(m_pd, &sattr);
    ASSERT_NE(nullptr, m_srq);
    connect_pair(m_srq);
    uint64_t rbuf[4] = {}, v = 0;
    struct ibv_mr *mr = reg(rbuf, sizeof(rbuf));
    struct ibv_mr *mv = reg(&v, 8);
    struct ibv_sge ssge = {reinterpret_cast<uintptr_t>(&v), 8, mv->lkey};

    for (unsigned i = 0; i < 40; ++i) {
        struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(&rbuf[i % 4]), 8,
                               mr->lkey};
        struct ibv_recv_wr wr = {}, *bad = nullptr;
        wr.wr_id   = 1000 + i;
        wr.sg_list = &rsge;
        wr.num_sge = 1;
        ASSERT_EQ(0, uct_ib_glue->post_srq_recv(m_srq, &wr, &bad)) << i;

        v = i;
        ASSERT_EQ(0, post_send(m_a, IBV_WR_SEND, i, &ssge, 1,
                               IBV_SEND_SIGNALED));
        std::vector<struct ibv_wc> wcs = poll();
        std::vector<struct ibv_wc> resp = of(wcs, m_b);
        ASSERT_EQ(2u, wcs.size()) << "send " << i;
        ASSERT_EQ(1u, resp.size()) << "send " << i;
        EXPECT_EQ(IBV_WC_RECV, resp[0].opcode);
        EXPECT_EQ(1000u + i, resp[0].wr_id);
        EXPECT_EQ(uint64_t(i), rbuf[i % 4]);
    }
}

/* ibv_resize_cq (the drop-in's): the completions not yet polled move into
 * the new ring in order, and the ring keeps working across its new size;
 * a size they do not fit in is refused */
TEST_F(test_emu_engine_verbs, resize_cq_keeps_unpolled_completions)
{
    const uct_ib_emu_dropin_ops_t &dropin = uct_ib_emu_dropin_ops;
    uint64_t word = 0;

    connect_pair();
    struct ibv_mr *mr   = reg(&word, 8);
    struct ibv_sge sge  = {reinterpret_cast<uintptr_t>(&word), 8, mr->lkey};
    auto write          = [&](uint64_t wr_id) {
        return post_send(m_a, IBV_WR_RDMA_WRITE, wr_id, &sge, 1,
                         IBV_SEND_SIGNALED,
                         reinterpret_cast<uintptr_t>(&word), mr->rkey);
    };

    for (uint64_t i = 0; i < 5; ++i) {
        ASSERT_EQ(0, write(i));
    }
    uct_ib_emu_engine_run(); /* 5 completions written, none polled */

    EXPECT_EQ(EINVAL, dropin.resize_cq(m_cq, 3)) << "5 do not fit in 4";
    EXPECT_EQ(EINVAL, dropin.resize_cq(m_cq, 0));
    ASSERT_EQ(0, dropin.resize_cq(m_cq, 200));
    EXPECT_EQ(255, m_cq->cqe);

    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(5u, wcs.size());
    for (uint64_t i = 0; i < 5; ++i) {
        EXPECT_EQ(IBV_WC_SUCCESS, wcs[i].status);
        EXPECT_EQ(i, wcs[i].wr_id);
    }

    /* several passes over the new ring, then smaller again */
    for (uint64_t i = 5; i < 605; ++i) {
        ASSERT_EQ(0, write(i));
        wcs = poll();
        ASSERT_EQ(1u, wcs.size()) << i;
        EXPECT_EQ(i, wcs[0].wr_id);
    }
    /* 5 not polled, at indices 605..609: across the end of an 8-entry
     * ring, each with the owner bit of its pass */
    for (uint64_t i = 605; i < 610; ++i) {
        ASSERT_EQ(0, write(i));
    }
    uct_ib_emu_engine_run();
    ASSERT_EQ(0, dropin.resize_cq(m_cq, 4));
    EXPECT_EQ(7, m_cq->cqe);
    wcs = poll();
    ASSERT_EQ(5u, wcs.size());
    for (uint64_t i = 0; i < 5; ++i) {
        EXPECT_EQ(605 + i, wcs[i].wr_id);
    }
    for (uint64_t i = 610; i < 710; ++i) {
        ASSERT_EQ(0, write(i));
        wcs = poll();
        ASSERT_EQ(1u, wcs.size()) << i;
        EXPECT_EQ(i, wcs[0].wr_id);
    }
}

/* ibv_create_cq_ex with the polling interface: completions one by one
 * (start_poll, next_poll, end_poll), their fields through the read
 * functions, and the device's timestamp: the emulator's clock at 156.25 MHz,
 * as ibv_query_device_ex's hca_core_clock says */
TEST_F(test_emu_engine_verbs, extended_cq_polls_with_device_timestamps)
{
    const uct_ib_emu_dropin_ops_t &dropin = uct_ib_emu_dropin_ops;
    struct ibv_cq_init_attr_ex     attr   = {};
    struct ibv_poll_cq_attr        pattr  = {};
    struct ibv_device_attr_ex      dattr  = {};
    uint64_t                       word   = 0;

    ASSERT_EQ(0, uct_ib_glue->destroy_cq(m_cq));
    attr.cqe      = 64;
    attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
                    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
    attr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
    m_cq = nullptr;
    EXPECT_EQ(nullptr, dropin.create_cq(m_ctx, &attr, nullptr));
    EXPECT_EQ(EOPNOTSUPP, errno) << "no real-time clock";
    attr.wc_flags &= ~uint64_t(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
    struct ibv_cq_ex *cq_ex = dropin.create_cq(m_ctx, &attr, nullptr);
    ASSERT_NE(nullptr, cq_ex) << strerror(errno);
    m_cq = ibv_cq_ex_to_cq(cq_ex);

    auto *vctx = verbs_get_ctx(m_ctx);
    ASSERT_EQ(0, vctx->query_device_ex(m_ctx, nullptr, &dattr, sizeof(dattr)));
    EXPECT_EQ(156250u, dattr.hca_core_clock);
    EXPECT_NE(0u, dattr.completion_timestamp_mask);

    EXPECT_EQ(ENOENT, cq_ex->start_poll(cq_ex, &pattr)) << "empty";

    connect_pair();
    struct ibv_mr *mr  = reg(&word, 8);
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&word), 8, mr->lkey};
    uint64_t       before = uct_ib_emu_clock_now();
    for (uint64_t i = 0; i < 3; ++i) {
        ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 50 + i, &sge, 1,
                               IBV_SEND_SIGNALED,
                               reinterpret_cast<uintptr_t>(&word), mr->rkey));
        uct_ib_emu_clock_advance(3200); /* 500 ticks */
        uct_ib_emu_engine_run();
    }

    std::vector<uint64_t> stamps;
    ASSERT_EQ(0, cq_ex->start_poll(cq_ex, &pattr));
    do {
        EXPECT_EQ(IBV_WC_SUCCESS, cq_ex->status);
        EXPECT_EQ(50 + stamps.size(), cq_ex->wr_id);
        EXPECT_EQ(IBV_WC_RDMA_WRITE, ibv_wc_read_opcode(cq_ex));
        EXPECT_EQ(m_a->qp_num, ibv_wc_read_qp_num(cq_ex));
        stamps.push_back(ibv_wc_read_completion_ts(cq_ex));
    } while (cq_ex->next_poll(cq_ex) == 0);
    cq_ex->end_poll(cq_ex);

    ASSERT_EQ(3u, stamps.size());
    EXPECT_GE(stamps[0], before * 5 / 32) << "not before the first post";
    for (size_t i = 1; i < stamps.size(); ++i) {
        EXPECT_GE(stamps[i] - stamps[i - 1], 500u)
                << "the clock advanced 3.2 us, 500 ticks, between the writes";
    }
    EXPECT_EQ(ENOENT, cq_ex->start_poll(cq_ex, &pattr)) << "all taken";
}

/* ibv_rereg_mr (the drop-in's): the keys stay, a work request that reaches
 * the MR afterwards sees its new range and rights; what libibverbs refuses
 * is refused with the MR unchanged */
TEST_F(test_emu_engine_verbs, rereg_mr_moves_a_registration_in_place)
{
    const uct_ib_emu_dropin_ops_t &dropin = uct_ib_emu_dropin_ops;
    uint64_t src = 0x1122334455667788ull, first = 0, second = 0;

    connect_pair();
    struct ibv_mr *smr = reg(&src, 8);
    struct ibv_mr *mr  = reg(&first, 8);
    const uint32_t rkey = mr->rkey, lkey = mr->lkey;
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&src), 8, smr->lkey};

    errno = 0;
    EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
              dropin.rereg_mr(mr, 0, nullptr, nullptr, 0, 0)) << "no flags";
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
              dropin.rereg_mr(mr, 0x100, nullptr, nullptr, 0, 0));
    EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
              dropin.rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr,
                              &second, 0, 0)) << "no length";
    EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
              dropin.rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, nullptr, nullptr, 0,
                              0)) << "no PD";
    EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
              dropin.rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr,
                              0, IBV_ACCESS_REMOTE_WRITE))
            << "remote write without local write";
    EXPECT_EQ(&first, mr->addr) << "unchanged by the refusals";

    ASSERT_EQ(0, dropin.rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr,
                                 &second, 8, 0));
    EXPECT_EQ(&second, mr->addr);
    EXPECT_EQ(8u, mr->length);
    EXPECT_EQ(rkey, mr->rkey);
    EXPECT_EQ(lkey, mr->lkey);

    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 1, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&second), rkey));
    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(src, second);
    EXPECT_EQ(0u, first) << "the old range is no longer the MR's";

    ASSERT_EQ(0, dropin.rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr,
                                 nullptr, 0, IBV_ACCESS_LOCAL_WRITE));
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 2, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&second), rkey));
    wcs = poll();
    ASSERT_FALSE(wcs.empty());
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wcs[0].status)
            << "remote write was taken away";
}

/* Device memory (ibv_alloc_dm, the context's): reached by the program only
 * through memcpy_to/from_dm, by the device through zero-based MRs on it */
TEST_F(test_emu_engine_verbs, device_memory_through_zero_based_mrs)
{
    auto *vctx = verbs_get_ctx(m_ctx);
    struct ibv_device_attr_ex dattr = {};
    struct ibv_alloc_dm_attr  aattr = {};
    uint64_t host[4] = {1, 2, 3, 4}, back[4] = {};

    ASSERT_EQ(0, vctx->query_device_ex(m_ctx, nullptr, &dattr, sizeof(dattr)));
    EXPECT_EQ(256u * 1024, dattr.max_dm_size);

    aattr.length    = 4096;
    aattr.comp_mask = 1;
    EXPECT_EQ(nullptr, vctx->alloc_dm(m_ctx, &aattr));
    EXPECT_EQ(EINVAL, errno);
    aattr.comp_mask = 0;
    aattr.length    = dattr.max_dm_size + 1;
    EXPECT_EQ(nullptr, vctx->alloc_dm(m_ctx, &aattr));
    EXPECT_EQ(ENOMEM, errno);
    aattr.length    = 200 * 1024;
    struct ibv_dm *big = vctx->alloc_dm(m_ctx, &aattr);
    ASSERT_NE(nullptr, big);
    aattr.length    = 100 * 1024;
    EXPECT_EQ(nullptr, vctx->alloc_dm(m_ctx, &aattr)) << "256 KiB in all";
    EXPECT_EQ(ENOMEM, errno);
    EXPECT_EQ(0, vctx->free_dm(big));
    aattr.length    = 4096;
    struct ibv_dm *dm = vctx->alloc_dm(m_ctx, &aattr);
    ASSERT_NE(nullptr, dm) << strerror(errno);

    EXPECT_EQ(EFAULT, dm->memcpy_to_dm(dm, 4090, host, 8)) << "past its end";
    ASSERT_EQ(0, dm->memcpy_to_dm(dm, 64, host, sizeof(host)));

    const unsigned rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                            IBV_ACCESS_REMOTE_READ;
    EXPECT_EQ(nullptr, vctx->reg_dm_mr(m_pd, dm, 0, 4096, rights))
            << "an MR on device memory is zero-based";
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, vctx->reg_dm_mr(m_pd, dm, 2048, 4096,
                                       rights | IBV_ACCESS_ZERO_BASED));
    struct ibv_mr *dmr = vctx->reg_dm_mr(m_pd, dm, 0, 4096,
                                         rights | IBV_ACCESS_ZERO_BASED);
    ASSERT_NE(nullptr, dmr) << strerror(errno);
    EXPECT_EQ(EBUSY, vctx->free_dm(dm)) << "an MR is on it";

    /* the device reads it (a send from offset 64) and writes it (a write
     * to offset 512, zero-based) */
    connect_pair();
    struct ibv_mr *bmr = reg(back, sizeof(back));
    struct ibv_mr *hmr = reg(host, sizeof(host));
    struct ibv_sge from_dm = {64, sizeof(host), dmr->lkey};
    struct ibv_sge to_back = {reinterpret_cast<uintptr_t>(back), sizeof(back),
                              bmr->lkey};
    ASSERT_EQ(0, post_recv(m_b, 1, &to_back));
    ASSERT_EQ(0, post_send(m_a, IBV_WR_SEND, 2, &from_dm, 1,
                           IBV_SEND_SIGNALED));
    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(2u, wcs.size());
    EXPECT_EQ(0, memcmp(host, back, sizeof(host)));

    struct ibv_sge from_host = {reinterpret_cast<uintptr_t>(host),
                                sizeof(host), hmr->lkey};
    host[0] = 99;
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 3, &from_host, 1,
                           IBV_SEND_SIGNALED, 512, dmr->rkey));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    uint64_t seen[4] = {};
    ASSERT_EQ(0, dm->memcpy_from_dm(seen, dm, 512, sizeof(seen)));
    EXPECT_EQ(0, memcmp(host, seen, sizeof(host)));

    EXPECT_EQ(0, uct_ib_glue->dereg_mr(dmr));
    EXPECT_EQ(0, vctx->free_dm(dm));
}

/* XRC: an initiator names the target's SRQ in each send; the target takes
 * the WQE from that SRQ (of its domain) and the receive completes on the
 * SRQ's CQ; an SRQ of another domain is refused as an invalid request */
TEST_F(test_emu_engine_verbs, xrc_sends_reach_the_srq_they_name)
{
    auto *vctx = verbs_get_ctx(m_ctx);
    struct ibv_xrcd_init_attr xattr = {};
    uint64_t word = 7, back = 0;

    xattr.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
    xattr.fd        = -1;
    struct ibv_xrcd *xrcd  = vctx->open_xrcd(m_ctx, &xattr);
    struct ibv_xrcd *other = vctx->open_xrcd(m_ctx, &xattr);
    ASSERT_NE(nullptr, xrcd);
    ASSERT_NE(nullptr, other);

    struct ibv_cq *srq_cq = uct_ib_glue->create_cq(m_ctx, 16, nullptr,
                                                   nullptr, 0);
    ASSERT_NE(nullptr, srq_cq);
    auto make_srq = [&](struct ibv_xrcd *x) {
        struct ibv_srq_init_attr_ex sattr = {};

        sattr.attr.max_wr  = 8;
        sattr.attr.max_sge = 1;
        sattr.comp_mask    = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
                             IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
        sattr.srq_type     = IBV_SRQT_XRC;
        sattr.pd           = m_pd;
        sattr.xrcd         = x;
        sattr.cq           = srq_cq;
        return vctx->create_srq_ex(m_ctx, &sattr);
    };
    struct ibv_srq *xsrq = make_srq(xrcd), *foreign = make_srq(other);
    ASSERT_NE(nullptr, xsrq);
    ASSERT_NE(nullptr, foreign);
    uint32_t srqn = 0, foreign_srqn = 0;
    ASSERT_EQ(0, vctx->get_srq_num(xsrq, &srqn));
    ASSERT_EQ(0, vctx->get_srq_num(foreign, &foreign_srqn));
    EXPECT_EQ(EBUSY, vctx->close_xrcd(xrcd)) << "an SRQ is in it";

    /* the target: a domain, no PD, no queues; the initiator: send only */
    struct ibv_qp_init_attr_ex tattr = {};
    tattr.qp_type   = IBV_QPT_XRC_RECV;
    tattr.comp_mask = IBV_QP_INIT_ATTR_XRCD;
    tattr.xrcd      = xrcd;
    struct ibv_qp *tgt = vctx->create_qp_ex(m_ctx, &tattr);
    ASSERT_NE(nullptr, tgt) << strerror(errno);
    struct ibv_qp_init_attr iattr = {};
    iattr.send_cq          = m_cq;
    iattr.qp_type          = IBV_QPT_XRC_SEND;
    iattr.cap.max_send_wr  = 8;
    iattr.cap.max_send_sge = 1;
    struct ibv_qp *ini = uct_ib_glue->create_qp(m_pd, &iattr);
    ASSERT_NE(nullptr, ini) << strerror(errno);

    struct ibv_qp_attr attr = {};
    attr.qp_state        = IBV_QPS_INIT;
    attr.port_num        = 1;
    attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    const int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                     IBV_QP_ACCESS_FLAGS;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(tgt, &attr, init));
    ASSERT_EQ(0, uct_ib_glue->modify_qp(ini, &attr, init));
    attr                        = {};
    attr.qp_state               = IBV_QPS_RTR;
    attr.path_mtu               = IBV_MTU_1024;
    attr.max_dest_rd_atomic     = 1;
    attr.min_rnr_timer          = 1;
    attr.ah_attr.is_global      = 1;
    attr.ah_attr.port_num       = 1;
    attr.ah_attr.grh.dgid       = gid_of(m_ctx, 1, 3);
    attr.ah_attr.grh.sgid_index = 3;
    attr.ah_attr.grh.hop_limit  = 64;
    const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    attr.dest_qp_num = ini->qp_num;
    EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(tgt, &attr, rtr))
            << "a target needs its responder resources";
    ASSERT_EQ(0, uct_ib_glue->modify_qp(tgt, &attr, rtr |
                                        IBV_QP_MAX_DEST_RD_ATOMIC |
                                        IBV_QP_MIN_RNR_TIMER));
    attr.dest_qp_num = tgt->qp_num;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(ini, &attr, rtr |
                                        IBV_QP_MAX_DEST_RD_ATOMIC |
                                        IBV_QP_MIN_RNR_TIMER))
            << "an initiator's responder attributes are ignored, as the "
               "kernel ignores them";
    attr           = {};
    attr.qp_state  = IBV_QPS_RTS;
    attr.timeout   = 14;
    attr.retry_cnt = 7;
    attr.rnr_retry = 7;
    attr.max_rd_atomic = 1;
    const int rts = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                    IBV_QP_MAX_QP_RD_ATOMIC;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(ini, &attr, rts));
    ASSERT_EQ(0, uct_ib_glue->modify_qp(tgt, &attr, rts))
            << "a target's requester attributes are ignored";

    struct ibv_mr *mr  = reg(&word, 8);
    struct ibv_mr *bmr = reg(&back, 8);
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&word), 8, mr->lkey};
    struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(&back), 8, bmr->lkey};
    struct ibv_recv_wr rwr = {}, *bad_r = nullptr;
    rwr.wr_id   = 77;
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    ASSERT_EQ(0, uct_ib_glue->post_srq_recv(xsrq, &rwr, &bad_r));
    EXPECT_EQ(EINVAL, uct_ib_glue->post_recv(tgt, &rwr, &bad_r))
            << "a target's receives are its SRQs'";

    auto send = [&](uint32_t to_srqn) {
        struct ibv_send_wr wr = {}, *bad = nullptr;

        wr.wr_id      = 5;
        wr.opcode     = IBV_WR_SEND;
        wr.sg_list    = &sge;
        wr.num_sge    = 1;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.qp_type.xrc.remote_srqn = to_srqn;
        return uct_ib_glue->post_send(ini, &wr, &bad);
    };
    ASSERT_EQ(0, send(srqn));
    uct_ib_emu_engine_run();
    struct ibv_wc wc[4];
    ASSERT_EQ(1, uct_ib_glue->poll_cq(srq_cq, 4, wc)) << "on the SRQ's CQ";
    EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
    EXPECT_EQ(77u, wc[0].wr_id);
    EXPECT_EQ(tgt->qp_num, wc[0].qp_num);
    EXPECT_EQ(7u, back);
    ASSERT_EQ(1, uct_ib_glue->poll_cq(m_cq, 4, wc));
    EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);

    ASSERT_EQ(0, send(foreign_srqn));
    uct_ib_emu_engine_run();
    ASSERT_EQ(1, uct_ib_glue->poll_cq(m_cq, 4, wc));
    EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc[0].status)
            << "an SRQ of another domain";

    EXPECT_EQ(0, uct_ib_glue->destroy_qp(ini));
    EXPECT_EQ(0, uct_ib_glue->destroy_qp(tgt));
    EXPECT_EQ(0, uct_ib_glue->destroy_srq(xsrq));
    EXPECT_EQ(0, uct_ib_glue->destroy_srq(foreign));
    EXPECT_EQ(0, uct_ib_glue->destroy_cq(srq_cq));
    EXPECT_EQ(0, vctx->close_xrcd(xrcd));
    EXPECT_EQ(0, vctx->close_xrcd(other));
}

/* A domain opened on a file is every open of that file's (O_CREAT makes
 * it, O_EXCL refuses it once it exists) */
TEST_F(test_emu_engine_verbs, xrc_domain_of_a_file_is_shared_by_its_opens)
{
    auto *vctx = verbs_get_ctx(m_ctx);
    char path[] = "/tmp/emu-xrcd-XXXXXX";
    int fd      = mkstemp(path);
    ASSERT_GE(fd, 0);
    unlink(path); /* nothing left behind, the inode lives with the fd */

    struct ibv_xrcd_init_attr xattr = {};
    xattr.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
    xattr.fd        = fd;
    xattr.oflags    = 0;
    EXPECT_EQ(nullptr, vctx->open_xrcd(m_ctx, &xattr)) << "no O_CREAT";
    EXPECT_EQ(ENOENT, errno);
    xattr.oflags = O_CREAT;
    struct ibv_xrcd *a = vctx->open_xrcd(m_ctx, &xattr);
    struct ibv_xrcd *b = vctx->open_xrcd(m_ctx, &xattr);
    ASSERT_NE(nullptr, a);
    ASSERT_NE(nullptr, b);
    xattr.oflags = O_CREAT | O_EXCL;
    EXPECT_EQ(nullptr, vctx->open_xrcd(m_ctx, &xattr));
    EXPECT_EQ(EEXIST, errno);

    /* an SRQ through one handle serves a target through the other */
    struct ibv_cq *srq_cq = uct_ib_glue->create_cq(m_ctx, 16, nullptr,
                                                   nullptr, 0);
    struct ibv_srq_init_attr_ex sattr = {};
    sattr.attr.max_wr  = 8;
    sattr.attr.max_sge = 1;
    sattr.comp_mask    = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
                         IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
    sattr.srq_type     = IBV_SRQT_XRC;
    sattr.pd           = m_pd;
    sattr.xrcd         = a;
    sattr.cq           = srq_cq;
    struct ibv_srq *xsrq = vctx->create_srq_ex(m_ctx, &sattr);
    ASSERT_NE(nullptr, xsrq);
    EXPECT_EQ(0, vctx->close_xrcd(b)) << "b holds nothing itself";

    EXPECT_EQ(0, uct_ib_glue->destroy_srq(xsrq));
    EXPECT_EQ(0, uct_ib_glue->destroy_cq(srq_cq));
    EXPECT_EQ(0, vctx->close_xrcd(a));
    ::close(fd);
}

/* Memory windows, type 1: ibv_bind_mw posts the bind on a QP of the PD and
 * takes the next key; remote writes through the window reach its range
 * only, and its MR cannot go while the window is bound */
TEST_F(test_emu_engine_verbs, type_1_window_grants_its_range_only)
{
    auto *ops = &m_ctx->ops;
    struct ibv_device_attr dattr;
    uint64_t src = 0x5566778899aabbccull, buf[2] = {};

    ASSERT_EQ(0, uct_ib_glue->query_device(m_ctx, &dattr));
    EXPECT_TRUE(dattr.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
    EXPECT_GT(dattr.max_mw, 0);

    connect_pair();
    struct ibv_mr *smr = reg(&src, 8);
    struct ibv_mr *mr  = uct_ib_glue->reg_mr(m_pd, buf, sizeof(buf),
                                             IBV_ACCESS_LOCAL_WRITE |
                                             IBV_ACCESS_MW_BIND);
    ASSERT_NE(nullptr, mr);
    struct ibv_mw *mw = ops->alloc_mw(m_pd, IBV_MW_TYPE_1);
    ASSERT_NE(nullptr, mw);
    const uint32_t first_key = mw->rkey;

    struct ibv_mw_bind bind = {};
    bind.wr_id                     = 31;
    bind.send_flags                = IBV_SEND_SIGNALED;
    bind.bind_info.mr              = mr;
    bind.bind_info.addr            = reinterpret_cast<uintptr_t>(&buf[0]);
    bind.bind_info.length          = 8;
    bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
    ASSERT_EQ(0, ops->bind_mw(m_b, mw, &bind));
    EXPECT_NE(first_key, mw->rkey) << "a bind takes the window's next key";
    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(IBV_WC_BIND_MW, wcs[0].opcode);
    EXPECT_EQ(31u, wcs[0].wr_id);
    EXPECT_EQ(EBUSY, uct_ib_glue->dereg_mr(mr)) << "a window is bound to it";

    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&src), 8, smr->lkey};
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 1, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&buf[0]), mw->rkey));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(src, buf[0]);

    /* the MR's own key never granted remote writes; beyond the window is
     * refused too */
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 2, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&buf[1]), mw->rkey));
    wcs = poll();
    ASSERT_FALSE(wcs.empty());
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, of(wcs, m_a).at(0).status);
    EXPECT_EQ(0u, buf[1]);

    EXPECT_EQ(0, ops->dealloc_mw(mw));
    EXPECT_EQ(0, uct_ib_glue->dereg_mr(mr)) << "free once the window went";
}

/* Type 2: bound by the program's own work request to one QP, invalidated
 * by the peer's SEND_WITH_INV or a LOCAL_INV */
TEST_F(test_emu_engine_verbs, type_2_window_bound_and_invalidated)
{
    auto *ops = &m_ctx->ops;
    uint64_t src = 42, buf = 0, rbuf = 0;

    connect_pair();
    struct ibv_mr *smr = reg(&src, 8);
    struct ibv_mr *rmr = reg(&rbuf, 8);
    struct ibv_mr *mr  = uct_ib_glue->reg_mr(m_pd, &buf, 8,
                                             IBV_ACCESS_LOCAL_WRITE |
                                             IBV_ACCESS_MW_BIND);
    ASSERT_NE(nullptr, mr);
    struct ibv_mw *mw = ops->alloc_mw(m_pd, IBV_MW_TYPE_2);
    ASSERT_NE(nullptr, mw);

    auto bind_on_b = [&](uint64_t wr_id) {
        struct ibv_send_wr wr = {}, *bad = nullptr;

        wr.wr_id                             = wr_id;
        wr.opcode                            = IBV_WR_BIND_MW;
        wr.send_flags                        = IBV_SEND_SIGNALED;
        wr.bind_mw.mw                        = mw;
        wr.bind_mw.rkey                      = ibv_inc_rkey(mw->rkey);
        wr.bind_mw.bind_info.mr              = mr;
        wr.bind_mw.bind_info.addr            = reinterpret_cast<uintptr_t>(&buf);
        wr.bind_mw.bind_info.length          = 8;
        wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
        EXPECT_EQ(0, uct_ib_glue->post_send(m_b, &wr, &bad));
        mw->rkey = wr.bind_mw.rkey;
        return mw->rkey;
    };

    uint32_t key = bind_on_b(41);
    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_BIND_MW, wcs[0].opcode);
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);

    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&src), 8, smr->lkey};
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 1, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&buf), key));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(42u, buf);

    /* the peer invalidates it with its send */
    struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(&rbuf), 8, rmr->lkey};
    ASSERT_EQ(0, post_recv(m_b, 5, &rsge));
    struct ibv_send_wr inv = {}, *bad = nullptr;
    inv.wr_id           = 2;
    inv.opcode          = IBV_WR_SEND_WITH_INV;
    inv.sg_list         = &sge;
    inv.num_sge         = 1;
    inv.send_flags      = IBV_SEND_SIGNALED;
    inv.invalidate_rkey = key;
    ASSERT_EQ(0, uct_ib_glue->post_send(m_a, &inv, &bad));
    wcs = poll();
    std::vector<struct ibv_wc> recv = of(wcs, m_b);
    ASSERT_EQ(1u, recv.size());
    EXPECT_EQ(IBV_WC_SUCCESS, recv[0].status);
    EXPECT_TRUE(recv[0].wc_flags & IBV_WC_WITH_INV);
    EXPECT_EQ(key, recv[0].invalidated_rkey);

    /* bound again, then invalidated locally */
    key = bind_on_b(43);
    struct ibv_send_wr linv = {};
    linv.wr_id           = 44;
    linv.opcode          = IBV_WR_LOCAL_INV;
    linv.send_flags      = IBV_SEND_SIGNALED;
    linv.invalidate_rkey = key;
    ASSERT_EQ(0, uct_ib_glue->post_send(m_b, &linv, &bad));
    wcs = poll();
    ASSERT_EQ(2u, wcs.size());
    EXPECT_EQ(IBV_WC_BIND_MW, wcs[0].opcode);
    EXPECT_EQ(IBV_WC_LOCAL_INV, wcs[1].opcode);
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[1].status);

    /* an invalidated window grants nothing */
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 3, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&buf), key));
    wcs = poll();
    ASSERT_FALSE(wcs.empty());
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, of(wcs, m_a).at(0).status);

    EXPECT_EQ(0, ops->dealloc_mw(mw));
    EXPECT_EQ(0, uct_ib_glue->dereg_mr(mr));
}

/* UC: sends (of several packets) and writes arrive, with immediates; the
 * sender completes when its packets have left, answered by nothing */
TEST_F(test_emu_engine_verbs, uc_sends_and_writes_arrive)
{
    std::vector<uint8_t> src(3000), dst(3000), target(3000);

    connect_uc_pair();
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = uint8_t(i * 7 + 1);
    }
    struct ibv_mr *smr = reg(src.data(), src.size());
    struct ibv_mr *dmr = reg(dst.data(), dst.size());
    struct ibv_mr *tmr = reg(target.data(), target.size());
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(src.data()), 3000,
                          smr->lkey};
    struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(dst.data()), 3000,
                           dmr->lkey};

    ASSERT_EQ(0, post_recv(m_b, 7, &rsge));
    ASSERT_EQ(0, post_send(m_a, IBV_WR_SEND_WITH_IMM, 1, &sge, 1,
                           IBV_SEND_SIGNALED));
    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(2u, wcs.size());
    std::vector<struct ibv_wc> recv = of(wcs, m_b), sent = of(wcs, m_a);
    ASSERT_EQ(1u, recv.size());
    EXPECT_EQ(IBV_WC_RECV, recv[0].opcode);
    EXPECT_EQ(3000u, recv[0].byte_len) << "three 1024-byte packets";
    EXPECT_EQ(htobe32(0xabcd), recv[0].imm_data);
    EXPECT_EQ(src, dst);
    ASSERT_EQ(1u, sent.size());
    EXPECT_EQ(IBV_WC_SUCCESS, sent[0].status);

    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 2, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(target.data()),
                           tmr->rkey));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(src, target);
}

/* UC loses what it cannot deliver without a word: no receive WQE, a key the
 * responder refuses, a QP of another transport; the sender completes, both
 * QPs stay usable. Reads and atomics are not UC operations. */
TEST_F(test_emu_engine_verbs, uc_drops_what_it_cannot_deliver)
{
    uint64_t word = 5, target = 0, back = 0;

    connect_uc_pair();
    struct ibv_mr *mr  = reg(&word, 8);
    struct ibv_mr *tmr = reg(&target, 8);
    struct ibv_mr *bmr = reg(&back, 8);
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&word), 8, mr->lkey};
    struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(&back), 8, bmr->lkey};

    /* no receive posted: an RC responder would answer RNR */
    ASSERT_EQ(0, post_send(m_a, IBV_WR_SEND, 1, &sge, 1, IBV_SEND_SIGNALED));
    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status) << "the sender cannot tell";
    EXPECT_EQ(m_a->qp_num, wcs[0].qp_num);

    /* a write to a key the responder does not have */
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 2, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&target),
                           tmr->rkey + 0x100));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(0u, target);

    /* both QPs still carry the next message */
    ASSERT_EQ(0, post_recv(m_b, 9, &rsge));
    word = 6;
    ASSERT_EQ(0, post_send(m_a, IBV_WR_SEND, 3, &sge, 1, IBV_SEND_SIGNALED));
    wcs = poll();
    ASSERT_EQ(2u, wcs.size());
    for (const struct ibv_wc &wc : wcs) {
        EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
    }
    EXPECT_EQ(6u, back);

    /* an RC QP takes none of a UC QP's packets */
    struct ibv_qp *rc = create_qp();
    to_rts(rc, m_a->qp_num);
    uct_ib_emu_counters_reset();
    struct ibv_qp *uc = create_qp(nullptr, IBV_QPT_UC);
    uc_to_rts(uc, rc->qp_num);
    ASSERT_EQ(0, post_send(uc, IBV_WR_RDMA_WRITE, 4, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&target), tmr->rkey));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(0u, target);
    EXPECT_EQ(1u, uct_ib_emu_counters().drops[UCT_IB_EMU_DROP_NO_QP]);

    /* a read is no UC operation: a local QP operation error */
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_READ, 5, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&target), tmr->rkey));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wcs[0].status);
}

/* The SRQ limit (ibv_modify_srq, the drop-in's): armed, the first receive
 * that leaves fewer WQEs than the limit raises IBV_EVENT_SRQ_LIMIT_REACHED
 * once and disarms it; a resize is refused as mlx5 refuses it */
TEST_F(test_emu_engine_verbs, srq_limit_event)
{
    const uct_ib_emu_dropin_ops_t &dropin = uct_ib_emu_dropin_ops;
    struct ibv_srq_init_attr sattr = {};
    struct ibv_srq_attr attr       = {};
    struct ibv_async_event ev;

    sattr.attr.max_wr  = 15;
    sattr.attr.max_sge = 1;
    m_srq = uct_ib_glue->create_srq(m_pd, &sattr);
    ASSERT_NE(nullptr, m_srq);
    connect_pair(m_srq);

    ASSERT_EQ(0, dropin.query_srq(m_srq, &attr));
    EXPECT_EQ(15u, attr.max_wr);
    EXPECT_EQ(0u, attr.srq_limit) << "not armed";
    attr.srq_limit = 16;
    EXPECT_EQ(EINVAL, dropin.modify_srq(m_srq, &attr, IBV_SRQ_LIMIT));
    attr.max_wr = 31;
    EXPECT_EQ(EINVAL, dropin.modify_srq(m_srq, &attr, IBV_SRQ_MAX_WR));
    attr.srq_limit = 3;
    ASSERT_EQ(0, dropin.modify_srq(m_srq, &attr, IBV_SRQ_LIMIT));

    uint64_t rbuf[6] = {}, v = 0;
    struct ibv_mr *mr = reg(rbuf, sizeof(rbuf));
    struct ibv_mr *mv = reg(&v, 8);
    struct ibv_sge ssge = {reinterpret_cast<uintptr_t>(&v), 8, mv->lkey};
    for (unsigned i = 0; i < 6; ++i) {
        struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(&rbuf[i]), 8,
                               mr->lkey};
        struct ibv_recv_wr wr = {}, *bad = nullptr;
        wr.wr_id   = i;
        wr.sg_list = &rsge;
        wr.num_sge = 1;
        ASSERT_EQ(0, uct_ib_glue->post_srq_recv(m_srq, &wr, &bad)) << i;
    }

    /* 6 posted: the 3rd receive leaves 3, the 4th leaves 2 < 3 */
    for (unsigned i = 0; i < 5; ++i) {
        ASSERT_EQ(0, post_send(m_a, IBV_WR_SEND, i, &ssge, 1,
                               IBV_SEND_SIGNALED));
        ASSERT_EQ(2u, poll().size()) << "send " << i;
        const bool raised = async_readable();

        EXPECT_EQ(i == 3, raised) << "after receive " << i;
        if (raised) {
            ASSERT_EQ(0, uct_ib_glue->get_async_event(m_ctx, &ev));
            EXPECT_EQ(IBV_EVENT_SRQ_LIMIT_REACHED, ev.event_type);
            EXPECT_EQ(m_srq, ev.element.srq);
            uct_ib_glue->ack_async_event(&ev);
            EXPECT_EQ(1u, m_srq->events_completed) << "as libibverbs counts";
        }
    }

    ASSERT_EQ(0, dropin.query_srq(m_srq, &attr));
    EXPECT_EQ(0u, attr.srq_limit) << "the event disarmed it";
}

TEST_F(test_emu_engine_verbs, remote_access_error_then_flush)
{
    connect_pair();
    uint64_t word = 0, rbuf = 0;
    struct ibv_mr *mr = reg(&word, 8);
    struct ibv_mr *mr_r = reg(&rbuf, 8);
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&word), 8, mr->lkey};
    struct ibv_sge rsge = {reinterpret_cast<uintptr_t>(&rbuf), 8, mr_r->lkey};

    ASSERT_EQ(0, post_recv(m_b, 0xb1, &rsge));
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 1, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&word), mr->rkey + 1));
    ASSERT_EQ(0, post_send(m_a, IBV_WR_SEND, 2, &sge, 1, 0));

    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(3u, wcs.size());
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wcs[0].status);
    EXPECT_EQ(1u, wcs[0].wr_id);
    EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wcs[1].status);
    EXPECT_EQ(2u, wcs[1].wr_id) << "an unsignaled request flushes too";
    EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wcs[2].status);
    EXPECT_EQ(0xb1u, wcs[2].wr_id) << "the responder's receive flushes";
    EXPECT_EQ(m_b->qp_num, wcs[2].qp_num);
}

TEST_F(test_emu_engine_verbs, reset_makes_the_queues_usable_again)
{
    connect_pair();
    uint64_t word = 0;
    struct ibv_mr *mr = reg(&word, 8);
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&word), 8, mr->lkey};
    struct ibv_qp_attr attr = {};

    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 1, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&word), mr->rkey));
    ASSERT_EQ(1u, poll().size());

    attr.qp_state = IBV_QPS_RESET;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(m_a, &attr, IBV_QP_STATE));
    attr.qp_state = IBV_QPS_RESET;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(m_b, &attr, IBV_QP_STATE));
    to_rts(m_a, m_b->qp_num);
    to_rts(m_b, m_a->qp_num);

    word = 0;
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 2, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&word), mr->rkey));
    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(2u, wcs[0].wr_id);
}

TEST_F(test_emu_engine_verbs, rkey_of_an_indirect_mkey_bound_by_umr)
{
    connect_pair();
    std::vector<uint8_t> piece1(100, 0), piece2(100, 0), src(150);
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = static_cast<uint8_t>(i + 1);
    }
    struct ibv_mr *mr1 = reg(piece1.data(), piece1.size());
    struct ibv_mr *mr2 = reg(piece2.data(), piece2.size());
    struct ibv_mr *mrs = reg(src.data(), src.size());

    /* the UMR QP (send ops, connected to itself) binds pieces 1 and 2 */
    struct ibv_qp *umr_qp = create_umr_qp(m_ctx, m_pd, m_cq);
    ASSERT_NE(nullptr, umr_qp);
    m_qps.push_back(umr_qp);
    to_rts(umr_qp, umr_qp->qp_num);

    struct mlx5dv_mkey_init_attr mattr = {};
    mattr.pd           = m_pd;
    mattr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
    mattr.max_entries  = 4;
    struct mlx5dv_mkey *mkey = uct_ib_glue->mlx5dv_create_mkey(&mattr);
    ASSERT_NE(nullptr, mkey);

    struct ibv_qp_ex *qpx    = uct_ib_glue->qp_to_qp_ex(umr_qp);
    struct mlx5dv_qp_ex *dvx = uct_ib_glue->mlx5dv_qp_ex_from_ibv_qp_ex(qpx);
    struct ibv_sge klm[2]    = {
        {reinterpret_cast<uintptr_t>(piece1.data()), 100, mr1->lkey},
        {reinterpret_cast<uintptr_t>(piece2.data()), 100, mr2->lkey}
    };
    uct_ib_glue->wr_start(qpx);
    qpx->wr_id    = 0x77;
    qpx->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
    uct_ib_glue->wr_mr_list(dvx, mkey, IBV_ACCESS_LOCAL_WRITE |
                            IBV_ACCESS_REMOTE_WRITE, 2, klm);
    ASSERT_EQ(0, uct_ib_glue->wr_complete(qpx));
    std::vector<struct ibv_wc> wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    ASSERT_EQ(IBV_WC_SUCCESS, wcs[0].status);

    /* zero-based offset 50..199 of the mkey: the end of piece 1, then
     * all of piece 2 */
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(src.data()), 150,
                          mrs->lkey};
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 1, &sge, 1,
                           IBV_SEND_SIGNALED, 50, mkey->rkey));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_TRUE(std::equal(src.begin(), src.begin() + 50,
                           piece1.begin() + 50));
    EXPECT_TRUE(std::equal(src.begin() + 50, src.end(), piece2.begin()));
    EXPECT_EQ(0, piece1[49]);

    /* one byte past the mkey's 200 */
    sge.length = 2;
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 2, &sge, 1,
                           IBV_SEND_SIGNALED, 199, mkey->rkey));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wcs[0].status);

    m_qps.pop_back();
    EXPECT_EQ(0, uct_ib_glue->destroy_qp(umr_qp));
    EXPECT_EQ(0, uct_ib_glue->mlx5dv_destroy_mkey(mkey));
}

TEST_F(test_emu_engine_verbs, completion_channel_fires_once_per_arm)
{
    use_channel();
    connect_pair();
    uint64_t word = 0;
    struct ibv_mr *mr = reg(&word, 8);
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&word), 8, mr->lkey};
    auto write = [&](uint64_t id) {
        ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, id, &sge, 1,
                               IBV_SEND_SIGNALED,
                               reinterpret_cast<uintptr_t>(&word), mr->rkey));
    };

    write(1);
    EXPECT_EQ(1u, poll().size());
    EXPECT_FALSE(readable(0)) << "an event without an arm";

    ASSERT_EQ(0, uct_ib_glue->req_notify_cq(m_cq, 0));
    uct_ib_emu_engine_run();
    EXPECT_FALSE(readable(0)) << "an event without a new CQE";

    write(2);
    write(3);
    uct_ib_emu_engine_run();
    ASSERT_TRUE(readable(0));

    struct ibv_cq *ev_cq = nullptr;
    void *ev_ctx         = nullptr;
    ASSERT_EQ(0, uct_ib_glue->get_cq_event(m_channel, &ev_cq, &ev_ctx));
    EXPECT_EQ(m_cq, ev_cq);
    EXPECT_EQ(this, ev_ctx);
    EXPECT_FALSE(readable(0)) << "two CQEs, one arm: one event";
    EXPECT_EQ(2u, poll().size());
    EXPECT_EQ(EBUSY, uct_ib_glue->destroy_cq(m_cq)) << "an event not acked";
    EXPECT_EQ(0u, m_cq->comp_events_completed);
    uct_ib_glue->ack_cq_events(m_cq, 1);
    EXPECT_EQ(1u, m_cq->comp_events_completed) << "counted as libibverbs does";

    /* an mlx5dv user arms through the doorbell record: sn 1, next CQE, at
     * its consumer index */
    struct mlx5dv_cq dvcq = dv_cq(m_cq);
    uint32_t ci           = be32toh(dvcq.dbrec[0]) & 0xffffff;
    __atomic_store_n(&dvcq.dbrec[1], htobe32((1u << 28) | ci),
                     __ATOMIC_RELEASE);
    write(4);
    uct_ib_emu_engine_run();
    EXPECT_TRUE(readable(0));
    ASSERT_EQ(0, uct_ib_glue->get_cq_event(m_channel, &ev_cq, &ev_ctx));
    uct_ib_glue->ack_cq_events(m_cq, 1);
    EXPECT_EQ(1u, poll().size());
}

TEST_F(test_emu_engine_verbs, sleeper_wakes_when_the_thread_completes)
{
    use_channel();
    connect_pair();
    ASSERT_EQ(UCS_OK, uct_ib_emu_engine_set_step_mode(false));
    uint64_t word = 0;
    struct ibv_mr *mr = reg(&word, 8);
    struct ibv_sge sge = {reinterpret_cast<uintptr_t>(&word), 8, mr->lkey};
    struct ibv_wc wc;

    ASSERT_EQ(0, uct_ib_glue->req_notify_cq(m_cq, 0));
    ASSERT_EQ(0, post_send(m_a, IBV_WR_RDMA_WRITE, 9, &sge, 1,
                           IBV_SEND_SIGNALED,
                           reinterpret_cast<uintptr_t>(&word), mr->rkey));
    ASSERT_TRUE(wait_for([&] { return readable(10); }, 10.0,
                         [] { return std::string("no completion event"); }));

    struct ibv_cq *ev_cq = nullptr;
    void *ev_ctx         = nullptr;
    ASSERT_EQ(0, uct_ib_glue->get_cq_event(m_channel, &ev_cq, &ev_ctx));
    uct_ib_glue->ack_cq_events(ev_cq, 1);
    ASSERT_EQ(1, uct_ib_glue->poll_cq(m_cq, 1, &wc));
    EXPECT_EQ(9u, wc.wr_id);
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

} // namespace
