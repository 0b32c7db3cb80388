/*
 * The mlx5 side of the ib memory domain: with UCX_IB_MLX5_UMR=y, a device
 * opened with DevX whose HCA can build indirect mkeys through UMR exports
 * its registrations through uct_ib_mlx5_umr (umr.h). Plugged into the ib md
 * at load; any other device keeps the MRs' own keys.
 */
#include "hca_caps.h"
#include "umr.h"

#include <ucs/debug/log_def.h>

namespace {

ucs_status_t uct_ib_mlx5_md_open_mem_export(const uct_ib_md *md,
                                            uct_ib_md_mem_export **export_p)
{
    uct_ib_mlx5_hca_caps_t   caps;
    uct_ib_mlx5_umr_config_t config;
    uct_ib_mlx5_umr          *umr;
    ucs_status_t             status;

    if (!md->dev->devx()) {
        ucs_diag("%s: UCX_IB_MLX5_UMR: not an mlx5 device opened with DevX, "
                 "registrations keep their own keys", md->dev->name());
        return UCS_ERR_UNSUPPORTED;
    }

    status = uct_ib_mlx5_query_hca_caps(md->dev->context(), md->dev->name(),
                                        UCS_LOG_LEVEL_DIAG, &caps);
    if (status != UCS_OK) {
        return UCS_ERR_UNSUPPORTED; /* logged */
    }

    if (!caps.umr_indirect_mkey) {
        ucs_diag("%s: UCX_IB_MLX5_UMR: the HCA cannot build indirect mkeys "
                 "with UMR, registrations keep their own keys",
                 md->dev->name());
        return UCS_ERR_UNSUPPORTED;
    }

    if (!(md->config.mlx5_umr_timeout < 3600.0)) {
        ucs_error("%s: UCX_IB_MLX5_UMR_TIMEOUT must be a finite time below "
                  "one hour, UMR export disabled", md->dev->name());
        return UCS_ERR_INVALID_PARAM;
    }

    config.timeout            = md->config.mlx5_umr_timeout;
    config.gid_index          = md->config.gid_index;
    config.roce_subnets       = &md->config.roce_subnets;
    config.hca_force_loopback = uct_ib_mlx5_hca_caps_force_loopback(&caps);

    status = uct_ib_mlx5_umr::create(*md->dev, md->pd, &config, &umr);
    if (status != UCS_OK) {
        return status;
    }

    *export_p = umr;
    return UCS_OK;
}

__attribute__((constructor)) void uct_ib_mlx5_md_register()
{
    uct_ib_md_register_mem_export(uct_ib_mlx5_md_open_mem_export);
}

} // namespace
