#include "devx_qp.h"
#include <ucs/sys/math.h>
#include "devx.h"

#include <ucs/debug/log_def.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

constexpr size_t wqebb_size   = 64;
constexpr size_t rq_stride    = 16;  /* one data segment per receive */
constexpr size_t buf_align    = 4096;
constexpr size_t dbrec_size   = 64;

} // namespace

uct_ib_mlx5_devx_qp::uct_ib_mlx5_devx_qp(const uct_ib_device &dev,
                                         uint8_t port_num) :
    m_dev(dev), m_port_num(port_num), m_dev_name(dev.port_name(port_num))
{
}

ucs_status_t uct_ib_mlx5_devx_qp::create(const uct_ib_device &dev,
                                         uint8_t port_num,
                                         const uct_ib_mlx5_devx_qp_attr_t *attr,
                                         uct_ib_mlx5_devx_qp **qp_p)
{
    uct_ib_mlx5_create_qp_params_t params = {};
    uct_ib_mlx5_create_qp_in_t     in;
    uct_ib_mlx5_create_qp_out_t    out;
    uct_ib_mlx5_devx_qp            *qp;
    uct_ib_mlx5_devx_cmd_desc_t    desc;
    size_t                         wq_len;
    ucs_status_t                   status;

    if (!ucs_is_pow2(attr->sq_wqe_cnt) ||
        ((attr->rq_wqe_cnt != 0) && !ucs_is_pow2(attr->rq_wqe_cnt))) {
        ucs_error("%s: queue sizes must be powers of two (sq %u rq %u)",
                  dev.port_name(port_num).c_str(), attr->sq_wqe_cnt,
                  attr->rq_wqe_cnt);
        return UCS_ERR_INVALID_PARAM;
    }

    qp = new (std::nothrow) uct_ib_mlx5_devx_qp(dev, port_num);
    if (qp == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    /* RQ first, then SQ, then the doorbell record on its own line */
    wq_len      = attr->rq_wqe_cnt * rq_stride + attr->sq_wqe_cnt * wqebb_size;
    qp->m_buf_len = ucs_align_up(wq_len, buf_align) + dbrec_size;
    if (posix_memalign(&qp->m_buf, buf_align, qp->m_buf_len) != 0) {
        delete qp;
        return UCS_ERR_NO_MEMORY;
    }
    memset(qp->m_buf, 0, qp->m_buf_len);

    qp->m_umem = uct_ib_glue->devx_umem_reg(dev.context(), qp->m_buf,
                                            qp->m_buf_len,
                                            IBV_ACCESS_LOCAL_WRITE);
    if (qp->m_umem == nullptr) {
        ucs_error("mlx5dv_devx_umem_reg(%s, %zu bytes) failed: %m",
                  qp->dev_name(), qp->m_buf_len);
        delete qp;
        return UCS_ERR_IO_ERROR;
    }

    params.pdn           = attr->pdn;
    params.cqn_snd       = attr->cqn_snd;
    params.cqn_rcv       = attr->cqn_rcv;
    params.uar_page      = attr->uar_page;
    params.log_sq_size   = ucs_ilog2(attr->sq_wqe_cnt);
    params.has_rq        = attr->rq_wqe_cnt != 0;
    params.srqn          = params.has_rq ? 0 : attr->srqn;
    params.log_rq_size   = ucs_ilog2(attr->rq_wqe_cnt);
    params.log_rq_stride = ucs_ilog2(rq_stride / 16);
    params.umem_id       = qp->m_umem->umem_id;
    params.dbr_offset    = ucs_align_up(wq_len, buf_align);
    status = uct_ib_mlx5_build_create_qp(qp->dev_name(), &params, &in);
    if (status != UCS_OK) {
        delete qp;
        return status;
    }

    desc   = {qp->dev_name(), "CREATE_QP", UCT_IB_MLX5_DEVX_NO_QPN,
              UCS_LOG_LEVEL_ERROR};
    status = uct_ib_mlx5_devx_obj_create(dev.context(), in.data(), in.size(),
                                         out.data(), out.size(), &desc,
                                         &qp->m_obj);
    if (status != UCS_OK) {
        delete qp;
        return status;
    }

    qp->m_qpn        = uct_mlx5_prm_get<uct_mlx5_prm::create_qp_out::qpn>(out.data());
    qp->m_sq_buf     = static_cast<uint8_t*>(qp->m_buf) +
                       attr->rq_wqe_cnt * rq_stride;
    qp->m_sq_wqe_cnt = attr->sq_wqe_cnt;
    qp->m_dbrec      = reinterpret_cast<uint32_t*>(
                               static_cast<uint8_t*>(qp->m_buf) +
                               params.dbr_offset);
    ucs_debug("%s: created qp 0x%x (sq %u rq %u)", qp->dev_name(), qp->m_qpn,
              attr->sq_wqe_cnt, attr->rq_wqe_cnt);
    *qp_p = qp;
    return UCS_OK;
}

uct_ib_mlx5_devx_qp::~uct_ib_mlx5_devx_qp()
{
    int ret;

    if (m_obj != nullptr) {
        uct_ib_mlx5_devx_cmd_desc_t desc = {dev_name(), "DESTROY_QP", m_qpn,
                                            UCS_LOG_LEVEL_WARN};
        (void)uct_ib_mlx5_devx_obj_destroy(m_obj, &desc);
    }
    if (m_umem != nullptr) {
        ret = uct_ib_glue->devx_umem_dereg(m_umem);
        if (ret != 0) {
            errno = ret;
            ucs_warn("mlx5dv_devx_umem_dereg(%s) failed: %m", dev_name());
            return; /* the device may still write the buffer: keep it */
        }
    }
    free(m_buf);
}

ucs_status_t uct_ib_mlx5_devx_qp::modify(void *in, size_t inlen,
                                         const char *transition,
                                         unsigned new_state)
{
    uct_ib_mlx5_modify_qp_out_t out;
    uct_ib_mlx5_devx_cmd_desc_t desc = {dev_name(), transition, m_qpn,
                                        UCS_LOG_LEVEL_ERROR};
    ucs_status_t                status;

    if (!m_usable) {
        ucs_error("%s: %s qp 0x%x refused: the QP failed an earlier "
                  "transition and could not be reset", dev_name(), transition,
                  m_qpn);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_ib_mlx5_devx_obj_modify(m_obj, in, inlen, out.data(),
                                         out.size(), &desc);
    if (status != UCS_OK) {
        return status;
    }

    m_state = new_state;
    return UCS_OK;
}

ucs_status_t uct_ib_mlx5_devx_qp::rst2init(uint16_t pkey_index,
                                           const uct_ib_mlx5_rdma_access_t *access)
{
    uct_ib_mlx5_rst2init_in_t in;
    ucs_status_t              status;

    status = uct_ib_mlx5_build_rst2init(dev_name(), m_qpn, m_port_num,
                                        pkey_index, access, &in);
    if (status != UCS_OK) {
        return status;
    }

    status = modify(in.data(), in.size(), "RST2INIT", UCT_MLX5_QP_STATE_INIT);
    if (status == UCS_OK) {
        m_pkey_index = pkey_index;
        m_access     = *access;
    }
    return status;
}

ucs_status_t uct_ib_mlx5_devx_qp::init2rtr(uct_ib_mlx5_init2rtr_in_t *in)
{
    ucs_status_t status = modify(in->data(), in->size(), "INIT2RTR",
                                 UCT_MLX5_QP_STATE_RTR);

    m_usable = (status == UCS_OK);
    return status;
}

ucs_status_t uct_ib_mlx5_devx_qp::rtr2rts(uct_ib_mlx5_rtr2rts_in_t *in)
{
    ucs_status_t status = modify(in->data(), in->size(), "RTR2RTS",
                                 UCT_MLX5_QP_STATE_RTS);

    m_usable = (status == UCS_OK);
    return status;
}

ucs_status_t uct_ib_mlx5_devx_qp::reinit()
{
    uct_ib_mlx5_2rst_in_t in;
    ucs_status_t          status;

    status = uct_ib_mlx5_build_2rst(dev_name(), m_qpn, &in);
    if (status != UCS_OK) {
        return status;
    }

    m_usable = true; /* 2RST is allowed from every state */
    status   = modify(in.data(), in.size(), "2RST", UCT_MLX5_QP_STATE_RST);
    if (status == UCS_OK) {
        status = rst2init(m_pkey_index, &m_access);
    }

    m_usable = (status == UCS_OK);
    return status;
}

ucs_status_t uct_ib_mlx5_devx_qp::to_error()
{
    uct_ib_mlx5_2err_in_t in;
    ucs_status_t          status;

    status = uct_ib_mlx5_build_2err(dev_name(), m_qpn, &in);
    if (status != UCS_OK) {
        return status;
    }
    return modify(in.data(), in.size(), "2ERR", UCT_MLX5_QP_STATE_ERR);
}

ucs_status_t uct_ib_mlx5_devx_qp::query(uct_ib_mlx5_query_qp_out_t *out) const
{
    uct_ib_mlx5_query_qp_in_t   in;
    uct_ib_mlx5_devx_cmd_desc_t desc = {dev_name(), "QUERY_QP", m_qpn,
                                        UCS_LOG_LEVEL_ERROR};

    ucs_status_t                status;

    status = uct_ib_mlx5_build_query_qp(dev_name(), m_qpn, &in);
    if (status != UCS_OK) {
        return status;
    }
    return uct_ib_mlx5_devx_obj_query(m_obj, in.data(), in.size(), out->data(),
                                      out->size(), &desc);
}
