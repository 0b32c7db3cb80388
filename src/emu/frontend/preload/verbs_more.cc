/*
 * The libibverbs entry points unmodified programs call beyond those our
 * library uses. Without a definition here they would run the system
 * library's code, which reaches the provider through the private part of
 * a verbs_context that the model does not fill, and crash. Served from the
 * model: the GID table, the fork state, the P_Key index, whether a QP's
 * data lands in order, registration with an IOVA, an SRQ's limit, a CQ's
 * size, an address handle from an InfiniBand completion. Refused as
 * rdma-core refuses an operation its provider lacks (EOPNOTSUPP), because
 * the model has not got them: multicast groups, ECE, an address handle
 * from a RoCE completion, re-registration, dma-buf registration and
 * objects imported from another process.
 */
#include <emu/frontend/preload/preload.h>

#include <cerrno>
#include <cstring>

/* verbs.h wraps it in a macro of the same name: define the symbol itself */
#undef ibv_reg_mr_iova


namespace {

/* Every valid entry of every port, at @a entries with a stride of
 * @a entry_size: their count, or a negative errno */
ssize_t gid_table(const uct_ib_glue_ops_t *glue, struct ibv_context *context,
                  uint8_t *entries, size_t max_entries, size_t entry_size)
{
    struct ibv_device_attr dev_attr;
    size_t count = 0;
    int ret;

    ret = glue->query_device(context, &dev_attr);
    if (ret != 0) {
        return -ret;
    }

    for (uint32_t port = 1; port <= dev_attr.phys_port_cnt; ++port) {
        struct ibv_port_attr port_attr;

        ret = glue->query_port(context, static_cast<uint8_t>(port),
                               &port_attr);
        if (ret != 0) {
            return -ret;
        }

        for (int index = 0; index < port_attr.gid_tbl_len; ++index) {
            struct ibv_gid_entry entry;

            ret = glue->query_gid_ex(context, port, index, &entry, 0);
            if (ret == ENODATA) {
                continue; /* an empty slot */
            } else if (ret != 0) {
                return -ret;
            } else if (count == max_entries) {
                return -EINVAL; /* the caller's array is too small */
            }
            memcpy(entries + count * entry_size, &entry, sizeof(entry));
            ++count;
        }
    }

    return static_cast<ssize_t>(count);
}

} // namespace


PRELOAD_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
                                            struct ibv_gid_entry *entries,
                                            size_t max_entries, uint32_t flags,
                                            size_t entry_size)
{
    const uct_ib_glue_ops_t *glue = preload_glue_ops();

    if (glue == nullptr) {
        return -ENOSYS;
    }
    if ((flags != 0) || (max_entries == 0) ||
        (entry_size < sizeof(struct ibv_gid_entry))) {
        return -EINVAL;
    }

    return gid_table(glue, context, reinterpret_cast<uint8_t*>(entries),
                     max_entries, entry_size);
}

/* The emulated device's memory is the process's: a child breaks nothing the
 * parent registered, with or without ibv_fork_init() */
PRELOAD_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
    return (preload_glue_ops() == nullptr) ? IBV_FORK_DISABLED :
                                             IBV_FORK_UNNEEDED;
}

/* The device promises no order of data within a message (its cap
 * qp_data_in_order is 0), so neither does a QP: 0, with or without
 * IBV_QUERY_QP_DATA_IN_ORDER_RETURN_CAPS */
PRELOAD_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp * /* qp */,
                                              enum ibv_wr_opcode /* op */,
                                              uint32_t /* flags */)
{
    return 0;
}

PRELOAD_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
                                              size_t length, uint64_t iova,
                                              int access)
{
    return preload_reg_mr_iova(pd, addr, length, iova, access);
}

/* The index of @a pkey in the port's P_Key table (the full member bit
 * included), or -1 with errno ENOENT */
PRELOAD_EXPORT int ibv_get_pkey_index(struct ibv_context *context,
                                      uint8_t port_num, __be16 pkey)
{
    const uct_ib_glue_ops_t *glue            = preload_glue_ops();
    const uct_ib_emu_dropin_ops_t *dropin    = preload_dropin_ops();
    struct ibv_port_attr port_attr;
    __be16 entry;
    int ret;

    if ((glue == nullptr) || (dropin == nullptr)) {
        return -1;
    }

    ret = glue->query_port(context, port_num, &port_attr);
    if (ret != 0) {
        errno = ret;
        return -1;
    }

    for (int index = 0; index < port_attr.pkey_tbl_len; ++index) {
        if ((dropin->query_pkey(context, port_num, index, &entry) == 0) &&
            (entry == pkey)) {
            return index;
        }
    }

    errno = ENOENT;
    return -1;
}


/* An SRQ's limit: armed, it raises IBV_EVENT_SRQ_LIMIT_REACHED on the
 * context's async_fd when the posted WQEs fall below it */
PRELOAD_EXPORT int ibv_modify_srq(struct ibv_srq *srq,
                                  struct ibv_srq_attr *srq_attr,
                                  int srq_attr_mask)
{
    const uct_ib_emu_dropin_ops_t *dropin = preload_dropin_ops();

    return (dropin == nullptr) ? ENOSYS :
           dropin->modify_srq(srq, srq_attr, srq_attr_mask);
}

PRELOAD_EXPORT int ibv_query_srq(struct ibv_srq *srq,
                                 struct ibv_srq_attr *srq_attr)
{
    const uct_ib_emu_dropin_ops_t *dropin = preload_dropin_ops();

    return (dropin == nullptr) ? ENOSYS : dropin->query_srq(srq, srq_attr);
}


PRELOAD_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
    const uct_ib_emu_dropin_ops_t *dropin = preload_dropin_ops();

    return (dropin == nullptr) ? ENOSYS : dropin->resize_cq(cq, cqe);
}

PRELOAD_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
                                void *addr, size_t length, int access)
{
    const uct_ib_emu_dropin_ops_t *dropin = preload_dropin_ops();

    if (dropin == nullptr) {
        errno = ENOSYS;
        return IBV_REREG_MR_ERR_INPUT;
    }
    return dropin->rereg_mr(mr, flags, pd, addr, length, access);
}

namespace {

/* The index of @a gid of @a type on the port, or -1 */
int find_gid_index(const uct_ib_glue_ops_t *glue, struct ibv_context *context,
                   uint8_t port_num, int table_len, const union ibv_gid &gid,
                   enum ibv_gid_type type)
{
    struct ibv_gid_entry entry;

    for (int index = 0; index < table_len; ++index) {
        if ((glue->query_gid_ex(context, port_num, index, &entry, 0) == 0) &&
            (entry.gid_type == type) &&
            (memcmp(&entry.gid, &gid, sizeof(entry.gid)) == 0)) {
            return index;
        }
    }
    return -1;
}

/* The IP version of a received GRH area on RoCE, as libibverbs judges it:
 * 4 when the last 20 bytes are an IPv4 header whose checksum holds, 6 when
 * the first word says IPv6, else 0 */
int grh_ip_version(const struct ibv_grh *grh)
{
    const uint8_t *ip = reinterpret_cast<const uint8_t*>(grh) + 20;
    uint32_t sum      = 0;

    if (ip[0] == 0x45) {
        for (int i = 0; i < 20; i += 2) {
            sum += (uint32_t(ip[i]) << 8) | ip[i + 1];
        }
        while (sum >> 16) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        if (sum == 0xffff) {
            return 4;
        }
    }
    return ((be32toh(grh->version_tclass_flow) >> 28) == 6) ? 6 : 0;
}

} // namespace

/* The address back to the sender of a received datagram: on InfiniBand
 * its LID and SL, the path bits it was sent to, and with a GRH its GID, our
 * GID's index, its flow label and traffic class; on RoCE its GID from the
 * packet's IP header (RoCEv2 over IPv4: the addresses of the IPv4 header,
 * our RoCEv2 GID of the destination address; an IPv6-form GRH: its GIDs,
 * our RoCEv1 GID, as libibverbs resolves one) */
PRELOAD_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
                                       uint8_t port_num, struct ibv_wc *wc,
                                       struct ibv_grh *grh,
                                       struct ibv_ah_attr *ah_attr)
{
    const uct_ib_glue_ops_t *glue = preload_glue_ops();
    struct ibv_port_attr port_attr;
    union ibv_gid sgid, dgid;
    enum ibv_gid_type type;
    uint32_t flow = 0;
    uint8_t tclass;
    int ret, index;

    if (glue == nullptr) {
        return ENOSYS;
    }
    ret = glue->query_port(context, port_num, &port_attr);
    if (ret != 0) {
        return ret;
    }

    memset(ah_attr, 0, sizeof(*ah_attr));
    ah_attr->sl            = wc->sl;
    ah_attr->src_path_bits = wc->dlid_path_bits;
    ah_attr->port_num      = port_num;
    if (port_attr.link_layer == IBV_LINK_LAYER_INFINIBAND) {
        ah_attr->dlid = wc->slid;
        if (!(wc->wc_flags & IBV_WC_GRH)) {
            return 0;
        }
        sgid   = grh->dgid;
        dgid   = grh->sgid;
        type   = IBV_GID_TYPE_IB;
        flow   = be32toh(grh->version_tclass_flow);
        tclass = (flow >> 20) & 0xff;
    } else {
        if (!(wc->wc_flags & IBV_WC_GRH)) {
            return EINVAL; /* every RoCE datagram has its IP header */
        }
        switch (grh_ip_version(grh)) {
        case 4: {
            const uint8_t *ip = reinterpret_cast<const uint8_t*>(grh) + 20;

            memset(&sgid, 0, sizeof(sgid));
            sgid.raw[10] = sgid.raw[11] = 0xff;
            dgid = sgid;
            memcpy(&sgid.raw[12], ip + 16, 4); /* our address */
            memcpy(&dgid.raw[12], ip + 12, 4); /* the sender's */
            type   = IBV_GID_TYPE_ROCE_V2;
            tclass = ip[1];
            break;
        }
        case 6:
            sgid   = grh->dgid;
            dgid   = grh->sgid;
            type   = IBV_GID_TYPE_ROCE_V1;
            flow   = be32toh(grh->version_tclass_flow);
            tclass = (flow >> 20) & 0xff;
            break;
        default:
            return EPROTONOSUPPORT;
        }
        ah_attr->sl = 0; /* the CQE's sl is the packet type here */
    }

    index = find_gid_index(glue, context, port_num, port_attr.gid_tbl_len,
                           sgid, type);
    if (index < 0) {
        return EINVAL; /* the datagram was not sent to a GID of this port */
    }
    ah_attr->is_global         = 1;
    ah_attr->grh.dgid          = dgid;
    ah_attr->grh.sgid_index    = static_cast<uint8_t>(index);
    ah_attr->grh.flow_label    = flow & 0xfffff;
    ah_attr->grh.traffic_class = tclass;
    ah_attr->grh.hop_limit     = 0xff;
    return 0;
}

PRELOAD_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
                                                    struct ibv_wc *wc,
                                                    struct ibv_grh *grh,
                                                    uint8_t port_num)
{
    const uct_ib_glue_ops_t *glue = preload_glue_ops();
    struct ibv_ah_attr ah_attr;
    int ret;

    if (glue == nullptr) {
        return nullptr;
    }
    ret = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &ah_attr);
    if (ret != 0) {
        errno = ret;
        return nullptr;
    }
    return glue->create_ah(pd, &ah_attr);
}


/* ------------------------------------------------------------------------
 * What the model has not got
 */

namespace {

template <typename T>
T *refuse_ptr()
{
    errno = EOPNOTSUPP;
    return nullptr;
}

} // namespace

PRELOAD_EXPORT int ibv_attach_mcast(struct ibv_qp * /* qp */,
                                    const union ibv_gid * /* gid */,
                                    uint16_t /* lid */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int ibv_detach_mcast(struct ibv_qp * /* qp */,
                                    const union ibv_gid * /* gid */,
                                    uint16_t /* lid */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int ibv_set_ece(struct ibv_qp * /* qp */,
                               struct ibv_ece * /* ece */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT int ibv_query_ece(struct ibv_qp * /* qp */,
                                 struct ibv_ece * /* ece */)
{
    return EOPNOTSUPP;
}

PRELOAD_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd * /* pd */,
                                                uint64_t /* offset */,
                                                size_t /* length */,
                                                uint64_t /* iova */,
                                                int /* fd */,
                                                int /* access */)
{
    return refuse_ptr<struct ibv_mr>();
}

/* Objects shared from another process's context: the model's contexts
 * are the process's own */
PRELOAD_EXPORT struct ibv_context *ibv_import_device(int /* cmd_fd */)
{
    return refuse_ptr<struct ibv_context>();
}

PRELOAD_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context * /* context */,
                                            uint32_t /* pd_handle */)
{
    return refuse_ptr<struct ibv_pd>();
}

PRELOAD_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd * /* pd */,
                                            uint32_t /* mr_handle */)
{
    return refuse_ptr<struct ibv_mr>();
}

PRELOAD_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context * /* context */,
                                            uint32_t /* dm_handle */)
{
    return refuse_ptr<struct ibv_dm>();
}

/* nothing was imported: nothing to give back */
PRELOAD_EXPORT void ibv_unimport_pd(struct ibv_pd * /* pd */)
{
}

PRELOAD_EXPORT void ibv_unimport_mr(struct ibv_mr * /* mr */)
{
}

PRELOAD_EXPORT void ibv_unimport_dm(struct ibv_dm * /* dm */)
{
}
