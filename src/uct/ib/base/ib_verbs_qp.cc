#include "ib_verbs_qp.h"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cerrno>
#include <new>

ucs_status_t uct_ib_verbs_qp::create(const uct_ib_device &dev, uint8_t port_num,
                                     struct ibv_pd *pd, struct ibv_cq *send_cq,
                                     struct ibv_cq *recv_cq, unsigned sq_len,
                                     unsigned rq_len, uct_ib_verbs_qp **qp_p)
{
    struct ibv_qp_init_attr attr = {};

    attr.send_cq          = send_cq;
    attr.recv_cq          = recv_cq;
    attr.qp_type          = IBV_QPT_RC;
    attr.cap.max_send_wr  = sq_len;
    attr.cap.max_recv_wr  = rq_len;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    return create(dev, port_num, pd, &attr, qp_p);
}

ucs_status_t uct_ib_verbs_qp::create(const uct_ib_device &dev, uint8_t port_num,
                                     struct ibv_pd *pd, struct ibv_cq *send_cq,
                                     struct ibv_cq *recv_cq, struct ibv_srq *srq,
                                     unsigned sq_len, unsigned max_inline,
                                     unsigned max_sge, uct_ib_verbs_qp **qp_p)
{
    struct ibv_qp_init_attr attr = {};

    attr.send_cq             = send_cq;
    attr.recv_cq             = recv_cq;
    attr.srq                 = srq;
    attr.qp_type             = IBV_QPT_RC;
    attr.cap.max_send_wr     = sq_len;
    attr.cap.max_send_sge    = max_sge;
    attr.cap.max_inline_data = max_inline;
    return create(dev, port_num, pd, &attr, qp_p);
}

ucs_status_t uct_ib_verbs_qp::create(const uct_ib_device &dev, uint8_t port_num,
                                     struct ibv_pd *pd,
                                     struct ibv_qp_init_attr *attr,
                                     uct_ib_verbs_qp **qp_p)
{
    const unsigned  sq_len = attr->cap.max_send_wr;
    const unsigned  rq_len = attr->cap.max_recv_wr;
    uct_ib_verbs_qp *qp;

    qp = new (std::nothrow) uct_ib_verbs_qp(dev, port_num);
    if (qp == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    qp->m_qp = uct_ib_glue->create_qp(pd, attr);
    if (qp->m_qp == nullptr) {
        ucs_error("create_qp(%s, RC sq %u rq %u) failed: %m",
                  dev.port_name(port_num).c_str(), sq_len, rq_len);
        delete qp;
        return UCS_ERR_IO_ERROR;
    }

    *qp_p = qp;
    return UCS_OK;
}

uct_ib_verbs_qp::~uct_ib_verbs_qp()
{
    int ret;

    if (m_qp == nullptr) {
        return;
    }

    ret = uct_ib_glue->destroy_qp(m_qp);
    if (ret != 0) {
        errno = ret;
        ucs_warn("destroy_qp(%s, qp 0x%x) failed: %m",
                 m_dev.port_name(m_port_num).c_str(), m_qp->qp_num);
    }
}

ucs_status_t uct_ib_verbs_qp::modify(struct ibv_qp_attr *attr, int mask,
                                     const char *to)
{
    int ret = uct_ib_glue->modify_qp(m_qp, attr, mask);

    if (ret != 0) {
        errno = ret;
        ucs_error("modify_qp(%s, qp 0x%x) to %s failed: %m",
                  m_dev.port_name(m_port_num).c_str(), m_qp->qp_num, to);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t uct_ib_verbs_qp::rst2init(uint16_t pkey_index)
{
    struct ibv_qp_attr attr = {};

    attr.qp_state        = IBV_QPS_INIT;
    attr.pkey_index      = pkey_index;
    attr.port_num        = m_port_num;
    attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                           IBV_ACCESS_REMOTE_ATOMIC;
    return modify(&attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                         IBV_QP_ACCESS_FLAGS, "INIT");
}

ucs_status_t uct_ib_verbs_qp::connect(const uct_ib_verbs_qp_connect_params_t *params)
{
    struct ibv_qp_attr attr = {};
    ucs_status_t       status;

    attr.qp_state              = IBV_QPS_RTR;
    attr.ah_attr               = params->ah_attr;
    attr.ah_attr.port_num      = m_port_num;
    attr.path_mtu              = params->path_mtu;
    attr.dest_qp_num           = params->dest_qp_num;
    attr.rq_psn                = 0;
    attr.max_dest_rd_atomic    = std::max(params->max_rd_atomic, 1u);
    attr.min_rnr_timer         = params->min_rnr_timer;
    status = modify(&attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                           IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                    "RTR");
    if (status != UCS_OK) {
        return status;
    }

    attr                   = {};
    attr.qp_state          = IBV_QPS_RTS;
    attr.sq_psn            = 0;
    attr.max_rd_atomic     = std::max(params->max_rd_atomic, 1u);
    attr.timeout           = params->timeout;
    attr.retry_cnt         = params->retry_cnt;
    attr.rnr_retry         = params->rnr_retry;
    return modify(&attr, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
                         IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY,
                  "RTS");
}
