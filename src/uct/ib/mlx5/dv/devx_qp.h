/*
 * An RC QP created with DevX: its WQ buffer and doorbell record live in one
 * registered umem, doorbells go to a UAR page, completions to verbs CQs.
 * The object owns the QP, the umem and the buffer.
 */
#ifndef UCT_IB_MLX5_DEVX_QP_H_
#define UCT_IB_MLX5_DEVX_QP_H_

#include "qp_cmd.h"

#include <uct/ib/base/ib_device.h>

#include <string>

typedef struct uct_ib_mlx5_devx_qp_attr {
    uint32_t pdn;
    uint32_t cqn_snd;
    uint32_t cqn_rcv;
    uint32_t uar_page;
    unsigned sq_wqe_cnt;      /* WQEBBs, a power of two */
    unsigned rq_wqe_cnt;      /* a power of two, 0 for no receive queue */
    uint32_t srqn;            /* without a receive queue: this SRQ, if not 0 */
} uct_ib_mlx5_devx_qp_attr_t;

class uct_ib_mlx5_devx_qp {
public:
    [[nodiscard]] static ucs_status_t
    create(const uct_ib_device &dev, uint8_t port_num,
           const uct_ib_mlx5_devx_qp_attr_t *attr, uct_ib_mlx5_devx_qp **qp_p);
    ~uct_ib_mlx5_devx_qp();

    uct_ib_mlx5_devx_qp(const uct_ib_mlx5_devx_qp&)            = delete;
    uct_ib_mlx5_devx_qp &operator=(const uct_ib_mlx5_devx_qp&) = delete;

    uint32_t            qpn() const { return m_qpn; }
    uint8_t             port_num() const { return m_port_num; }
    const uct_ib_device &dev() const { return m_dev; }
    /* "mlx5_0:1" */
    const char          *dev_name() const { return m_dev_name.c_str(); }
    /* The state after the last successful transition. */
    unsigned            state() const { return m_state; }
    /* The send queue the device reads: sq_wqe_cnt() 64-byte basic blocks
     * at sq_buf(), and the doorbell records (dbrec()[0] receive, [1] send) */
    void                *sq_buf() const { return m_sq_buf; }
    unsigned            sq_wqe_cnt() const { return m_sq_wqe_cnt; }
    uint32_t            *dbrec() const { return m_dbrec; }

    /* False once a transition failed in firmware and the QP was not reset
     * since: only reinit() or destroy remain. */
    bool                usable() const { return m_usable; }

    [[nodiscard]] ucs_status_t rst2init(uint16_t pkey_index,
                                        const uct_ib_mlx5_rdma_access_t *access);

    /** INIT2RTR with @a in; on a firmware failure the QP becomes unusable. */
    [[nodiscard]] ucs_status_t init2rtr(uct_ib_mlx5_init2rtr_in_t *in);

    /** RTR2RTS with @a in; on a firmware failure the QP becomes unusable. */
    [[nodiscard]] ucs_status_t rtr2rts(uct_ib_mlx5_rtr2rts_in_t *in);

    /** Back to INIT from any state (2RST, then RST2INIT with the pkey and
     *  access of the last RST2INIT), usable again; unusable if that fails. */
    [[nodiscard]] ucs_status_t reinit();

    [[nodiscard]] ucs_status_t to_error();

    /** The QP context as firmware reports it. */
    [[nodiscard]] ucs_status_t query(uct_ib_mlx5_query_qp_out_t *out) const;

private:
    uct_ib_mlx5_devx_qp(const uct_ib_device &dev, uint8_t port_num);

    ucs_status_t modify(void *in, size_t inlen, const char *transition,
                        unsigned new_state);

    const uct_ib_device     &m_dev;
    const uint8_t           m_port_num;
    const std::string       m_dev_name;
    uint32_t                m_qpn      = 0;
    unsigned                m_state    = UCT_MLX5_QP_STATE_RST;
    bool                    m_usable   = true;
    uint16_t                m_pkey_index = 0;
    uct_ib_mlx5_rdma_access_t m_access = {};
    void                    *m_buf     = nullptr;
    size_t                  m_buf_len  = 0;
    void                    *m_sq_buf  = nullptr;
    unsigned                m_sq_wqe_cnt = 0;
    uint32_t                *m_dbrec   = nullptr;
    struct mlx5dv_devx_umem *m_umem    = nullptr;
    struct mlx5dv_devx_obj  *m_obj     = nullptr;
};

#endif
