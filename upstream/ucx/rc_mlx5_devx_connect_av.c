/*
 * Get the address vector of a RoCE DEVX QP connect from an address handle
 * created for this connect only, and destroyed before returning.
 *
 * The address handle cache of the md keeps an AH, and the destination MAC
 * the kernel resolved when creating it, for as long as the md lives; a QP
 * connected later to the same GID would carry that MAC even after the peer
 * moved to another one (NIC replaced, bond failover, VM migration), and
 * never get an ACK. A new AH resolves the MAC again; nothing keeps it after
 * the QPC has taken its address vector.
 */
static ucs_status_t
uct_rc_mlx5_devx_connect_av(uct_ib_iface_t *iface,
                            struct ibv_ah_attr *ah_attr,
                            struct mlx5_wqe_av *av)
{
    char attr_str[128];
    struct ibv_ah *ah;
    int ret;

    ah = ibv_create_ah(uct_ib_iface_md(iface)->pd, ah_attr);
    if (ah == NULL) {
        ret = errno;
        uct_ib_ah_attr_str(attr_str, sizeof(attr_str), ah_attr);
        errno = ret;
        ucs_error(UCT_IB_IFACE_FMT ": ibv_create_ah(%s) for RC DEVX QP "
                  "connect failed: %m", UCT_IB_IFACE_ARG(iface), attr_str);
        return (ret == ETIMEDOUT) ? UCS_ERR_ENDPOINT_TIMEOUT :
                                    UCS_ERR_INVALID_ADDR;
    }

    uct_ib_mlx5_get_av(ah, av);

    /* The QP is connected whatever happens to the AH now */
    ret = ibv_destroy_ah(ah);
    if (ret != 0) {
        errno = ret;
        ucs_warn("%s: ibv_destroy_ah() of the RC DEVX QP connect address "
                 "handle failed: %m",
                 uct_ib_device_name(uct_ib_iface_device(iface)));
    }

    return UCS_OK;
}
