/*
 * DevX command wrappers: every firmware command of the transport goes
 * through one of these, which check both the return code and the firmware
 * status, and log errno, status and syndrome at a level the caller chooses
 * (a capability probe fails quietly, a connect loudly).
 */
#ifndef UCT_IB_MLX5_DEVX_H_
#define UCT_IB_MLX5_DEVX_H_

#include <uct/api/tools/ib_glue.h>
#include <ucs/debug/log_def.h>

#include <cstdint>

#define UCT_IB_MLX5_DEVX_NO_QPN UINT32_MAX

/* Where and what, for log lines: "mlx5_0:1", "INIT2RTR" and qp 0x1a.
 * Formatted only when a command fails: connects stay cheap. */
typedef struct uct_ib_mlx5_devx_cmd_desc {
    const char      *dev_name;
    const char      *what;
    uint32_t        qpn;          /* UCT_IB_MLX5_DEVX_NO_QPN if none */
    ucs_log_level_t fail_level;
} uct_ib_mlx5_devx_cmd_desc_t;

/** Firmware status of a command output, 0 on success. */
uint8_t uct_ib_mlx5_devx_out_status(const void *out);

/** Firmware syndrome of a command output. */
uint32_t uct_ib_mlx5_devx_out_syndrome(const void *out);

[[nodiscard]] ucs_status_t
uct_ib_mlx5_devx_general_cmd(struct ibv_context *ctx, const void *in,
                             size_t inlen, void *out, size_t outlen,
                             const uct_ib_mlx5_devx_cmd_desc_t *desc);

[[nodiscard]] ucs_status_t
uct_ib_mlx5_devx_obj_create(struct ibv_context *ctx, const void *in,
                            size_t inlen, void *out, size_t outlen,
                            const uct_ib_mlx5_devx_cmd_desc_t *desc,
                            struct mlx5dv_devx_obj **obj_p);

[[nodiscard]] ucs_status_t
uct_ib_mlx5_devx_obj_modify(struct mlx5dv_devx_obj *obj, const void *in,
                            size_t inlen, void *out, size_t outlen,
                            const uct_ib_mlx5_devx_cmd_desc_t *desc);

[[nodiscard]] ucs_status_t
uct_ib_mlx5_devx_obj_query(struct mlx5dv_devx_obj *obj, const void *in,
                           size_t inlen, void *out, size_t outlen,
                           const uct_ib_mlx5_devx_cmd_desc_t *desc);

/** Destroy; a failure is a warning with errno (the object is lost to us). */
ucs_status_t uct_ib_mlx5_devx_obj_destroy(struct mlx5dv_devx_obj *obj,
                                          const uct_ib_mlx5_devx_cmd_desc_t *desc);

#endif
