/*
 * Get the mlx5 address vector of a UD destination. On RoCE it comes from
 * an address handle created for this lookup only, and destroyed before
 * returning, for the same reason as the RC DEVX connect's: an AH of the
 * md's cache keeps the MAC the kernel resolved when it was created, and a
 * UD endpoint created later to the same GID (a new connection after the
 * peer moved to another MAC) would send where the peer no longer is.
 * InfiniBand addresses have no MAC: they keep using the cache.
 */
static ucs_status_t
uct_ud_mlx5_iface_av(uct_ib_iface_t *iface, struct ibv_ah_attr *ah_attr,
                     const char *usage, struct mlx5_wqe_av *av)
{
    char attr_str[128];
    struct ibv_ah *ah;
    ucs_status_t status;
    int ret;

    if (!uct_ib_iface_is_roce(iface)) {
        status = uct_ib_iface_create_ah(iface, ah_attr, usage, &ah);
        if (status == UCS_OK) {
            uct_ib_mlx5_get_av(ah, av);
        }
        return status;
    }

    ah = ibv_create_ah(uct_ib_iface_md(iface)->pd, ah_attr);
    if (ah == NULL) {
        ret = errno;
        uct_ib_ah_attr_str(attr_str, sizeof(attr_str), ah_attr);
        errno = ret;
        ucs_error(UCT_IB_IFACE_FMT ": ibv_create_ah(%s) for %s failed: %m",
                  UCT_IB_IFACE_ARG(iface), attr_str, usage);
        return (ret == ETIMEDOUT) ? UCS_ERR_ENDPOINT_TIMEOUT :
                                    UCS_ERR_INVALID_ADDR;
    }

    uct_ib_mlx5_get_av(ah, av);

    /* The endpoint has its copy of the address whatever happens to the AH */
    ret = ibv_destroy_ah(ah);
    if (ret != 0) {
        errno = ret;
        ucs_warn("%s: ibv_destroy_ah() of the %s address handle failed: %m",
                 uct_ib_device_name(uct_ib_iface_device(iface)), usage);
    }

    return UCS_OK;
}
