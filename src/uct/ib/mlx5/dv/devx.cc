#include "devx.h"
#include "prm.h"

#include <cerrno>
#include <cstdio>
#include <string>

namespace {

using namespace uct_mlx5_prm;

/* The one place a failed DevX call becomes a status. Firmware statuses:
 * the caller's input or the object's state is wrong -> INVALID_PARAM (as a
 * QP in the wrong state is for the connect helper), the device is out of
 * something -> NO_RESOURCE, the object is busy -> BUSY, the command is not
 * implemented -> UNSUPPORTED; the device itself failed -> IO_ERROR. */
ucs_status_t devx_status(int err, const void *out)
{
    if (err == ENOMEM) {
        return UCS_ERR_NO_MEMORY;
    } else if (err == EOPNOTSUPP) {
        return UCS_ERR_UNSUPPORTED;
    } else if (err != EREMOTEIO) {
        return UCS_ERR_IO_ERROR;
    }

    switch (uct_ib_mlx5_devx_out_status(out)) {
    case 0x02: /* bad opcode */
        return UCS_ERR_UNSUPPORTED;
    case 0x03: /* bad parameter */
    case 0x05: /* bad resource */
    case 0x09: /* bad resource state */
    case 0x0a: /* bad index */
    case 0x10: /* bad QP state */
    case 0x30: /* bad packet */
    case 0x40: /* bad size */
    case 0x50: /* bad input length */
    case 0x51: /* bad output length */
        return UCS_ERR_INVALID_PARAM;
    case 0x06: /* resource busy */
        return UCS_ERR_BUSY;
    case 0x08: /* exceeded limit */
    case 0x0f: /* no resources */
        return UCS_ERR_NO_RESOURCE;
    default:   /* internal error, bad system state, unknown */
        return UCS_ERR_IO_ERROR;
    }
}

std::string qpn_str(const uct_ib_mlx5_devx_cmd_desc_t *desc)
{
    char buf[32];

    if (desc->qpn == UCT_IB_MLX5_DEVX_NO_QPN) {
        return "";
    }
    snprintf(buf, sizeof(buf), " qp 0x%x", desc->qpn);
    return buf;
}

ucs_status_t check(const char *call, int ret, int err, const void *out,
                   const uct_ib_mlx5_devx_cmd_desc_t *desc)
{
    if ((ret == 0) && (uct_ib_mlx5_devx_out_status(out) == 0)) {
        return UCS_OK;
    }

    if (ret == 0) {
        err = EREMOTEIO; /* status set on a call that claims success */
    }

    errno = err;
    ucs_log(desc->fail_level, "%s(%s, %s%s) failed: %m, status 0x%x syndrome 0x%x",
            call, desc->dev_name, desc->what, qpn_str(desc).c_str(),
            uct_ib_mlx5_devx_out_status(out), uct_ib_mlx5_devx_out_syndrome(out));
    return devx_status(err, out);
}

} // namespace

uint8_t uct_ib_mlx5_devx_out_status(const void *out)
{
    return uct_mlx5_prm_get<mbox_out::status>(static_cast<const uint32_t*>(out));
}

uint32_t uct_ib_mlx5_devx_out_syndrome(const void *out)
{
    return uct_mlx5_prm_get<mbox_out::syndrome>(static_cast<const uint32_t*>(out));
}

ucs_status_t uct_ib_mlx5_devx_general_cmd(struct ibv_context *ctx,
                                          const void *in, size_t inlen,
                                          void *out, size_t outlen,
                                          const uct_ib_mlx5_devx_cmd_desc_t *desc)
{
    int ret = uct_ib_glue->devx_general_cmd(ctx, in, inlen, out, outlen);

    return check("mlx5dv_devx_general_cmd", ret, ret, out, desc);
}

ucs_status_t uct_ib_mlx5_devx_obj_create(struct ibv_context *ctx,
                                         const void *in, size_t inlen,
                                         void *out, size_t outlen,
                                         const uct_ib_mlx5_devx_cmd_desc_t *desc,
                                         struct mlx5dv_devx_obj **obj_p)
{
    struct mlx5dv_devx_obj *obj;
    ucs_status_t           status;

    obj    = uct_ib_glue->devx_obj_create(ctx, in, inlen, out, outlen);
    status = check("mlx5dv_devx_obj_create", (obj == nullptr), errno, out,
                   desc);
    if (status != UCS_OK) {
        if (obj != nullptr) {
            uct_ib_mlx5_devx_obj_destroy(obj, desc);
        }
        return status;
    }

    *obj_p = obj;
    return UCS_OK;
}

ucs_status_t uct_ib_mlx5_devx_obj_modify(struct mlx5dv_devx_obj *obj,
                                         const void *in, size_t inlen,
                                         void *out, size_t outlen,
                                         const uct_ib_mlx5_devx_cmd_desc_t *desc)
{
    int ret = uct_ib_glue->devx_obj_modify(obj, in, inlen, out, outlen);

    return check("mlx5dv_devx_obj_modify", ret, ret, out, desc);
}

ucs_status_t uct_ib_mlx5_devx_obj_query(struct mlx5dv_devx_obj *obj,
                                        const void *in, size_t inlen,
                                        void *out, size_t outlen,
                                        const uct_ib_mlx5_devx_cmd_desc_t *desc)
{
    int ret = uct_ib_glue->devx_obj_query(obj, in, inlen, out, outlen);

    return check("mlx5dv_devx_obj_query", ret, ret, out, desc);
}

ucs_status_t uct_ib_mlx5_devx_obj_destroy(struct mlx5dv_devx_obj *obj,
                                          const uct_ib_mlx5_devx_cmd_desc_t *desc)
{
    int ret = uct_ib_glue->devx_obj_destroy(obj);

    if (ret != 0) {
        errno = ret;
        ucs_warn("mlx5dv_devx_obj_destroy(%s, %s%s) failed: %m", desc->dev_name,
                 desc->what, qpn_str(desc).c_str());
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}
