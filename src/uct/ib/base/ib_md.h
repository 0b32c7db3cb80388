/*
 * The IB memory domain: one opened device, its protection domain, memory
 * registration and remote keys. Transports of the ib component open their
 * interfaces on its ports.
 *
 * Memory export: with UCX_IB_MLX5_UMR=y an mlx5 device exports each
 * registration under an indirect mkey that a UMR bound to its MR, instead of
 * the MR's own key (mlx5/dv/umr.h). The mlx5 layer plugs into the md through
 * uct_ib_md_register_mem_export(); when the knob is off, or the device cannot
 * do it, the md keeps the MR's key as before.
 */
#ifndef UCT_IB_MD_H_
#define UCT_IB_MD_H_

#include "ib_device.h"

#include <uct/base/uct_md.h>
#include <ucs/config/types.h>

#define UCT_IB_CONFIG_PREFIX "IB_"

typedef struct uct_ib_md_config {
    uct_md_config_t          super;
    ucs_config_names_array_t net_devices; /* NET_DEVICES: "all" or dev:port */
    int                      devx;        /* MLX5_DEVX: try DevX contexts */
    int                      mlx5_umr;    /* MLX5_UMR: export through UMR */
    double                   mlx5_umr_timeout; /* MLX5_UMR_TIMEOUT, seconds */
    /* The interfaces' GID knobs, for the md's own self-connected QPs */
    unsigned long            gid_index;    /* GID_INDEX */
    ucs_config_names_array_t roce_subnets; /* ROCE_SUBNETS */
    int                      ah_cache;     /* AH_CACHE */
} uct_ib_md_config_t;

/* AH_CACHE: how a DevX connect on RoCE gets its destination's AV */
typedef enum {
    UCT_IB_AH_CACHE_TRANSIENT, /* a transient AH at every connect */
    UCT_IB_AH_CACHE_VALIDATED  /* uct_ib_av_cache (ib_av_cache.h) */
} uct_ib_ah_cache_mode_t;

extern ucs_config_field_t uct_ib_md_config_table[];

struct uct_ib_md;

/*
 * Exports registrations of an md under other remote keys than their MRs'
 * own. Owned by the md, destroyed before its PD.
 */
class uct_ib_md_mem_export {
public:
    virtual ~uct_ib_md_mem_export() = default;

    /**
     * Export @a mr, registered with ibv @a access flags. On success
     * @a rkey_p is the key to pack and @a handle_p what release() takes.
     * On failure the registration keeps the MR's own key: the object has
     * logged anything worth logging, and UCS_ERR_UNSUPPORTED means only
     * that export is not available (any more).
     */
    [[nodiscard]] virtual ucs_status_t export_mr(struct ibv_mr *mr, int access,
                                                 uint32_t *rkey_p,
                                                 void **handle_p) = 0;

    /** Revoke an exported key before its MR is deregistered. */
    virtual void release(void *handle) = 0;
};

/**
 * Opens the export object of @a md (whose config asked for one), or
 * returns UCS_ERR_UNSUPPORTED if its device cannot export; any other error
 * fails the md open.
 */
typedef ucs_status_t (*uct_ib_md_mem_export_open_func_t)(
        const struct uct_ib_md *md, uct_ib_md_mem_export **export_p);

/** Called once, at load, by the layer that implements memory export. */
void uct_ib_md_register_mem_export(uct_ib_md_mem_export_open_func_t open);

class uct_ib_av_cache;

struct uct_ib_md : uct_md {
    uct_ib_device        *dev;
    struct ibv_pd        *pd;
    uct_ib_av_cache      *av_cache;   /* NULL: AH_CACHE=transient */
    uct_ib_md_config_t   config;      /* a private copy */
    uct_ib_md_mem_export *mem_export; /* NULL: MR keys only */
};

/* A registration: the verbs MR and the key packed for remote peers. */
typedef struct uct_ib_mem {
    struct ibv_mr *mr;
    uint32_t      rkey;          /* mr->rkey, or the exported key */
    void          *export_handle; /* non-NULL: rkey is exported */
} uct_ib_mem_t;

extern uct_component_t uct_ib_component;

/**
 * The active ports of @a md that UCX_NET_DEVICES allows and @a accept takes
 * (e.g. "any link layer" or "Ethernet with DevX"), as "mlx5_0:1" devices.
 */
ucs_status_t uct_ib_md_query_tl_devices(uct_md_h md,
                                        bool (*accept)(const uct_ib_md *md,
                                                       uint8_t port_num),
                                        uct_tl_device_resource_t **devices_p,
                                        unsigned *num_devices_p);

/** The port of "mlx5_0:1" in @a md; UCS_ERR_NO_DEVICE if not one of it. */
ucs_status_t uct_ib_md_parse_port(const uct_ib_md *md, const char *dev_name,
                                  uint8_t *port_num_p);

/** Packed remote key: the MR's rkey, twice (access and atomic key). */
uint64_t uct_ib_md_pack_rkey(uint32_t rkey);

#endif
