/*
 * A verbs RC QP, the fallback when DevX is not available. Its connect hands
 * the AH attributes to ibv_modify_qp(), where the kernel resolves the
 * destination MAC itself, so it has no stale-L2 problem to solve.
 */
#ifndef UCT_IB_VERBS_QP_H_
#define UCT_IB_VERBS_QP_H_

#include "ib_device.h"

typedef struct uct_ib_verbs_qp_connect_params {
    uint32_t           dest_qp_num;
    struct ibv_ah_attr ah_attr;
    enum ibv_mtu       path_mtu;
    unsigned           max_rd_atomic;
    uint8_t            min_rnr_timer;  /* IB RNR timer code */
    uint8_t            timeout;        /* ack timeout exponent */
    uint8_t            retry_cnt;
    uint8_t            rnr_retry;
} uct_ib_verbs_qp_connect_params_t;

class uct_ib_verbs_qp {
public:
    [[nodiscard]] static ucs_status_t
    create(const uct_ib_device &dev, uint8_t port_num, struct ibv_pd *pd,
           struct ibv_cq *send_cq, struct ibv_cq *recv_cq, unsigned sq_len,
           unsigned rq_len, uct_ib_verbs_qp **qp_p);

    /** The same, receiving from @a srq, with @a max_inline bytes of inline
     *  data and @a max_sge gather entries per send */
    [[nodiscard]] static ucs_status_t
    create(const uct_ib_device &dev, uint8_t port_num, struct ibv_pd *pd,
           struct ibv_cq *send_cq, struct ibv_cq *recv_cq, struct ibv_srq *srq,
           unsigned sq_len, unsigned max_inline, unsigned max_sge,
           uct_ib_verbs_qp **qp_p);
    ~uct_ib_verbs_qp();

    uct_ib_verbs_qp(const uct_ib_verbs_qp&)            = delete;
    uct_ib_verbs_qp &operator=(const uct_ib_verbs_qp&) = delete;

    uint32_t      qpn() const { return m_qp->qp_num; }
    struct ibv_qp *qp() const { return m_qp; }

    /** RESET to INIT with remote read, write and atomic access. */
    [[nodiscard]] ucs_status_t rst2init(uint16_t pkey_index);

    /** INIT to RTR to RTS. */
    [[nodiscard]] ucs_status_t
    connect(const uct_ib_verbs_qp_connect_params_t *params);

private:
    uct_ib_verbs_qp(const uct_ib_device &dev, uint8_t port_num) :
        m_dev(dev), m_port_num(port_num)
    {
    }

    static ucs_status_t create(const uct_ib_device &dev, uint8_t port_num,
                               struct ibv_pd *pd, struct ibv_qp_init_attr *attr,
                               uct_ib_verbs_qp **qp_p);

    ucs_status_t modify(struct ibv_qp_attr *attr, int mask, const char *to);

    const uct_ib_device &m_dev;
    const uint8_t       m_port_num;
    struct ibv_qp       *m_qp = nullptr;
};

#endif
