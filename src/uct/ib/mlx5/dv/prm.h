/*
 * mlx5 PRM (firmware command interface) layouts and accessors.
 *
 * Bit numbering follows the PRM: bit 0 is the most significant bit of the
 * first big-endian dword, so a field at bit offset o and width w occupies
 * dword o / 32, bits 31 - (o % 32) down to 32 - (o % 32) - w.
 *
 * Every PRM structure is a namespace inside uct_mlx5_prm holding:
 *  - `layout`: the structure itself, with `size_bits`;
 *  - one type per field, with `offset` and `width` in bits, `owner` (the
 *    layout the field belongs to) and `embedded` (the layout of the embedded
 *    structure for struct/union fields, void otherwise).
 *
 * Fields of embedded structures are addressed with at<>, e.g.
 *   at<init2rtr_qp_in::qpc, qpc::primary_address_path, ads::rlid>
 * and read or written in a dword buffer with uct_mlx5_prm_get/set (fields up
 * to 32 bits that stay within one dword, and dword-aligned 64-bit fields) or
 * uct_mlx5_prm_get_bytes/set_bytes (byte arrays such as GIDs and MACs).
 */
#ifndef UCT_MLX5_DV_PRM_H_
#define UCT_MLX5_DV_PRM_H_

#include <ucs/debug/assert.h>

#include <endian.h>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>


/* Opens a structure: must precede its fields. */
#define UCT_MLX5_PRM_SIZE(_size_bits) \
    struct layout { \
        static constexpr uint32_t size_bits = _size_bits; \
        static_assert(size_bits % 32 == 0, "PRM size must be whole dwords"); \
    }

#define UCT_MLX5_PRM_FIELD(_name, _offset, _width) \
    struct _name { \
        using owner    = layout; \
        using embedded = void; \
        static constexpr uint32_t offset = _offset; \
        static constexpr uint32_t width  = _width; \
        static constexpr const char *name = #_name; \
        static_assert(offset + width <= owner::size_bits, \
                      #_name " does not fit in its structure"); \
    }

/* A field holding the structure (or union) _type of the same namespace. */
#define UCT_MLX5_PRM_EMBED(_name, _offset, _width, _type) \
    struct _name { \
        using owner    = layout; \
        using embedded = ::uct_mlx5_prm::_type::layout; \
        static constexpr uint32_t offset = _offset; \
        static constexpr uint32_t width  = _width; \
        static constexpr const char *name = #_name; \
        static_assert(offset + width <= owner::size_bits, \
                      #_name " does not fit in its structure"); \
        static_assert(width == embedded::size_bits, \
                      #_name " width differs from the size of " #_type); \
    }


namespace uct_mlx5_prm {

/*
 * A field of a structure embedded in Outer: at<A, B, C> is C inside B inside
 * A. Each step must name a field of the structure the previous one embeds.
 */
template <typename Outer, typename Inner, typename... More>
struct at : at<at<Outer, Inner>, More...> {
};

template <typename Outer, typename Inner>
struct at<Outer, Inner> {
    static_assert(std::is_same<typename Outer::embedded,
                               typename Inner::owner>::value,
                  "inner field is not a member of the embedded structure");
    static_assert(Inner::offset + Inner::width <= Outer::width,
                  "inner field does not fit in its container");

    using owner    = typename Outer::owner;
    using embedded = typename Inner::embedded;
    static constexpr uint32_t offset = Outer::offset + Inner::offset;
    static constexpr uint32_t width  = Inner::width;
    static constexpr const char *name = Inner::name;
};


namespace detail {

/* Position of a field accessed as a value: within one dword, or two whole
 * dwords for 64 bits. Shift and mask apply to the (first) dword. */
template <typename F> struct value_field {
    static_assert(F::width > 0, "field has no value bits");
    static_assert((F::width == 64) ? (F::offset % 32 == 0) :
                                     (F::offset % 32 + F::width <= 32),
                  "field straddles a dword (64-bit fields must be dword "
                  "aligned; use the byte accessors for arrays)");

    static constexpr uint32_t index = F::offset / 32;
    static constexpr uint32_t shift =
            ((F::width == 0) || (F::width >= 32)) ?
            0 : 32 - F::offset % 32 - F::width;
    static constexpr uint64_t max   =
            (F::width >= 64) ? UINT64_MAX : (UINT64_C(1) << F::width) - 1;
    static constexpr uint32_t mask  = static_cast<uint32_t>(max << shift);
};

template <typename F> struct byte_field {
    static_assert((F::width > 0) && (F::offset % 8 == 0) &&
                  (F::width % 8 == 0),
                  "byte accessors need a byte-aligned field of whole bytes");

    static constexpr size_t offset = F::offset / 8;
    static constexpr size_t length = F::width / 8;
};

} // namespace detail


template <typename F>
using value_t = std::conditional_t<F::width == 64, uint64_t, uint32_t>;

} // namespace uct_mlx5_prm


/* True when @a value fits in field F */
template <typename F>
constexpr bool uct_mlx5_prm_fits(uint64_t value)
{
    return value <= uct_mlx5_prm::detail::value_field<F>::max;
}

/*
 * Write @a value into field F. A value wider than the field is refused in
 * every build: the buffer is left untouched and the result is false, so a
 * command is never sent with a silently truncated field.
 */
template <typename F>
[[nodiscard]] inline bool uct_mlx5_prm_set(uint32_t *buf, uint64_t value)
{
    using field = uct_mlx5_prm::detail::value_field<F>;
    uint32_t *dw = buf + field::index;

    if constexpr (F::width == 64) {
        dw[0] = htobe32(static_cast<uint32_t>(value >> 32));
        dw[1] = htobe32(static_cast<uint32_t>(value));
    } else {
        if (!uct_mlx5_prm_fits<F>(value)) {
            return false;
        }
        *dw = htobe32((be32toh(*dw) & ~field::mask) |
                      (static_cast<uint32_t>(value) << field::shift));
    }
    return true;
}

template <typename F>
inline uct_mlx5_prm::value_t<F> uct_mlx5_prm_get(const uint32_t *buf)
{
    using field = uct_mlx5_prm::detail::value_field<F>;
    const uint32_t *dw = buf + field::index;

    if constexpr (F::width == 64) {
        return (static_cast<uint64_t>(be32toh(dw[0])) << 32) |
               be32toh(dw[1]);
    } else {
        return (be32toh(*dw) & field::mask) >> field::shift;
    }
}

template <typename F>
inline void uct_mlx5_prm_set_bytes(uint32_t *buf, const void *src)
{
    using field = uct_mlx5_prm::detail::byte_field<F>;

    memcpy(reinterpret_cast<uint8_t*>(buf) + field::offset, src,
           field::length);
}

template <typename F>
inline void uct_mlx5_prm_get_bytes(const uint32_t *buf, void *dst)
{
    using field = uct_mlx5_prm::detail::byte_field<F>;

    memcpy(dst, reinterpret_cast<const uint8_t*>(buf) + field::offset,
           field::length);
}


/*
 * Writes fields into one command buffer and remembers the first value that
 * did not fit, so a builder sets every field and checks once at the end.
 */
class uct_mlx5_prm_writer {
public:
    explicit uct_mlx5_prm_writer(uint32_t *buf) : m_buf(buf)
    {
    }

    template <typename F>
    void set(uint64_t value)
    {
        if (!uct_mlx5_prm_set<F>(m_buf, value) && (m_bad_field == nullptr)) {
            m_bad_field = F::name;
            m_bad_value = value;
            m_bad_width = F::width;
        }
    }

    template <typename F>
    void set_bytes(const void *src)
    {
        uct_mlx5_prm_set_bytes<F>(m_buf, src);
    }

    bool        ok() const { return m_bad_field == nullptr; }
    /* The first field refused, its value and width; valid when !ok() */
    const char  *bad_field() const { return m_bad_field; }
    uint64_t    bad_value() const { return m_bad_value; }
    unsigned    bad_width() const { return m_bad_width; }

private:
    uint32_t   *m_buf;
    const char *m_bad_field = nullptr;
    uint64_t   m_bad_value  = 0;
    unsigned   m_bad_width  = 0;
};


/* Zeroed command buffer for structure S, e.g.
 * uct_mlx5_prm_buf<uct_mlx5_prm::init2rtr_qp_in::layout>. */
template <typename S>
struct uct_mlx5_prm_buf {
    uint32_t dw[S::size_bits / 32] = {};

    uint32_t *data()
    {
        return dw;
    }

    const uint32_t *data() const
    {
        return dw;
    }

    /* In bytes */
    static constexpr size_t size()
    {
        return S::size_bits / 8;
    }
};


enum uct_mlx5_cmd_op_t {
    UCT_MLX5_CMD_OP_QUERY_HCA_CAP   = 0x100,
    UCT_MLX5_CMD_OP_SET_HCA_CAP     = 0x109,
    UCT_MLX5_CMD_OP_CREATE_MKEY     = 0x200,
    UCT_MLX5_CMD_OP_DESTROY_MKEY    = 0x202,
    UCT_MLX5_CMD_OP_CREATE_QP       = 0x500,
    UCT_MLX5_CMD_OP_DESTROY_QP      = 0x501,
    UCT_MLX5_CMD_OP_RST2INIT_QP     = 0x502,
    UCT_MLX5_CMD_OP_INIT2RTR_QP     = 0x503,
    UCT_MLX5_CMD_OP_RTR2RTS_QP      = 0x504,
    UCT_MLX5_CMD_OP_RTS2RTS_QP      = 0x505,
    UCT_MLX5_CMD_OP_SQERR2RTS_QP    = 0x506,
    UCT_MLX5_CMD_OP_2ERR_QP         = 0x507,
    UCT_MLX5_CMD_OP_2RST_QP         = 0x50a,
    UCT_MLX5_CMD_OP_QUERY_QP        = 0x50b,
    UCT_MLX5_CMD_OP_SQD_RTS_QP      = 0x50c,
    UCT_MLX5_CMD_OP_INIT2INIT_QP    = 0x50e,
    UCT_MLX5_CMD_OP_CREATE_SRQ      = 0x700,
    UCT_MLX5_CMD_OP_DESTROY_SRQ     = 0x701,
    UCT_MLX5_CMD_OP_CREATE_XRC_SRQ  = 0x705,
    UCT_MLX5_CMD_OP_DESTROY_XRC_SRQ = 0x706,
    UCT_MLX5_CMD_OP_CREATE_XRQ      = 0x717,
    UCT_MLX5_CMD_OP_CREATE_DCT      = 0x710,
    UCT_MLX5_CMD_OP_DESTROY_DCT     = 0x711,
    UCT_MLX5_CMD_OP_DRAIN_DCT       = 0x712,
    UCT_MLX5_CMD_OP_QUERY_DCT       = 0x713,
    UCT_MLX5_CMD_OP_DESTROY_XRQ     = 0x718,
    UCT_MLX5_CMD_OP_ALLOC_PD        = 0x800,
    UCT_MLX5_CMD_OP_DEALLOC_PD      = 0x801,
    UCT_MLX5_CMD_OP_CREATE_RMP      = 0x90c,
    UCT_MLX5_CMD_OP_MODIFY_RMP      = 0x90d,
    UCT_MLX5_CMD_OP_DESTROY_RMP     = 0x90e,
    UCT_MLX5_CMD_OP_QUERY_RMP       = 0x90f,
    UCT_MLX5_CMD_OP_QUERY_HCA_VPORT_CONTEXT = 0x762
};

/* wq.wq_type */
enum {
    UCT_MLX5_WQ_TYPE_LINKED_LIST          = 0x0,
    UCT_MLX5_WQ_TYPE_CYCLIC               = 0x1,
    UCT_MLX5_WQ_TYPE_LINKED_LIST_STRIDING = 0x2,
    UCT_MLX5_WQ_TYPE_CYCLIC_STRIDING      = 0x3
};

/* rmpc.state */
enum {
    UCT_MLX5_RMPC_STATE_RDY = 0x1,
    UCT_MLX5_RMPC_STATE_ERR = 0x3
};

/* xrqc.topology and xrqc.offload */
enum {
    UCT_MLX5_XRQC_TOPOLOGY_NO_SPECIAL    = 0x0,
    UCT_MLX5_XRQC_TOPOLOGY_TAG_MATCHING  = 0x1,
    UCT_MLX5_XRQC_OFFLOAD_RNDV           = 0x1
};

/* modify_rmp_in.bitmask */
enum {
    UCT_MLX5_RMP_BITMASK_LWM = 1u << 0
};

/* qpc.state */
enum {
    UCT_MLX5_QP_STATE_RST  = 0x0,
    UCT_MLX5_QP_STATE_INIT = 0x1,
    UCT_MLX5_QP_STATE_RTR  = 0x2,
    UCT_MLX5_QP_STATE_RTS  = 0x3,
    UCT_MLX5_QP_STATE_SQER = 0x4,
    UCT_MLX5_QP_STATE_ERR  = 0x6,
    UCT_MLX5_QP_STATE_SQD  = 0x7
};

/* qpc.st */
enum {
    UCT_MLX5_QP_ST_RC  = 0x0,
    UCT_MLX5_QP_ST_UC  = 0x1,
    UCT_MLX5_QP_ST_UD  = 0x2,
    UCT_MLX5_QP_ST_XRC = 0x3,
    UCT_MLX5_QP_ST_DCI = 0x5
};

/* dctc.state */
enum {
    UCT_MLX5_DCT_STATE_ACTIVE   = 0x1,
    UCT_MLX5_DCT_STATE_DRAINING = 0x2,
    UCT_MLX5_DCT_STATE_DRAINED  = 0x3
};

/* opt_param_mask of the QP state transitions */
enum {
    UCT_MLX5_QP_OPTPAR_RRE = UCS_BIT(1),
    UCT_MLX5_QP_OPTPAR_RAE = UCS_BIT(2),
    UCT_MLX5_QP_OPTPAR_RWE = UCS_BIT(3),
    UCT_MLX5_QP_OPTPAR_LAG_TX_AFF = UCS_BIT(15)
};

/* qpc.cs_req and qpc.cs_res: read and atomic responses (requester) and
 * received SENDs (responder) up to this size are written into the CQE */
enum {
    UCT_MLX5_QPC_CS_REQ_DISABLE     = 0x00,
    UCT_MLX5_QPC_CS_REQ_UP_TO_32B   = 0x11,
    UCT_MLX5_QPC_CS_REQ_UP_TO_64B   = 0x22,
    UCT_MLX5_QPC_CS_RES_DISABLE     = 0x0,
    UCT_MLX5_QPC_CS_RES_UP_TO_32B   = 0x1,
    UCT_MLX5_QPC_CS_RES_UP_TO_64B   = 0x2
};

/* qpc.atomic_mode: the largest atomic the responder executes */
enum {
    UCT_MLX5_ATOMIC_MODE_IB_SPEC  = 0x0,
    UCT_MLX5_ATOMIC_MODE_UP_TO_8B = 0x3  /* extended atomics on 4 and 8 bytes */
};

/* qpc.mtu */
enum {
    UCT_MLX5_MTU_256  = 1,
    UCT_MLX5_MTU_512  = 2,
    UCT_MLX5_MTU_1024 = 3,
    UCT_MLX5_MTU_2048 = 4,
    UCT_MLX5_MTU_4096 = 5
};

/* QUERY_HCA_CAP capability types */
enum {
    UCT_MLX5_HCA_CAP_GENERAL        = 0x0,  /* cmd_hca_cap */
    UCT_MLX5_HCA_CAP_ETH_OFFLOADS   = 0x1,
    UCT_MLX5_HCA_CAP_ODP            = 0x2,
    UCT_MLX5_HCA_CAP_ATOMIC         = 0x3,  /* atomic_cap */
    UCT_MLX5_HCA_CAP_ROCE           = 0x4,  /* roce_cap */
    UCT_MLX5_HCA_CAP_NIC_FLOW_TABLE = 0x7,
    UCT_MLX5_HCA_CAP_QOS            = 0xc,
    UCT_MLX5_HCA_CAP_DEBUG          = 0xd,
    UCT_MLX5_HCA_CAP_DEVICE_MEMORY  = 0xf
};

/* atomic_operations bits and atomic_size_qp/dc sizes (bit n: 2^n bytes) */
enum {
    UCT_MLX5_ATOMIC_OPS_CMP_SWAP         = UCS_BIT(0),
    UCT_MLX5_ATOMIC_OPS_FETCH_ADD        = UCS_BIT(1),
    UCT_MLX5_ATOMIC_OPS_MASKED_CMP_SWAP  = UCS_BIT(2),
    UCT_MLX5_ATOMIC_OPS_MASKED_FETCH_ADD = UCS_BIT(3)
};

/* QUERY_HCA_CAP op_mod asking for the current (not the maximal) values */
constexpr uint16_t uct_mlx5_hca_cap_op_mod(uint16_t cap_type)
{
    return static_cast<uint16_t>((cap_type << 1) | 1);
}


/*
 * Layouts, one row per field from the PRM tables: name, bit offset, bit width
 * (and embedded structure). Byte arrays are marked; zero-width arrays are
 * variable-length tails whose offset tells where the entries start.
 */
namespace uct_mlx5_prm {

/* Header shared by the input of every command */
namespace mbox_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
} // namespace mbox_in

/* Header shared by the output of every command */
namespace mbox_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace mbox_out

namespace ads {
UCT_MLX5_PRM_SIZE(352);
UCT_MLX5_PRM_FIELD(fl,               0,   1);
UCT_MLX5_PRM_FIELD(free_ar,          1,   1);
UCT_MLX5_PRM_FIELD(pkey_index,      16,  16);
UCT_MLX5_PRM_FIELD(grh,             40,   1);
UCT_MLX5_PRM_FIELD(mlid,            41,   7);
UCT_MLX5_PRM_FIELD(rlid,            48,  16);
UCT_MLX5_PRM_FIELD(ack_timeout,     64,   5);
UCT_MLX5_PRM_FIELD(src_addr_index,  72,   8);
UCT_MLX5_PRM_FIELD(stat_rate,       84,   4);
UCT_MLX5_PRM_FIELD(hop_limit,       88,   8);
UCT_MLX5_PRM_FIELD(tclass,         100,   8);
UCT_MLX5_PRM_FIELD(flow_label,     108,  20);
UCT_MLX5_PRM_FIELD(rgid_rip,       128, 128); /* 16 bytes */
UCT_MLX5_PRM_FIELD(f_dscp,         260,   1);
UCT_MLX5_PRM_FIELD(f_ecn,          261,   1);
UCT_MLX5_PRM_FIELD(f_eth_prio,     263,   1);
UCT_MLX5_PRM_FIELD(ecn,            264,   2);
UCT_MLX5_PRM_FIELD(dscp,           266,   6);
UCT_MLX5_PRM_FIELD(udp_sport,      272,  16);
UCT_MLX5_PRM_FIELD(dei_cfi,        288,   1);
UCT_MLX5_PRM_FIELD(eth_prio,       289,   3);
UCT_MLX5_PRM_FIELD(sl,             292,   4);
UCT_MLX5_PRM_FIELD(vhca_port_num,  296,   8);
UCT_MLX5_PRM_FIELD(rmac_47_32,     304,  16);
UCT_MLX5_PRM_FIELD(rmac_31_0,      320,  32);
/* Not a PRM row: the 6 remote MAC bytes rmac_47_32 and rmac_31_0 span, for
 * uct_mlx5_prm_set_bytes/get_bytes */
UCT_MLX5_PRM_FIELD(rmac,           304,  48);
static_assert((rmac::offset == rmac_47_32::offset) &&
              (rmac_31_0::offset == rmac_47_32::offset + rmac_47_32::width) &&
              (rmac::width == rmac_47_32::width + rmac_31_0::width),
              "rmac must cover exactly rmac_47_32 followed by rmac_31_0");
} // namespace ads

namespace qpc {
UCT_MLX5_PRM_SIZE(1856);
UCT_MLX5_PRM_FIELD(state,                         0,   4);
UCT_MLX5_PRM_FIELD(lag_tx_port_affinity,          4,   4);
UCT_MLX5_PRM_FIELD(st,                            8,   8);
UCT_MLX5_PRM_FIELD(isolate_vl_tc,                18,   1);
UCT_MLX5_PRM_FIELD(pm_state,                     19,   2);
UCT_MLX5_PRM_FIELD(req_e2e_credit_mode,          22,   2);
UCT_MLX5_PRM_FIELD(offload_type,                 24,   4);
UCT_MLX5_PRM_FIELD(end_padding_mode,             28,   2);
UCT_MLX5_PRM_FIELD(wq_signature,                 32,   1);
UCT_MLX5_PRM_FIELD(block_lb_mc,                  33,   1);
UCT_MLX5_PRM_FIELD(atomic_like_write_en,         34,   1);
UCT_MLX5_PRM_FIELD(latency_sensitive,            35,   1);
UCT_MLX5_PRM_FIELD(drain_sigerr,                 37,   1);
UCT_MLX5_PRM_FIELD(pd,                           40,  24);
UCT_MLX5_PRM_FIELD(mtu,                          64,   3);
UCT_MLX5_PRM_FIELD(log_msg_max,                  67,   5);
UCT_MLX5_PRM_FIELD(log_rq_size,                  73,   4);
UCT_MLX5_PRM_FIELD(log_rq_stride,                77,   3);
UCT_MLX5_PRM_FIELD(no_sq,                        80,   1);
UCT_MLX5_PRM_FIELD(log_sq_size,                  81,   4);
UCT_MLX5_PRM_FIELD(ts_format,                    88,   2);
UCT_MLX5_PRM_FIELD(data_in_order,                90,   1);
UCT_MLX5_PRM_FIELD(rlky,                         91,   1);
UCT_MLX5_PRM_FIELD(ulp_stateless_offload_mode,   92,   4);
UCT_MLX5_PRM_FIELD(counter_set_id,               96,   8);
UCT_MLX5_PRM_FIELD(uar_page,                    104,  24);
UCT_MLX5_PRM_FIELD(user_index,                  136,  24);
UCT_MLX5_PRM_FIELD(log_page_size,               163,   5);
UCT_MLX5_PRM_FIELD(remote_qpn,                  168,  24);
UCT_MLX5_PRM_EMBED(primary_address_path,        192, 352, ads);
UCT_MLX5_PRM_EMBED(secondary_address_path,      544, 352, ads);
UCT_MLX5_PRM_FIELD(log_ack_req_freq,            896,   4);
UCT_MLX5_PRM_FIELD(log_sra_max,                 904,   3);
UCT_MLX5_PRM_FIELD(retry_count,                 909,   3);
UCT_MLX5_PRM_FIELD(rnr_retry,                   912,   3);
UCT_MLX5_PRM_FIELD(fre,                         916,   1);
UCT_MLX5_PRM_FIELD(cur_rnr_retry,               917,   3);
UCT_MLX5_PRM_FIELD(cur_retry_count,             920,   3);
UCT_MLX5_PRM_FIELD(next_send_psn,               968,  24);
UCT_MLX5_PRM_FIELD(cqn_snd,                    1000,  24);
UCT_MLX5_PRM_FIELD(deth_sqpn,                  1032,  24);
UCT_MLX5_PRM_FIELD(last_acked_psn,             1096,  24);
UCT_MLX5_PRM_FIELD(ssn,                        1128,  24);
UCT_MLX5_PRM_FIELD(log_rra_max,                1160,   3);
UCT_MLX5_PRM_FIELD(atomic_mode,                1164,   4);
UCT_MLX5_PRM_FIELD(rre,                        1168,   1);
UCT_MLX5_PRM_FIELD(rwe,                        1169,   1);
UCT_MLX5_PRM_FIELD(rae,                        1170,   1);
UCT_MLX5_PRM_FIELD(page_offset,                1172,   6);
UCT_MLX5_PRM_FIELD(cd_slave_receive,           1181,   1);
UCT_MLX5_PRM_FIELD(cd_slave_send,              1182,   1);
UCT_MLX5_PRM_FIELD(cd_master,                  1183,   1);
UCT_MLX5_PRM_FIELD(min_rnr_nak,                1187,   5);
UCT_MLX5_PRM_FIELD(next_rcv_psn,               1192,  24);
UCT_MLX5_PRM_FIELD(xrcd,                       1224,  24);
UCT_MLX5_PRM_FIELD(cqn_rcv,                    1256,  24);
UCT_MLX5_PRM_FIELD(dbr_addr,                   1280,  64);
UCT_MLX5_PRM_FIELD(q_key,                      1344,  32);
UCT_MLX5_PRM_FIELD(rq_type,                    1381,   3);
UCT_MLX5_PRM_FIELD(srqn_rmpn_xrqn,             1384,  24);
UCT_MLX5_PRM_FIELD(rmsn,                       1416,  24);
UCT_MLX5_PRM_FIELD(hw_sq_wqebb_counter,        1440,  16);
UCT_MLX5_PRM_FIELD(sw_sq_wqebb_counter,        1456,  16);
UCT_MLX5_PRM_FIELD(hw_rq_counter,              1472,  32);
UCT_MLX5_PRM_FIELD(sw_rq_counter,              1504,  32);
UCT_MLX5_PRM_FIELD(cgs,                        1583,   1);
UCT_MLX5_PRM_FIELD(cs_req,                     1584,   8);
UCT_MLX5_PRM_FIELD(cs_res,                     1592,   8);
UCT_MLX5_PRM_FIELD(dc_access_key,              1600,  64);
UCT_MLX5_PRM_FIELD(dbr_umem_valid,             1667,   1);
UCT_MLX5_PRM_FIELD(dbr_umem_id,                1824,  32);
} // namespace qpc

namespace qpc_ext {
UCT_MLX5_PRM_SIZE(1536);
UCT_MLX5_PRM_FIELD(mmo,                           2,  1);
UCT_MLX5_PRM_FIELD(dci_stream_channel_id,        16, 16);
UCT_MLX5_PRM_FIELD(qos_queue_group_id_requester, 32, 32);
UCT_MLX5_PRM_FIELD(qos_queue_group_id_responder, 64, 32);
} // namespace qpc_ext

namespace create_qp_in {
UCT_MLX5_PRM_SIZE(2176);
UCT_MLX5_PRM_FIELD(opcode,            0,   16);
UCT_MLX5_PRM_FIELD(uid,              16,   16);
UCT_MLX5_PRM_FIELD(op_mod,           48,   16);
UCT_MLX5_PRM_FIELD(opt_param_mask,  128,   32);
UCT_MLX5_PRM_EMBED(qpc,             192, 1856, qpc);
UCT_MLX5_PRM_FIELD(wq_umem_offset, 2048,   64); /* not in layouts.csv */
UCT_MLX5_PRM_FIELD(wq_umem_id,     2112,   32);
UCT_MLX5_PRM_FIELD(wq_umem_valid,  2144,    1);
UCT_MLX5_PRM_FIELD(pas,            2176,    0); /* 8B each */
} // namespace create_qp_in

namespace create_qp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
UCT_MLX5_PRM_FIELD(qpn,      72, 24);
} // namespace create_qp_out

namespace destroy_qp_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(qpn,    72, 24);
} // namespace destroy_qp_in

/*
 * Not in layouts.csv: DESTROY_QP output and the 2ERR/2RST commands. Same
 * shape as the other QP commands (header, qpn at 72), checked against the PRM.
 */
namespace destroy_qp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace destroy_qp_out

namespace qp_2err_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
UCT_MLX5_PRM_FIELD(qpn,    72, 24);
} // namespace qp_2err_in

namespace qp_2err_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace qp_2err_out

namespace qp_2rst_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
UCT_MLX5_PRM_FIELD(qpn,    72, 24);
} // namespace qp_2rst_in

namespace qp_2rst_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace qp_2rst_out

namespace rst2init_qp_in {
UCT_MLX5_PRM_SIZE(2176);
UCT_MLX5_PRM_FIELD(opcode,           0,   16);
UCT_MLX5_PRM_FIELD(uid,             16,   16);
UCT_MLX5_PRM_FIELD(op_mod,          48,   16);
UCT_MLX5_PRM_FIELD(qpn,             72,   24);
UCT_MLX5_PRM_FIELD(opt_param_mask, 128,   32);
UCT_MLX5_PRM_EMBED(qpc,            192, 1856, qpc);
} // namespace rst2init_qp_in

namespace rst2init_qp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace rst2init_qp_out

namespace init2rtr_qp_in {
UCT_MLX5_PRM_SIZE(2176);
UCT_MLX5_PRM_FIELD(opcode,           0,   16);
UCT_MLX5_PRM_FIELD(uid,             16,   16);
UCT_MLX5_PRM_FIELD(op_mod,          48,   16);
UCT_MLX5_PRM_FIELD(qpn,             72,   24);
UCT_MLX5_PRM_FIELD(opt_param_mask, 128,   32);
UCT_MLX5_PRM_EMBED(qpc,            192, 1856, qpc);
} // namespace init2rtr_qp_in

namespace init2rtr_qp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace init2rtr_qp_out

namespace rtr2rts_qp_in {
UCT_MLX5_PRM_SIZE(2176);
UCT_MLX5_PRM_FIELD(opcode,           0,   16);
UCT_MLX5_PRM_FIELD(uid,             16,   16);
UCT_MLX5_PRM_FIELD(op_mod,          48,   16);
UCT_MLX5_PRM_FIELD(qpn,             72,   24);
UCT_MLX5_PRM_FIELD(opt_param_mask, 128,   32);
UCT_MLX5_PRM_EMBED(qpc,            192, 1856, qpc);
} // namespace rtr2rts_qp_in

namespace rtr2rts_qp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace rtr2rts_qp_out

namespace rts2rts_qp_in {
UCT_MLX5_PRM_SIZE(3712);
UCT_MLX5_PRM_FIELD(opcode,                  0,   16);
UCT_MLX5_PRM_FIELD(uid,                    16,   16);
UCT_MLX5_PRM_FIELD(op_mod,                 48,   16);
UCT_MLX5_PRM_FIELD(qpc_ext,                64,    1);
UCT_MLX5_PRM_FIELD(qpn,                    72,   24);
UCT_MLX5_PRM_FIELD(opt_param_mask,        128,   32);
UCT_MLX5_PRM_EMBED(qpc,                   192, 1856, qpc);
UCT_MLX5_PRM_FIELD(opt_param_mask_95_32, 2112,   64);
UCT_MLX5_PRM_EMBED(qpc_data_ext,         2176, 1536, qpc_ext);
} // namespace rts2rts_qp_in

namespace rts2rts_qp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace rts2rts_qp_out

namespace init2init_qp_in {
UCT_MLX5_PRM_SIZE(3712);
UCT_MLX5_PRM_FIELD(opcode,                  0,   16);
UCT_MLX5_PRM_FIELD(uid,                    16,   16);
UCT_MLX5_PRM_FIELD(op_mod,                 48,   16);
UCT_MLX5_PRM_FIELD(qpc_ext,                64,    1);
UCT_MLX5_PRM_FIELD(qpn,                    72,   24);
UCT_MLX5_PRM_FIELD(opt_param_mask,        128,   32);
UCT_MLX5_PRM_EMBED(qpc,                   192, 1856, qpc);
UCT_MLX5_PRM_FIELD(opt_param_mask_95_32, 2112,   64);
UCT_MLX5_PRM_EMBED(qpc_data_ext,         2176, 1536, qpc_ext);
} // namespace init2init_qp_in

namespace init2init_qp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace init2init_qp_out

namespace query_qp_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
UCT_MLX5_PRM_FIELD(qpn,    72, 24);
} // namespace query_qp_in

namespace query_qp_out {
UCT_MLX5_PRM_SIZE(2176);
UCT_MLX5_PRM_FIELD(status,            0,    8);
UCT_MLX5_PRM_FIELD(syndrome,         32,   32);
UCT_MLX5_PRM_FIELD(opt_param_mask,  128,   32);
UCT_MLX5_PRM_EMBED(qpc,             192, 1856, qpc);
UCT_MLX5_PRM_FIELD(pas,            2176,    0); /* 8B each */
} // namespace query_qp_out

namespace mkc {
UCT_MLX5_PRM_SIZE(512);
UCT_MLX5_PRM_FIELD(free,                                1,  1);
UCT_MLX5_PRM_FIELD(access_mode_4_2,                     3,  3);
UCT_MLX5_PRM_FIELD(relaxed_ordering_write,             13,  1);
UCT_MLX5_PRM_FIELD(small_fence_on_rdma_read_response,  15,  1);
UCT_MLX5_PRM_FIELD(umr_en,                             16,  1);
UCT_MLX5_PRM_FIELD(a,                                  17,  1);
UCT_MLX5_PRM_FIELD(rw,                                 18,  1);
UCT_MLX5_PRM_FIELD(rr,                                 19,  1);
UCT_MLX5_PRM_FIELD(lw,                                 20,  1);
UCT_MLX5_PRM_FIELD(lr,                                 21,  1);
UCT_MLX5_PRM_FIELD(access_mode_1_0,                    22,  2);
UCT_MLX5_PRM_FIELD(qpn,                                32, 24);
UCT_MLX5_PRM_FIELD(mkey_7_0,                           56,  8);
UCT_MLX5_PRM_FIELD(length64,                           96,  1);
UCT_MLX5_PRM_FIELD(bsf_en,                             97,  1);
UCT_MLX5_PRM_FIELD(sync_umr,                           98,  1);
UCT_MLX5_PRM_FIELD(expected_sigerr_count,             101,  1);
UCT_MLX5_PRM_FIELD(en_rinval,                         103,  1);
UCT_MLX5_PRM_FIELD(pd,                                104, 24);
UCT_MLX5_PRM_FIELD(start_addr,                        128, 64);
UCT_MLX5_PRM_FIELD(len,                               192, 64);
UCT_MLX5_PRM_FIELD(bsf_octword_size,                  256, 32);
UCT_MLX5_PRM_FIELD(translations_octword_size,         416, 32);
UCT_MLX5_PRM_FIELD(relaxed_ordering_read,             473,  1);
UCT_MLX5_PRM_FIELD(log_page_size,                     475,  5);
UCT_MLX5_PRM_FIELD(crypto_en,                         483,  2);
} // namespace mkc

namespace create_mkey_in {
UCT_MLX5_PRM_SIZE(2176);
UCT_MLX5_PRM_FIELD(opcode,                              0,  16);
UCT_MLX5_PRM_FIELD(op_mod,                             48,  16);
UCT_MLX5_PRM_FIELD(pg_access,                          96,   1);
UCT_MLX5_PRM_FIELD(mkey_umem_valid,                    97,   1);
UCT_MLX5_PRM_EMBED(memory_key_mkey_entry,             128, 512, mkc);
UCT_MLX5_PRM_FIELD(translations_octword_actual_size,  768,  32);
UCT_MLX5_PRM_FIELD(klm_pas_mtt,                      2176,   0); /* 4B each */
} // namespace create_mkey_in

namespace create_mkey_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,      0,  8);
UCT_MLX5_PRM_FIELD(syndrome,   32, 32);
UCT_MLX5_PRM_FIELD(mkey_index, 72, 24);
} // namespace create_mkey_out

namespace destroy_mkey_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,      0, 16);
UCT_MLX5_PRM_FIELD(uid,        16, 16);
UCT_MLX5_PRM_FIELD(op_mod,     48, 16);
UCT_MLX5_PRM_FIELD(mkey_index, 72, 24);
} // namespace destroy_mkey_in

namespace destroy_mkey_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace destroy_mkey_out

namespace create_srq_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(srqn, 72, 24);
} // namespace create_srq_out

namespace destroy_srq_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(srqn,   72, 24);
} // namespace destroy_srq_in

namespace create_rmp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(rmpn, 72, 24);
} // namespace create_rmp_out

namespace destroy_rmp_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
UCT_MLX5_PRM_FIELD(rmpn,   72, 24);
} // namespace destroy_rmp_in

/*
 * Not in layouts.csv: the work queue context of an RQ, SQ or RMP, the RMP
 * context and the RMP commands, checked against the PRM (mlx5_ifc.h). The
 * umem fields of wq take the place of the physical address list.
 */
namespace wq {
UCT_MLX5_PRM_SIZE(1536);
UCT_MLX5_PRM_FIELD(wq_type,                          0,  4);
UCT_MLX5_PRM_FIELD(wq_signature,                     4,  1);
UCT_MLX5_PRM_FIELD(end_padding_mode,                 5,  2);
UCT_MLX5_PRM_FIELD(cd_slave,                         7,  1);
UCT_MLX5_PRM_FIELD(page_offset,                     43,  5);
UCT_MLX5_PRM_FIELD(lwm,                             48, 16);
UCT_MLX5_PRM_FIELD(pd,                              72, 24);
UCT_MLX5_PRM_FIELD(uar_page,                       104, 24);
UCT_MLX5_PRM_FIELD(dbr_addr,                       128, 64);
UCT_MLX5_PRM_FIELD(hw_counter,                     192, 32);
UCT_MLX5_PRM_FIELD(sw_counter,                     224, 32);
UCT_MLX5_PRM_FIELD(log_wq_stride,                  268,  4);
UCT_MLX5_PRM_FIELD(log_wq_pg_sz,                   275,  5);
UCT_MLX5_PRM_FIELD(log_wq_sz,                      283,  5);
UCT_MLX5_PRM_FIELD(dbr_umem_valid,                 288,  1);
UCT_MLX5_PRM_FIELD(wq_umem_valid,                  289,  1);
UCT_MLX5_PRM_FIELD(single_wqe_log_num_of_strides,  308,  4);
UCT_MLX5_PRM_FIELD(two_byte_shift_en,              312,  1);
UCT_MLX5_PRM_FIELD(single_stride_log_num_of_bytes, 317,  3);
UCT_MLX5_PRM_FIELD(dbr_umem_id,                    320, 32);
UCT_MLX5_PRM_FIELD(wq_umem_id,                     352, 32);
UCT_MLX5_PRM_FIELD(wq_umem_offset,                 384, 64);
} // namespace wq

namespace rmpc {
UCT_MLX5_PRM_SIZE(1920);
UCT_MLX5_PRM_FIELD(state,                  8,    4);
UCT_MLX5_PRM_FIELD(basic_cyclic_rcv_wqe,  32,    1);
UCT_MLX5_PRM_EMBED(wq,                   384, 1536, wq);
} // namespace rmpc

namespace create_rmp_in {
UCT_MLX5_PRM_SIZE(2176);
UCT_MLX5_PRM_FIELD(opcode,        0,   16);
UCT_MLX5_PRM_FIELD(uid,          16,   16);
UCT_MLX5_PRM_FIELD(op_mod,       48,   16);
UCT_MLX5_PRM_EMBED(rmp_context, 256, 1920, rmpc);
} // namespace create_rmp_in

namespace destroy_rmp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace destroy_rmp_out

namespace query_rmp_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
UCT_MLX5_PRM_FIELD(rmpn,   72, 24);
} // namespace query_rmp_in

namespace query_rmp_out {
UCT_MLX5_PRM_SIZE(2176);
UCT_MLX5_PRM_FIELD(status,        0,    8);
UCT_MLX5_PRM_FIELD(syndrome,     32,   32);
UCT_MLX5_PRM_EMBED(rmp_context, 256, 1920, rmpc);
} // namespace query_rmp_out

namespace modify_rmp_in {
UCT_MLX5_PRM_SIZE(2176);
UCT_MLX5_PRM_FIELD(opcode,        0,   16);
UCT_MLX5_PRM_FIELD(uid,          16,   16);
UCT_MLX5_PRM_FIELD(op_mod,       48,   16);
UCT_MLX5_PRM_FIELD(rmp_state,    64,    4);
UCT_MLX5_PRM_FIELD(rmpn,         72,   24);
UCT_MLX5_PRM_FIELD(bitmask,     128,   64);
UCT_MLX5_PRM_EMBED(ctx,         256, 1920, rmpc);
} // namespace modify_rmp_in

namespace modify_rmp_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace modify_rmp_out

/*
 * Not in layouts.csv either: the XRQ context (its tag-matching topology
 * context) and the XRQ commands, checked against the PRM (mlx5_ifc.h)
 */
namespace xrqc {
UCT_MLX5_PRM_SIZE(2560);
UCT_MLX5_PRM_FIELD(state,                  0,    4);
UCT_MLX5_PRM_FIELD(rlkey,                  4,    1);
UCT_MLX5_PRM_FIELD(topology,              20,    4);
UCT_MLX5_PRM_FIELD(offload,               28,    4);
UCT_MLX5_PRM_FIELD(user_index,            40,   24);
UCT_MLX5_PRM_FIELD(cqn,                   72,   24);
UCT_MLX5_PRM_FIELD(dc,                   127,    1);
UCT_MLX5_PRM_FIELD(log_matching_list_sz, 256,    4);
UCT_MLX5_PRM_FIELD(append_next_index,    272,   16);
UCT_MLX5_PRM_FIELD(sw_phase_cnt,         288,   16);
UCT_MLX5_PRM_FIELD(hw_phase_cnt,         304,   16);
UCT_MLX5_PRM_EMBED(wq,                  1024, 1536, wq);
} // namespace xrqc

namespace create_xrq_in {
UCT_MLX5_PRM_SIZE(2688);
UCT_MLX5_PRM_FIELD(opcode,         0,   16);
UCT_MLX5_PRM_FIELD(uid,           16,   16);
UCT_MLX5_PRM_FIELD(op_mod,        48,   16);
UCT_MLX5_PRM_EMBED(xrq_context,  128, 2560, xrqc);
} // namespace create_xrq_in

namespace create_xrq_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
UCT_MLX5_PRM_FIELD(xrqn,     72, 24);
} // namespace create_xrq_out

namespace destroy_xrq_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
UCT_MLX5_PRM_FIELD(xrqn,   72, 24);
} // namespace destroy_xrq_in

/*
 * Not in layouts.csv beyond its size: the DCT context and the DCT commands,
 * checked against the PRM (mlx5_ifc.h)
 */
namespace dctc {
UCT_MLX5_PRM_SIZE(896);
UCT_MLX5_PRM_FIELD(state,                4,  4);
UCT_MLX5_PRM_FIELD(offload_type,        24,  4);
UCT_MLX5_PRM_FIELD(user_index,          40, 24);
UCT_MLX5_PRM_FIELD(cqn,                 72, 24);
UCT_MLX5_PRM_FIELD(counter_set_id,      96,  8);
UCT_MLX5_PRM_FIELD(atomic_mode,        104,  4);
UCT_MLX5_PRM_FIELD(rre,                108,  1);
UCT_MLX5_PRM_FIELD(rwe,                109,  1);
UCT_MLX5_PRM_FIELD(rae,                110,  1);
UCT_MLX5_PRM_FIELD(force_full_handshake, 114, 1);
UCT_MLX5_PRM_FIELD(cs_res,             136,  8);
UCT_MLX5_PRM_FIELD(min_rnr_nak,        147,  5);
UCT_MLX5_PRM_FIELD(srqn_xrqn,          168, 24);
UCT_MLX5_PRM_FIELD(pd,                 200, 24);
UCT_MLX5_PRM_FIELD(tclass,             224,  8);
UCT_MLX5_PRM_FIELD(flow_label,         236, 20);
UCT_MLX5_PRM_FIELD(dc_access_key,      256, 64);
UCT_MLX5_PRM_FIELD(mtu,                325,  3);
UCT_MLX5_PRM_FIELD(port,               328,  8);
UCT_MLX5_PRM_FIELD(pkey_index,         336, 16);
UCT_MLX5_PRM_FIELD(my_addr_index,      360,  8);
UCT_MLX5_PRM_FIELD(hop_limit,          376,  8);
UCT_MLX5_PRM_FIELD(dc_access_key_violation_count, 384, 32);
UCT_MLX5_PRM_FIELD(eth_prio,           425,  3);
UCT_MLX5_PRM_FIELD(dscp,               430,  6);
} // namespace dctc

namespace create_dct_in {
UCT_MLX5_PRM_SIZE(1024);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
UCT_MLX5_PRM_EMBED(dct_context_entry, 128, 896, dctc);
} // namespace create_dct_in

namespace create_dct_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
UCT_MLX5_PRM_FIELD(dctn,     72, 24);
} // namespace create_dct_out

/* DESTROY_DCT, DRAIN_DCT and QUERY_DCT name the DCT alike */
namespace destroy_dct_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
UCT_MLX5_PRM_FIELD(dctn,   72, 24);
} // namespace destroy_dct_in

namespace query_dct_out {
UCT_MLX5_PRM_SIZE(1024);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
UCT_MLX5_PRM_EMBED(dct_context_entry, 128, 896, dctc);
} // namespace query_dct_out

namespace alloc_pd_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
} // namespace alloc_pd_in

namespace alloc_pd_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
UCT_MLX5_PRM_FIELD(pd,       72, 24);
} // namespace alloc_pd_out

namespace dealloc_pd_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,  0, 16);
UCT_MLX5_PRM_FIELD(uid,    16, 16);
UCT_MLX5_PRM_FIELD(op_mod, 48, 16);
UCT_MLX5_PRM_FIELD(pd,     72, 24);
} // namespace dealloc_pd_in

namespace dealloc_pd_out {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(status,    0,  8);
UCT_MLX5_PRM_FIELD(syndrome, 32, 32);
} // namespace dealloc_pd_out

namespace cmd_hca_cap {
UCT_MLX5_PRM_SIZE(2048);
UCT_MLX5_PRM_FIELD(access_other_hca_roce,                             0,  1);
UCT_MLX5_PRM_FIELD(vhca_resource_manager,                            31,  1);
UCT_MLX5_PRM_FIELD(hca_cap_2,                                        32,  1);
UCT_MLX5_PRM_FIELD(vhca_id,                                          48, 16);
UCT_MLX5_PRM_FIELD(qp_data_in_order,                                 98,  1);
UCT_MLX5_PRM_FIELD(log_dma_mmo_max_size,                            107,  5);
UCT_MLX5_PRM_FIELD(log_max_srq_sz,                                  128,  8);
UCT_MLX5_PRM_FIELD(log_max_qp_sz,                                   136,  8);
UCT_MLX5_PRM_FIELD(isolate_vl_tc_new,                               147,  1);
UCT_MLX5_PRM_FIELD(prio_tag_required,                               152,  1);
UCT_MLX5_PRM_FIELD(log_max_qp,                                      155,  5);
UCT_MLX5_PRM_FIELD(log_max_srq,                                     171,  5);
UCT_MLX5_PRM_FIELD(log_max_cq_sz,                                   200,  8);
UCT_MLX5_PRM_FIELD(log_max_cq,                                      219,  5);
UCT_MLX5_PRM_FIELD(log_max_eq_sz,                                   224,  8);
UCT_MLX5_PRM_FIELD(relaxed_ordering_write,                          232,  1);
UCT_MLX5_PRM_FIELD(log_max_mkey,                                    234,  6);
UCT_MLX5_PRM_FIELD(tunneled_atomic,                                 240,  1);
UCT_MLX5_PRM_FIELD(as_notify,                                       241,  1);
UCT_MLX5_PRM_FIELD(m_pci_port,                                      242,  1);
UCT_MLX5_PRM_FIELD(m_vhca_mk,                                       243,  1);
UCT_MLX5_PRM_FIELD(cmd_on_behalf,                                   244,  1);
UCT_MLX5_PRM_FIELD(device_emulation_manager,                        245,  1);
UCT_MLX5_PRM_FIELD(terminate_scatter_list_mkey,                     246,  1);
UCT_MLX5_PRM_FIELD(repeated_mkey,                                   247,  1);
UCT_MLX5_PRM_FIELD(dump_fill_mkey,                                  248,  1);
UCT_MLX5_PRM_FIELD(log_max_eq,                                      252,  4);
UCT_MLX5_PRM_FIELD(max_indirection,                                 256,  8);
UCT_MLX5_PRM_FIELD(fixed_buffer_size,                               264,  1);
UCT_MLX5_PRM_FIELD(log_max_mrw_sz,                                  265,  7);
UCT_MLX5_PRM_FIELD(force_teardown,                                  272,  1);
UCT_MLX5_PRM_FIELD(fast_teardown,                                   273,  1);
UCT_MLX5_PRM_FIELD(log_max_bsf_list_size,                           274,  6);
UCT_MLX5_PRM_FIELD(umr_extended_translation_offset,                 280,  1);
UCT_MLX5_PRM_FIELD(null_mkey,                                       281,  1);
UCT_MLX5_PRM_FIELD(log_max_klm_list_size,                           282,  6);
UCT_MLX5_PRM_FIELD(qpc_extension,                                   290,  1);
UCT_MLX5_PRM_FIELD(log_max_ra_req_dc,                               298,  6);
UCT_MLX5_PRM_FIELD(ooo_sl_mask,                                     312,  1);
UCT_MLX5_PRM_FIELD(log_max_ra_res_dc,                               314,  6);
UCT_MLX5_PRM_FIELD(sig_crc64_xp10,                                  327,  1);
UCT_MLX5_PRM_FIELD(sig_crc32c,                                      328,  1);
UCT_MLX5_PRM_FIELD(log_max_ra_req_qp,                               330,  6);
UCT_MLX5_PRM_FIELD(rts2rts_qp_udp_sport,                            337,  1);
UCT_MLX5_PRM_FIELD(rts2rts_lag_tx_port_affinity,                    338,  1);
UCT_MLX5_PRM_FIELD(dma_mmo_sq,                                      339,  1);
UCT_MLX5_PRM_FIELD(log_max_ra_res_qp,                               346,  6);
UCT_MLX5_PRM_FIELD(end_pad,                                         352,  1);
UCT_MLX5_PRM_FIELD(cc_query_allowed,                                353,  1);
UCT_MLX5_PRM_FIELD(cc_modify_allowed,                               354,  1);
UCT_MLX5_PRM_FIELD(start_pad,                                       355,  1);
UCT_MLX5_PRM_FIELD(cache_line_128byte,                              356,  1);
UCT_MLX5_PRM_FIELD(gid_table_size_ro,                               357,  1);
UCT_MLX5_PRM_FIELD(pkey_table_size_ro,                              358,  1);
UCT_MLX5_PRM_FIELD(rnr_nak_q_counters,                              360,  1);
UCT_MLX5_PRM_FIELD(rts2rts_qp_counters_set_id,                      361,  1);
UCT_MLX5_PRM_FIELD(rts2rts_qp_dscp,                                 362,  1);
UCT_MLX5_PRM_FIELD(qcam_reg,                                        367,  1);
UCT_MLX5_PRM_FIELD(gid_table_size,                                  368, 16);
UCT_MLX5_PRM_FIELD(out_of_seq_cnt,                                  384,  1);
UCT_MLX5_PRM_FIELD(vport_counters,                                  385,  1);
UCT_MLX5_PRM_FIELD(retransmission_q_counters,                       386,  1);
UCT_MLX5_PRM_FIELD(debug,                                           387,  1);
UCT_MLX5_PRM_FIELD(modify_rq_counters_set_id,                       388,  1);
UCT_MLX5_PRM_FIELD(rq_delay_drop,                                   389,  1);
UCT_MLX5_PRM_FIELD(max_qp_cnt,                                      390, 10);
UCT_MLX5_PRM_FIELD(pkey_table_size,                                 400, 16);
UCT_MLX5_PRM_FIELD(vport_group_manager,                             416,  1);
UCT_MLX5_PRM_FIELD(vhca_group_manager,                              417,  1);
UCT_MLX5_PRM_FIELD(ib_virt,                                         418,  1);
UCT_MLX5_PRM_FIELD(eth_virt,                                        419,  1);
UCT_MLX5_PRM_FIELD(vnic_env_queue_counters,                         420,  1);
UCT_MLX5_PRM_FIELD(ets,                                             421,  1);
UCT_MLX5_PRM_FIELD(nic_flow_table,                                  422,  1);
UCT_MLX5_PRM_FIELD(eswitch_manager,                                 423,  1);
UCT_MLX5_PRM_FIELD(device_memory,                                   424,  1);
UCT_MLX5_PRM_FIELD(mcam_reg,                                        425,  1);
UCT_MLX5_PRM_FIELD(pcam_reg,                                        426,  1);
UCT_MLX5_PRM_FIELD(local_ca_ack_delay,                              427,  5);
UCT_MLX5_PRM_FIELD(port_module_event,                               432,  1);
UCT_MLX5_PRM_FIELD(enhanced_retransmission_q_counters,              433,  1);
UCT_MLX5_PRM_FIELD(port_checks,                                     434,  1);
UCT_MLX5_PRM_FIELD(pulse_gen_control,                               435,  1);
UCT_MLX5_PRM_FIELD(disable_link_up_by_init_hca,                     436,  1);
UCT_MLX5_PRM_FIELD(beacon_led,                                      437,  1);
UCT_MLX5_PRM_FIELD(port_type,                                       438,  2);
UCT_MLX5_PRM_FIELD(num_ports,                                       440,  8);
UCT_MLX5_PRM_FIELD(pps,                                             449,  1);
UCT_MLX5_PRM_FIELD(pps_modify,                                      450,  1);
UCT_MLX5_PRM_FIELD(log_max_msg,                                     451,  5);
UCT_MLX5_PRM_FIELD(multi_path_xrc_rdma,                             456,  1);
UCT_MLX5_PRM_FIELD(multi_path_dc_rdma,                              457,  1);
UCT_MLX5_PRM_FIELD(multi_path_rc_rdma,                              458,  1);
UCT_MLX5_PRM_FIELD(traffic_fast_control,                            459,  1);
UCT_MLX5_PRM_FIELD(max_tc,                                          460,  4);
UCT_MLX5_PRM_FIELD(temp_warn_event,                                 464,  1);
UCT_MLX5_PRM_FIELD(dcbx,                                            465,  1);
UCT_MLX5_PRM_FIELD(general_notification_event,                      466,  1);
UCT_MLX5_PRM_FIELD(multi_prio_sq,                                   467,  1);
UCT_MLX5_PRM_FIELD(afu_owner,                                       468,  1);
UCT_MLX5_PRM_FIELD(fpga,                                            469,  1);
UCT_MLX5_PRM_FIELD(rol_s,                                           470,  1);
UCT_MLX5_PRM_FIELD(rol_g,                                           471,  1);
UCT_MLX5_PRM_FIELD(ib_port_sniffer,                                 472,  1);
UCT_MLX5_PRM_FIELD(wol_s,                                           473,  1);
UCT_MLX5_PRM_FIELD(wol_g,                                           474,  1);
UCT_MLX5_PRM_FIELD(wol_a,                                           475,  1);
UCT_MLX5_PRM_FIELD(wol_b,                                           476,  1);
UCT_MLX5_PRM_FIELD(wol_m,                                           477,  1);
UCT_MLX5_PRM_FIELD(wol_u,                                           478,  1);
UCT_MLX5_PRM_FIELD(wol_p,                                           479,  1);
UCT_MLX5_PRM_FIELD(stat_rate_support,                               480, 16);
UCT_MLX5_PRM_FIELD(sig_block_4048,                                  496,  1);
UCT_MLX5_PRM_FIELD(cqe_version,                                     508,  4);
UCT_MLX5_PRM_FIELD(compact_address_vector,                          512,  1);
UCT_MLX5_PRM_FIELD(eth_striding_wq,                                 513,  1);
UCT_MLX5_PRM_FIELD(ipoib_enhanced_offloads,                         515,  1);
UCT_MLX5_PRM_FIELD(ipoib_basic_offloads,                            516,  1);
UCT_MLX5_PRM_FIELD(ib_striding_wq,                                  517,  1);
UCT_MLX5_PRM_FIELD(repeated_block_disabled,                         518,  1);
UCT_MLX5_PRM_FIELD(umr_modify_entity_size_disabled,                 519,  1);
UCT_MLX5_PRM_FIELD(umr_modify_atomic_disabled,                      520,  1);
UCT_MLX5_PRM_FIELD(umr_indirect_mkey_disabled,                      521,  1);
UCT_MLX5_PRM_FIELD(umr_fence,                                       522,  2);
UCT_MLX5_PRM_FIELD(dc_req_sctr_data_cqe,                            524,  1);
UCT_MLX5_PRM_FIELD(dc_connect_qp,                                   525,  1);
UCT_MLX5_PRM_FIELD(dc_cnak_trace,                                   526,  1);
UCT_MLX5_PRM_FIELD(drain_sigerr,                                    527,  1);
UCT_MLX5_PRM_FIELD(cmdif_checksum,                                  528,  2);
UCT_MLX5_PRM_FIELD(sigerr_cqe,                                      530,  1);
UCT_MLX5_PRM_FIELD(wq_signature,                                    532,  1);
UCT_MLX5_PRM_FIELD(sctr_data_cqe,                                   533,  1);
UCT_MLX5_PRM_FIELD(sho,                                             535,  1);
UCT_MLX5_PRM_FIELD(tph,                                             536,  1);
UCT_MLX5_PRM_FIELD(rf,                                              537,  1);
UCT_MLX5_PRM_FIELD(dct,                                             538,  1);
UCT_MLX5_PRM_FIELD(qos,                                             539,  1);
UCT_MLX5_PRM_FIELD(eth_net_offloads,                                540,  1);
UCT_MLX5_PRM_FIELD(roce,                                            541,  1);
UCT_MLX5_PRM_FIELD(atomic,                                          542,  1);
UCT_MLX5_PRM_FIELD(extended_retry_count,                            543,  1);
UCT_MLX5_PRM_FIELD(cq_oi,                                           544,  1);
UCT_MLX5_PRM_FIELD(cq_resize,                                       545,  1);
UCT_MLX5_PRM_FIELD(cq_moderation,                                   546,  1);
UCT_MLX5_PRM_FIELD(cq_period_mode_modify,                           547,  1);
UCT_MLX5_PRM_FIELD(cq_invalidate,                                   548,  1);
UCT_MLX5_PRM_FIELD(cq_eq_remap,                                     550,  1);
UCT_MLX5_PRM_FIELD(pg,                                              551,  1);
UCT_MLX5_PRM_FIELD(block_lb_mc,                                     552,  1);
UCT_MLX5_PRM_FIELD(exponential_backoff,                             553,  1);
UCT_MLX5_PRM_FIELD(scqe_break_moderation,                           554,  1);
UCT_MLX5_PRM_FIELD(cq_period_start_from_cqe,                        555,  1);
UCT_MLX5_PRM_FIELD(cd,                                              556,  1);
UCT_MLX5_PRM_FIELD(atm,                                             557,  1);
UCT_MLX5_PRM_FIELD(apm,                                             558,  1);
UCT_MLX5_PRM_FIELD(vector_calc,                                     559,  1);
UCT_MLX5_PRM_FIELD(umr_ptr_rlkey,                                   560,  1);
UCT_MLX5_PRM_FIELD(imaicl,                                          561,  1);
UCT_MLX5_PRM_FIELD(qp_packet_based,                                 562,  1);
UCT_MLX5_PRM_FIELD(ipoib_enhanced_pkey_change,                      564,  1);
UCT_MLX5_PRM_FIELD(initiator_src_dct_in_cqe,                        565,  1);
UCT_MLX5_PRM_FIELD(qkv,                                             566,  1);
UCT_MLX5_PRM_FIELD(pkv,                                             567,  1);
UCT_MLX5_PRM_FIELD(set_deth_sqpn,                                   568,  1);
UCT_MLX5_PRM_FIELD(rts2rts_primary_sl,                              569,  1);
UCT_MLX5_PRM_FIELD(initiator_src_dct,                               570,  1);
UCT_MLX5_PRM_FIELD(dc_v2,                                           571,  1);
UCT_MLX5_PRM_FIELD(xrc,                                             572,  1);
UCT_MLX5_PRM_FIELD(ud,                                              573,  1);
UCT_MLX5_PRM_FIELD(uc,                                              574,  1);
UCT_MLX5_PRM_FIELD(rc,                                              575,  1);
UCT_MLX5_PRM_FIELD(uar_4k,                                          576,  1);
UCT_MLX5_PRM_FIELD(fl_rc_qp_when_roce_disabled,                     584,  1);
UCT_MLX5_PRM_FIELD(uar_sz,                                          586,  6);
UCT_MLX5_PRM_FIELD(umem_uid_0,                                      594,  1);
UCT_MLX5_PRM_FIELD(log_max_dc_cnak_qps,                             595,  5);
UCT_MLX5_PRM_FIELD(log_pg_sz,                                       600,  8);
UCT_MLX5_PRM_FIELD(bf,                                              608,  1);
UCT_MLX5_PRM_FIELD(driver_version,                                  609,  1);
UCT_MLX5_PRM_FIELD(pad_tx_eth_packet,                               610,  1);
UCT_MLX5_PRM_FIELD(query_driver_version,                            611,  1);
UCT_MLX5_PRM_FIELD(max_qp_retry_freq,                               612,  1);
UCT_MLX5_PRM_FIELD(qp_by_name,                                      613,  1);
UCT_MLX5_PRM_FIELD(mkey_by_name,                                    614,  1);
UCT_MLX5_PRM_FIELD(suspend_qp_uc,                                   616,  1);
UCT_MLX5_PRM_FIELD(suspend_qp_ud,                                   617,  1);
UCT_MLX5_PRM_FIELD(suspend_qp_rc,                                   618,  1);
UCT_MLX5_PRM_FIELD(log_bf_reg_size,                                 619,  5);
UCT_MLX5_PRM_FIELD(lag_dct,                                         630,  2);
UCT_MLX5_PRM_FIELD(lag_tx_port_affinity,                            632,  1);
UCT_MLX5_PRM_FIELD(lag_master,                                      635,  1);
UCT_MLX5_PRM_FIELD(num_lag_ports,                                   636,  4);
UCT_MLX5_PRM_FIELD(num_of_diagnostic_counters,                      640, 16);
UCT_MLX5_PRM_FIELD(max_wqe_sz_sq,                                   656, 16);
UCT_MLX5_PRM_FIELD(max_wqe_sz_rq,                                   688, 16);
UCT_MLX5_PRM_FIELD(max_flow_counter_31_16,                          704, 16);
UCT_MLX5_PRM_FIELD(max_wqe_sz_sq_dc,                                720, 16);
UCT_MLX5_PRM_FIELD(max_qp_mcg,                                      743, 25);
UCT_MLX5_PRM_FIELD(mlnx_tag_ethertype,                              768, 16);
UCT_MLX5_PRM_FIELD(log_max_mcg,                                     792,  8);
UCT_MLX5_PRM_FIELD(log_max_transport_domain,                        803,  5);
UCT_MLX5_PRM_FIELD(log_max_pd,                                      811,  5);
UCT_MLX5_PRM_FIELD(dp_ordering_ooo_all_ud,                          816,  1);
UCT_MLX5_PRM_FIELD(dp_ordering_ooo_all_uc,                          817,  1);
UCT_MLX5_PRM_FIELD(dp_ordering_ooo_all_xrc,                         818,  1);
UCT_MLX5_PRM_FIELD(dp_ordering_ooo_all_dc,                          819,  1);
UCT_MLX5_PRM_FIELD(dp_ordering_ooo_all_rc,                          820,  1);
UCT_MLX5_PRM_FIELD(log_max_xrcd,                                    827,  5);
UCT_MLX5_PRM_FIELD(nic_receive_steering_discard,                    832,  1);
UCT_MLX5_PRM_FIELD(receive_discard_vport_down,                      833,  1);
UCT_MLX5_PRM_FIELD(transmit_discard_vport_down,                     834,  1);
UCT_MLX5_PRM_FIELD(eq_overrun_count,                                835,  1);
UCT_MLX5_PRM_FIELD(nic_receive_steering_depth,                      836,  1);
UCT_MLX5_PRM_FIELD(invalid_command_count,                           837,  1);
UCT_MLX5_PRM_FIELD(quota_exceeded_count,                            838,  1);
UCT_MLX5_PRM_FIELD(log_max_flow_counter_bulk,                       840,  8);
UCT_MLX5_PRM_FIELD(max_flow_counter_15_0,                           848, 16);
UCT_MLX5_PRM_FIELD(modify_tis,                                      864,  1);
UCT_MLX5_PRM_FIELD(log_max_rq,                                      867,  5);
UCT_MLX5_PRM_FIELD(log_max_sq,                                      875,  5);
UCT_MLX5_PRM_FIELD(log_max_tir,                                     883,  5);
UCT_MLX5_PRM_FIELD(log_max_tis,                                     891,  5);
UCT_MLX5_PRM_FIELD(basic_cyclic_rcv_wqe,                            896,  1);
UCT_MLX5_PRM_FIELD(log_max_rmp,                                     899,  5);
UCT_MLX5_PRM_FIELD(log_max_rqt,                                     907,  5);
UCT_MLX5_PRM_FIELD(log_max_rqt_size,                                915,  5);
UCT_MLX5_PRM_FIELD(log_max_tis_per_sq,                              923,  5);
UCT_MLX5_PRM_FIELD(ext_stride_num_range,                            928,  1);
UCT_MLX5_PRM_FIELD(log_max_stride_sz_rq,                            931,  5);
UCT_MLX5_PRM_FIELD(log_min_stride_sz_rq,                            939,  5);
UCT_MLX5_PRM_FIELD(log_max_stride_sz_sq,                            947,  5);
UCT_MLX5_PRM_FIELD(log_min_stride_sz_sq,                            955,  5);
UCT_MLX5_PRM_FIELD(hairpin,                                         960,  1);
UCT_MLX5_PRM_FIELD(log_max_hairpin_queues,                          963,  5);
UCT_MLX5_PRM_FIELD(log_max_hairpin_wq_data_sz,                      971,  5);
UCT_MLX5_PRM_FIELD(log_max_hairpin_num_packets,                     979,  5);
UCT_MLX5_PRM_FIELD(log_max_wq_sz,                                   987,  5);
UCT_MLX5_PRM_FIELD(nic_vport_change_event,                          992,  1);
UCT_MLX5_PRM_FIELD(disable_local_lb_uc,                             993,  1);
UCT_MLX5_PRM_FIELD(disable_local_lb_mc,                             994,  1);
UCT_MLX5_PRM_FIELD(log_min_hairpin_wq_data_sz,                      995,  5);
UCT_MLX5_PRM_FIELD(log_max_vlan_list,                              1003,  5);
UCT_MLX5_PRM_FIELD(aes_xts_single_block_le_tweak,                  1009,  1);
UCT_MLX5_PRM_FIELD(aes_xts_multi_block_be_tweak,                   1010,  1);
UCT_MLX5_PRM_FIELD(log_max_current_mc_list,                        1011,  5);
UCT_MLX5_PRM_FIELD(log_max_current_uc_list,                        1019,  5);
UCT_MLX5_PRM_FIELD(general_obj_types,                              1024, 64);
UCT_MLX5_PRM_FIELD(sq_ts_format,                                   1088,  2);
UCT_MLX5_PRM_FIELD(rq_ts_format,                                   1090,  2);
UCT_MLX5_PRM_FIELD(steering_format_version,                        1092,  4);
UCT_MLX5_PRM_FIELD(create_qp_start_hint,                           1096, 24);
UCT_MLX5_PRM_FIELD(crypto,                                         1129,  1);
UCT_MLX5_PRM_FIELD(max_num_eqs,                                    1136, 16);
UCT_MLX5_PRM_FIELD(sigerr_domain_and_sig_type,                     1152,  1);
UCT_MLX5_PRM_FIELD(log_max_l2_table,                               1155,  5);
UCT_MLX5_PRM_FIELD(log_uar_page_sz,                                1168, 16);
UCT_MLX5_PRM_FIELD(device_frequency_mhz,                           1216, 32);
UCT_MLX5_PRM_FIELD(device_frequency_khz,                           1248, 32);
UCT_MLX5_PRM_FIELD(capi,                                           1280,  1);
UCT_MLX5_PRM_FIELD(create_pec,                                     1281,  1);
UCT_MLX5_PRM_FIELD(nvmf_target_offload,                            1282,  1);
UCT_MLX5_PRM_FIELD(capi_invalidate,                                1283,  1);
UCT_MLX5_PRM_FIELD(log_max_pasid,                                  1307,  5);
UCT_MLX5_PRM_FIELD(num_of_uars_per_page,                           1312, 32);
UCT_MLX5_PRM_FIELD(flex_parser_protocols,                          1344, 32);
UCT_MLX5_PRM_FIELD(flex_parser_header_modify,                      1392,  1);
UCT_MLX5_PRM_FIELD(log_max_guaranteed_connections,                 1395,  5);
UCT_MLX5_PRM_FIELD(log_max_dct_connections,                        1403,  5);
UCT_MLX5_PRM_FIELD(log_max_atomic_size_qp,                         1408,  8);
UCT_MLX5_PRM_FIELD(log_max_atomic_size_dc,                         1432,  8);
UCT_MLX5_PRM_FIELD(mini_cqe_resp_stride_index,                     1468,  1);
UCT_MLX5_PRM_FIELD(cqe_128_always,                                 1469,  1);
UCT_MLX5_PRM_FIELD(cqe_compression_128b,                           1470,  1);
UCT_MLX5_PRM_FIELD(cqe_compression,                                1471,  1);
UCT_MLX5_PRM_FIELD(cqe_compression_timeout,                        1472, 16);
UCT_MLX5_PRM_FIELD(cqe_compression_max_num,                        1488, 16);
UCT_MLX5_PRM_FIELD(flex_parser_id_gtpu_dw_0,                       1512,  4);
UCT_MLX5_PRM_FIELD(log_max_tm_offloaded_op_size,                   1516,  4);
UCT_MLX5_PRM_FIELD(tag_matching,                                   1520,  1);
UCT_MLX5_PRM_FIELD(rndv_offload_rc,                                1521,  1);
UCT_MLX5_PRM_FIELD(rndv_offload_dc,                                1522,  1);
UCT_MLX5_PRM_FIELD(log_tag_matching_list_sz,                       1523,  5);
UCT_MLX5_PRM_FIELD(log_max_xrq,                                    1531,  5);
UCT_MLX5_PRM_FIELD(affiliate_nic_vport_criteria,                   1536,  8);
UCT_MLX5_PRM_FIELD(native_port_num,                                1544,  8);
UCT_MLX5_PRM_FIELD(num_vhca_ports,                                 1552,  8);
UCT_MLX5_PRM_FIELD(flex_parser_id_gtpu_teid,                       1560,  4);
UCT_MLX5_PRM_FIELD(trusted_vnic_vhca,                              1565,  1);
UCT_MLX5_PRM_FIELD(sw_owner_id,                                    1566,  1);
UCT_MLX5_PRM_FIELD(reserve_not_to_use,                             1567,  1);
UCT_MLX5_PRM_FIELD(sf,                                             1664,  1);
UCT_MLX5_PRM_FIELD(flex_parser_id_geneve_opt_0,                    1732,  4);
UCT_MLX5_PRM_FIELD(flex_parser_id_icmp_dw1,                        1736,  4);
UCT_MLX5_PRM_FIELD(flex_parser_id_icmp_dw0,                        1740,  4);
UCT_MLX5_PRM_FIELD(flex_parser_id_icmpv6_dw1,                      1744,  4);
UCT_MLX5_PRM_FIELD(flex_parser_id_icmpv6_dw0,                      1748,  4);
UCT_MLX5_PRM_FIELD(flex_parser_id_outer_first_mpls_over_gre,       1752,  4);
UCT_MLX5_PRM_FIELD(flex_parser_id_outer_first_mpls_over_udp_label, 1756,  4);
UCT_MLX5_PRM_FIELD(flex_parser_id_gtpu_dw_2,                       1792,  4);
UCT_MLX5_PRM_FIELD(flex_parser_id_gtpu_first_ext_dw_0,             1796,  4);
UCT_MLX5_PRM_FIELD(dma_mmo_qp,                                     1864,  1);
UCT_MLX5_PRM_FIELD(log_max_num_header_modify_argument,             1891,  5);
UCT_MLX5_PRM_FIELD(log_header_modify_argument_granularity,         1900,  4);
UCT_MLX5_PRM_FIELD(log_header_modify_argument_max_alloc,           1907,  5);
UCT_MLX5_PRM_FIELD(match_definer_format_supported,                 1984, 64);
} // namespace cmd_hca_cap

namespace roce_cap {
UCT_MLX5_PRM_SIZE(2048);
UCT_MLX5_PRM_FIELD(sw_r_roce_src_udp_port,       4, 1);
UCT_MLX5_PRM_FIELD(fl_rc_qp_when_roce_disabled,  5, 1);
UCT_MLX5_PRM_FIELD(fl_rc_qp_when_roce_enabled,   6, 1);
UCT_MLX5_PRM_FIELD(qp_ts_format,                30, 2);
} // namespace roce_cap

namespace atomic_cap {
UCT_MLX5_PRM_SIZE(2048);
UCT_MLX5_PRM_FIELD(atomic_req_8B_endianness_mode,               64,  2);
UCT_MLX5_PRM_FIELD(supported_atomic_req_8B_endianness_mode_1,   70,  1);
UCT_MLX5_PRM_FIELD(atomic_operations,                          144, 16);
UCT_MLX5_PRM_FIELD(atomic_size_qp,                             176, 16);
UCT_MLX5_PRM_FIELD(atomic_size_dc,                             208, 16);
UCT_MLX5_PRM_FIELD(fetch_add_pci_atomic,                       640, 16);
UCT_MLX5_PRM_FIELD(swap_pci_atomic,                            656, 16);
UCT_MLX5_PRM_FIELD(compare_swap_pci_atomic,                    672, 16);
} // namespace atomic_cap

namespace device_mem_cap {
UCT_MLX5_PRM_SIZE(2048);
UCT_MLX5_PRM_FIELD(memic,                                0,  1);
UCT_MLX5_PRM_FIELD(log_min_memic_alloc_size,            43,  5);
UCT_MLX5_PRM_FIELD(log_max_memic_addr_alignment,        56,  8);
UCT_MLX5_PRM_FIELD(memic_bar_start_addr,                64, 64);
UCT_MLX5_PRM_FIELD(memic_bar_size,                     128, 32);
UCT_MLX5_PRM_FIELD(max_memic_size,                     160, 32);
} // namespace device_mem_cap

/* Only the members whose layouts are defined here */
namespace hca_cap_union {
UCT_MLX5_PRM_SIZE(32768);
UCT_MLX5_PRM_EMBED(cmd_hca_cap, 0, 2048, cmd_hca_cap);
UCT_MLX5_PRM_EMBED(atomic_caps, 0, 2048, atomic_cap);
UCT_MLX5_PRM_EMBED(roce_caps,   0, 2048, roce_cap);
UCT_MLX5_PRM_EMBED(device_mem_caps, 0, 2048, device_mem_cap);
} // namespace hca_cap_union

namespace query_hca_cap_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,          0, 16);
UCT_MLX5_PRM_FIELD(op_mod,         48, 16);
UCT_MLX5_PRM_FIELD(other_function, 64,  1);
UCT_MLX5_PRM_FIELD(function_id,    80, 16);
} // namespace query_hca_cap_in

namespace query_hca_cap_out {
UCT_MLX5_PRM_SIZE(32896);
UCT_MLX5_PRM_FIELD(status,       0,     8);
UCT_MLX5_PRM_FIELD(syndrome,    32,    32);
UCT_MLX5_PRM_EMBED(capability, 128, 32768, hca_cap_union);
} // namespace query_hca_cap_out

/* An InfiniBand port as its vport sees it: PortInfo's state and
 * addresses, and the SLs the subnet routes out of order (ooo_sl_mask) */
namespace hca_vport_context {
UCT_MLX5_PRM_SIZE(4096);
UCT_MLX5_PRM_FIELD(has_smi,                257,  1);
UCT_MLX5_PRM_FIELD(grh_required,           259,  1);
UCT_MLX5_PRM_FIELD(port_physical_state,    272,  4);
UCT_MLX5_PRM_FIELD(vport_state_policy,     276,  4);
UCT_MLX5_PRM_FIELD(port_state,             280,  4);
UCT_MLX5_PRM_FIELD(vport_state,            284,  4);
UCT_MLX5_PRM_FIELD(system_image_guid,      320, 64);
UCT_MLX5_PRM_FIELD(port_guid,              384, 64);
UCT_MLX5_PRM_FIELD(node_guid,              448, 64);
UCT_MLX5_PRM_FIELD(cap_mask1,              512, 32);
UCT_MLX5_PRM_FIELD(ooo_sl_mask,            656, 16);
UCT_MLX5_PRM_FIELD(lid,                    768, 16);
UCT_MLX5_PRM_FIELD(lmc,                    792,  3);
UCT_MLX5_PRM_FIELD(subnet_timeout,         795,  5);
UCT_MLX5_PRM_FIELD(sm_lid,                 800, 16);
UCT_MLX5_PRM_FIELD(sm_sl,                  816,  4);
UCT_MLX5_PRM_FIELD(qkey_violation_counter, 832, 16);
UCT_MLX5_PRM_FIELD(pkey_violation_counter, 848, 16);
} // namespace hca_vport_context

namespace query_hca_vport_context_in {
UCT_MLX5_PRM_SIZE(128);
UCT_MLX5_PRM_FIELD(opcode,         0, 16);
UCT_MLX5_PRM_FIELD(op_mod,        48, 16);
UCT_MLX5_PRM_FIELD(other_vport,   64,  1);
UCT_MLX5_PRM_FIELD(port_num,      76,  4);
UCT_MLX5_PRM_FIELD(vport_number,  80, 16);
} // namespace query_hca_vport_context_in

namespace query_hca_vport_context_out {
UCT_MLX5_PRM_SIZE(4224);
UCT_MLX5_PRM_FIELD(status,       0,  8);
UCT_MLX5_PRM_FIELD(syndrome,    32, 32);
UCT_MLX5_PRM_EMBED(hca_vport_context, 128, 4096, hca_vport_context);
} // namespace query_hca_vport_context_out

/* The offsets every DevX RC connect relies on, as the PRM documents them */
static_assert((init2rtr_qp_in::opcode::offset         ==    0) &&
              (init2rtr_qp_in::qpn::offset            ==   72) &&
              (init2rtr_qp_in::opt_param_mask::offset ==  128) &&
              (init2rtr_qp_in::qpc::offset            ==  192) &&
              (init2rtr_qp_in::qpc::width             == 1856) &&
              (qpc::primary_address_path::width       ==  352),
              "INIT2RTR layout");
static_assert((ads::grh::offset            ==  40) &&
              (ads::mlid::offset           ==  41) &&
              (ads::rlid::offset           ==  48) &&
              (ads::src_addr_index::offset ==  72) &&
              (ads::hop_limit::offset      ==  88) &&
              (ads::tclass::offset         == 100) &&
              (ads::flow_label::offset     == 108) &&
              (ads::rgid_rip::offset       == 128) &&
              (ads::dscp::offset           == 266) &&
              (ads::udp_sport::offset      == 272) &&
              (ads::eth_prio::offset       == 289) &&
              (ads::sl::offset             == 292) &&
              (ads::vhca_port_num::offset  == 296) &&
              (ads::rmac_47_32::offset     == 304) &&
              (ads::rmac_31_0::offset      == 320),
              "address path layout");
static_assert((query_hca_cap_out::capability::offset           == 128) &&
              (cmd_hca_cap::fl_rc_qp_when_roce_disabled::offset == 584) &&
              (roce_cap::fl_rc_qp_when_roce_disabled::offset    ==   5) &&
              (roce_cap::fl_rc_qp_when_roce_enabled::offset     ==   6),
              "force-loopback capability layout");

} // namespace uct_mlx5_prm

#endif
