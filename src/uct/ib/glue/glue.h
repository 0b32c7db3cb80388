/*
 * The rdma-core glue table: every call this project makes into libibverbs and
 * libmlx5 goes through one of these slots. The default table calls rdma-core
 * and does nothing else; the emulated device provides another one.
 *
 * Each slot has the exact signature and error convention of the rdma-core
 * call it is named after (see shared rdma-core facts): P = pointer or NULL
 * with errno, E = 0 or a positive errno, M1 = 0 or -1 with errno.
 * No slot is ever NULL: an absent feature is a stub returning EOPNOTSUPP.
 */
#ifndef UCT_IB_GLUE_H_
#define UCT_IB_GLUE_H_

#include <ucs/type/status.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <stdbool.h>

BEGIN_C_DECLS

#define UCT_IB_GLUE_VERSION 1

typedef struct uct_ib_glue_ops {
    unsigned    version;   /* UCT_IB_GLUE_VERSION */
    const char  *name;     /* "rdma-core" or "emulated" */
    int         emulated;  /* non-zero: devices are not real hardware */

    /* devices */
    struct ibv_device  **(*get_device_list)(int *num_devices);           /* P */
    void               (*free_device_list)(struct ibv_device **list);
    const char         *(*get_device_name)(struct ibv_device *device);
    struct ibv_context *(*open_device)(struct ibv_device *device);       /* P */
    int                (*close_device)(struct ibv_context *context);     /* M1 */
    int                (*query_device)(struct ibv_context *context,
                                       struct ibv_device_attr *attr);    /* E */
    int                (*query_port)(struct ibv_context *context,
                                     uint8_t port_num,
                                     struct ibv_port_attr *attr);        /* E */
    int                (*query_gid_ex)(struct ibv_context *context,
                                       uint32_t port_num, uint32_t gid_index,
                                       struct ibv_gid_entry *entry,
                                       uint32_t flags);                  /* E */

    /* protection domain, memory, completion queues, address handles */
    struct ibv_pd *(*alloc_pd)(struct ibv_context *context);             /* P */
    int           (*dealloc_pd)(struct ibv_pd *pd);                      /* E */
    struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
                             int access);                                /* P */
    int           (*dereg_mr)(struct ibv_mr *mr);                        /* E */
    struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
                                void *cq_context,
                                struct ibv_comp_channel *channel,
                                int comp_vector);                        /* P */
    int           (*destroy_cq)(struct ibv_cq *cq);                      /* E */
    int           (*poll_cq)(struct ibv_cq *cq, int num_entries,
                             struct ibv_wc *wc);          /* >= 0, < 0 on error */
    struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
                                struct ibv_ah_attr *attr);               /* P */
    int           (*destroy_ah)(struct ibv_ah *ah);                      /* E */

    /* verbs queue pairs and shared receive queues */
    struct ibv_qp  *(*create_qp)(struct ibv_pd *pd,
                                 struct ibv_qp_init_attr *attr);         /* P */
    int            (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                                int attr_mask);                          /* E */
    int            (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                               int attr_mask,
                               struct ibv_qp_init_attr *init_attr);      /* E */
    int            (*destroy_qp)(struct ibv_qp *qp);                     /* E */
    int            (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
                                struct ibv_send_wr **bad_wr);            /* E */
    int            (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                                struct ibv_recv_wr **bad_wr);            /* E */
    struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
                                  struct ibv_srq_init_attr *attr);       /* P */
    int            (*destroy_srq)(struct ibv_srq *srq);                  /* E */
    int            (*post_srq_recv)(struct ibv_srq *srq,
                                    struct ibv_recv_wr *wr,
                                    struct ibv_recv_wr **bad_wr);        /* E */

    /* mlx5 direct verbs */
    bool               (*mlx5dv_is_supported)(struct ibv_device *device);
    struct ibv_context *(*mlx5dv_open_device)(
                               struct ibv_device *device,
                               struct mlx5dv_context_attr *attr);        /* P */
    int                (*mlx5dv_query_device)(struct ibv_context *context,
                                              struct mlx5dv_context *attrs); /* E */
    int                (*mlx5dv_init_obj)(struct mlx5dv_obj *obj,
                                          uint64_t obj_type);            /* E */
    struct ibv_qp      *(*mlx5dv_create_qp)(
                               struct ibv_context *context,
                               struct ibv_qp_init_attr_ex *qp_attr,
                               struct mlx5dv_qp_init_attr *mlx5_qp_attr); /* P */

    /* DevX */
    int                     (*devx_general_cmd)(struct ibv_context *context,
                                                const void *in, size_t inlen,
                                                void *out, size_t outlen); /* E */
    struct mlx5dv_devx_obj  *(*devx_obj_create)(struct ibv_context *context,
                                                const void *in, size_t inlen,
                                                void *out, size_t outlen); /* P */
    int                     (*devx_obj_query)(struct mlx5dv_devx_obj *obj,
                                              const void *in, size_t inlen,
                                              void *out, size_t outlen); /* E */
    int                     (*devx_obj_modify)(struct mlx5dv_devx_obj *obj,
                                               const void *in, size_t inlen,
                                               void *out, size_t outlen); /* E */
    int                     (*devx_obj_destroy)(struct mlx5dv_devx_obj *obj); /* E */
    struct mlx5dv_devx_umem *(*devx_umem_reg)(struct ibv_context *context,
                                              void *addr, size_t size,
                                              uint32_t access);          /* P */
    int                     (*devx_umem_dereg)(struct mlx5dv_devx_umem *umem); /* E */
    struct mlx5dv_devx_uar  *(*devx_alloc_uar)(struct ibv_context *context,
                                               uint32_t flags);          /* P */
    void                    (*devx_free_uar)(struct mlx5dv_devx_uar *uar);
    int                     (*devx_query_eqn)(struct ibv_context *context,
                                              uint32_t vector,
                                              uint32_t *eqn);            /* E */
} uct_ib_glue_ops_t;

/* The table in use; never NULL. */
extern const uct_ib_glue_ops_t *uct_ib_glue;

/* The table that calls rdma-core. */
extern const uct_ib_glue_ops_t uct_ib_glue_rdma_core_ops;

/**
 * Replace the table in use. Refused (UCS_ERR_BUSY) while any device is open
 * and (UCS_ERR_INVALID_PARAM) if the version differs or a slot is empty.
 * Internal: tests call it directly, users select the emulated device with
 * UCX_IB_GLUE=emulated.
 */
ucs_status_t uct_ib_glue_install(const uct_ib_glue_ops_t *ops);

END_C_DECLS

#endif
