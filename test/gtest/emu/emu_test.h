/*
 * Shared pieces of the emulated device's tests: a fixture that installs the
 * emulated glue table, a log capture, and PRM command buffers written and
 * read with bit positions hard-coded from the PRM facts (../shared/prm), so
 * that the emulator's decoding (through prm.h) is checked against an
 * independent source.
 */
#ifndef UCT_IB_MLX5_EMU_TEST_H_
#define UCT_IB_MLX5_EMU_TEST_H_

#include <uct/api/tools/ib_glue.h>
#include <emu/api/emu.h>
#include <ucs/debug/log_def.h>

#include <common/hwpath.h>
#include <common/test.h>

#include <endian.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>


namespace emu_test {

/* ------------------------------------------------------------------------
 * PRM facts: bit offset and width of every field the tests write or read
 */
struct field {
    unsigned offset;
    unsigned width;
};

constexpr field operator+(unsigned base, field f)
{
    return {base + f.offset, f.width};
}

namespace prm {

/* Command header (in) and result header (out) */
constexpr field opcode          {  0, 16};
constexpr field op_mod          { 48, 16};
constexpr field status          {  0,  8};
constexpr field syndrome        { 32, 32};

/* QP commands */
constexpr field qpn             { 72, 24}; /* in: modify/query/destroy */
constexpr field opt_param_mask  {128, 32};
constexpr unsigned QPC          = 192;     /* create, modify, query_qp_out */
constexpr field out_qpn         { 72, 24}; /* create_qp_out */
constexpr field wq_umem_offset  {2048, 64};
constexpr field wq_umem_id      {2112, 32};
constexpr field wq_umem_valid   {2144,  1};
constexpr field qpc_ext         { 64,  1}; /* rts2rts_qp_in */
constexpr size_t QP_CMD_BYTES   = 2176 / 8; /* with a QPC */
constexpr size_t HDR_BYTES      = 128 / 8;

/* Relative to the QPC */
namespace qpc {
constexpr field state           {   0,  4};
constexpr field lag_tx_port_affinity {4, 4};
constexpr field st              {   8,  8};
constexpr field pm_state        {  19,  2};
constexpr field pd              {  40, 24};
constexpr field mtu             {  64,  3};
constexpr field log_msg_max     {  67,  5};
constexpr field log_rq_size     {  73,  4};
constexpr field log_rq_stride   {  77,  3};
constexpr field no_sq           {  80,  1};
constexpr field log_sq_size     {  81,  4};
constexpr field counter_set_id  {  96,  8};
constexpr field uar_page        { 104, 24};
constexpr field user_index      { 136, 24};
constexpr field remote_qpn      { 168, 24};
constexpr unsigned PRIMARY_PATH = 192;
constexpr field log_sra_max     { 904,  3};
constexpr field retry_count     { 909,  3};
constexpr field rnr_retry       { 912,  3};
constexpr field next_send_psn   { 968, 24};
constexpr field cqn_snd         {1000, 24};
constexpr field log_rra_max     {1160,  3};
constexpr field atomic_mode     {1164,  4};
constexpr field rre             {1168,  1};
constexpr field rwe             {1169,  1};
constexpr field rae             {1170,  1};
constexpr field min_rnr_nak     {1187,  5};
constexpr field next_rcv_psn    {1192, 24};
constexpr field cqn_rcv         {1256, 24};
constexpr field dbr_addr        {1280, 64};
constexpr field rq_type         {1381,  3};
constexpr field srqn            {1384, 24};
constexpr field cs_req          {1584,  8};
constexpr field cs_res          {1592,  8};
constexpr field dbr_umem_valid  {1667,  1};
constexpr field dbr_umem_id     {1824, 32};
} // namespace qpc

/* Relative to an address path */
namespace ads {
constexpr field fl              {  0,  1};
constexpr field free_ar         {  1,  1};
constexpr field pkey_index      { 16, 16};
constexpr field grh             { 40,  1};
constexpr field mlid            { 41,  7};
constexpr field rlid            { 48, 16};
constexpr field ack_timeout     { 64,  5};
constexpr field src_addr_index  { 72,  8};
constexpr field stat_rate       { 84,  4};
constexpr field hop_limit       { 88,  8};
constexpr field tclass          {100,  8};
constexpr field flow_label      {108, 20};
constexpr unsigned RGID         = 128;      /* 16 bytes */
constexpr field f_dscp          {260,  1};
constexpr field f_ecn           {261,  1};
constexpr field f_eth_prio      {263,  1};
constexpr field ecn             {264,  2};
constexpr field dscp            {266,  6};
constexpr field udp_sport       {272, 16};
constexpr field dei_cfi         {288,  1};
constexpr field eth_prio        {289,  3};
constexpr field sl              {292,  4};
constexpr field vhca_port_num   {296,  8};
constexpr field rmac_47_32      {304, 16};
constexpr field rmac_31_0       {320, 32};
} // namespace ads

/* QUERY_HCA_CAP */
constexpr field other_function  { 64,  1};
constexpr unsigned CAPABILITY   = 128;
constexpr size_t HCA_CAP_OUT_BYTES = 32896 / 8;
namespace cap {
constexpr field log_max_srq_sz  {128,  8};
constexpr field log_max_qp_sz   {136,  8};
constexpr field log_max_qp      {155,  5};
constexpr field log_max_cq_sz   {200,  8};
constexpr field log_max_ra_req_qp {330, 6};
constexpr field log_max_ra_res_qp {346, 6};
constexpr field gid_table_size  {368, 16};
constexpr field port_type       {438,  2};
constexpr field device_memory   {424,  1};
constexpr field num_ports       {440,  8};
constexpr field log_max_msg     {451,  5};
constexpr field roce            {541,  1};
constexpr field rc              {575,  1};
constexpr field fl_rc_qp_when_roce_disabled {584, 1};
constexpr field ooo_sl_mask     {312,  1};
constexpr field max_wqe_sz_rq   {688, 16};
constexpr field log_max_pd      {811,  5};
} // namespace cap
namespace roce_cap {
constexpr field sw_r_roce_src_udp_port      {4, 1};
constexpr field fl_rc_qp_when_roce_disabled {5, 1};
constexpr field fl_rc_qp_when_roce_enabled  {6, 1};
} // namespace roce_cap
namespace atomic_caps {
constexpr field atomic_operations {144, 16};
constexpr field atomic_size_qp    {176, 16};
constexpr field atomic_size_dc    {208, 16};
} // namespace atomic_caps
namespace device_mem_caps {
constexpr field memic                    {  0,  1};
constexpr field log_min_memic_alloc_size { 43,  5};
constexpr field max_memic_size           {160, 32};
} // namespace device_mem_caps

/* QUERY_HCA_VPORT_CONTEXT */
constexpr field other_vport     { 64,  1};
constexpr field vport_port_num  { 76,  4};
constexpr unsigned VPORT_CONTEXT = 128;
constexpr size_t VPORT_OUT_BYTES = (128 + 4096) / 8;
namespace vport {
constexpr field port_state      {280,  4};
constexpr field vport_state     {284,  4};
constexpr field port_guid       {384, 64};
constexpr field ooo_sl_mask     {656, 16};
constexpr field lid             {768, 16};
constexpr field lmc             {792,  3};
constexpr field sm_lid          {800, 16};
} // namespace vport

/* Opcodes (opcodes.csv) */
enum : uint16_t {
    QUERY_HCA_CAP   = 0x100,
    CREATE_MKEY     = 0x200,
    CREATE_QP       = 0x500,
    DESTROY_QP      = 0x501,
    RST2INIT_QP     = 0x502,
    INIT2RTR_QP     = 0x503,
    RTR2RTS_QP      = 0x504,
    RTS2RTS_QP      = 0x505,
    SQERR2RTS_QP    = 0x506,
    QP_2ERR         = 0x507,
    QP_2RST         = 0x50a,
    QUERY_QP        = 0x50b,
    SQD_RTS_QP      = 0x50c,
    INIT2INIT_QP    = 0x50e,
    QUERY_NIC_VPORT_CONTEXT = 0x754,
    QUERY_HCA_VPORT_CONTEXT = 0x762, /* the PRM's; not in opcodes.csv */
    CREATE_UMEM     = 0xa08,
    DESTROY_UMEM    = 0xa0a
};

/* qpc.state */
enum : uint8_t {
    QP_RST  = 0x0,
    QP_INIT = 0x1,
    QP_RTR  = 0x2,
    QP_RTS  = 0x3,
    QP_ERR  = 0x6
};

/* Firmware statuses */
enum : uint8_t {
    BAD_OP         = 0x02,
    BAD_PARAM      = 0x03,
    BAD_RESOURCE   = 0x05,
    RESOURCE_BUSY  = 0x06,
    EXCEED_LIM     = 0x08,
    BAD_RES_STATE  = 0x09,
    BAD_INPUT_LEN  = 0x50,
    BAD_OUTPUT_LEN = 0x51
};

/* opt_param_mask */
constexpr uint32_t OPT_RRE = 1u << 1;
constexpr uint32_t OPT_RAE = 1u << 2;
constexpr uint32_t OPT_RWE = 1u << 3;
constexpr uint32_t OPT_LAG_TX_AFF = 1u << 15;

} // namespace prm


/* A zeroed PRM buffer, big endian, bit 0 the MSB of byte 0; written bit by
 * bit so that it shares nothing with the library's accessors */
class prm_buf {
public:
    explicit prm_buf(size_t bytes) : m_bytes(bytes, 0)
    {
    }

    void set(field f, uint64_t value)
    {
        for (unsigned i = 0; i < f.width; ++i) {
            unsigned bit = f.offset + i;
            uint8_t mask = static_cast<uint8_t>(0x80 >> (bit % 8));
            bool one     = (value >> (f.width - 1 - i)) & 1;

            at(bit / 8) = one ? (at(bit / 8) | mask) : (at(bit / 8) & ~mask);
        }
    }

    uint64_t get(field f) const
    {
        uint64_t value = 0;

        for (unsigned i = 0; i < f.width; ++i) {
            unsigned bit = f.offset + i;
            value = (value << 1) | ((at(bit / 8) >> (7 - bit % 8)) & 1);
        }
        return value;
    }

    void set_bytes(unsigned bit_offset, const void *src, size_t len)
    {
        EXPECT_EQ(0u, bit_offset % 8);
        EXPECT_LE(bit_offset / 8 + len, m_bytes.size());
        memcpy(&m_bytes[bit_offset / 8], src, len);
    }

    void get_bytes(unsigned bit_offset, void *dst, size_t len) const
    {
        memcpy(dst, &m_bytes[bit_offset / 8], len);
    }

    void *data()
    {
        return m_bytes.data();
    }

    size_t size() const
    {
        return m_bytes.size();
    }

private:
    uint8_t &at(size_t i)
    {
        return m_bytes.at(i);
    }

    uint8_t at(size_t i) const
    {
        return m_bytes.at(i);
    }

    std::vector<uint8_t> m_bytes;
};


/* Captures warnings and errors while it lives */
using log_capture = ucs::scoped_log_capture;


/* A GID from its 16 bytes */
inline union ibv_gid make_gid(std::initializer_list<uint8_t> bytes)
{
    union ibv_gid gid = {};

    std::copy(bytes.begin(), bytes.end(), gid.raw);
    return gid;
}

/* fe80::/64 + modified EUI-64 of a MAC, computed here from RFC 4291 */
inline union ibv_gid link_local_gid(const uct_ib_emu_mac_t &mac)
{
    return make_gid({0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                     static_cast<uint8_t>(mac[0] ^ 0x02), mac[1], mac[2],
                     0xff, 0xfe, mac[3], mac[4], mac[5]});
}

/* ::ffff:a.b.c.d */
inline union ibv_gid ipv4_gid(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    return make_gid({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d});
}

inline std::string gid_hex(const uint8_t *raw)
{
    char buf[64];
    size_t pos = 0;

    for (int i = 0; i < 16; ++i) {
        pos += snprintf(buf + pos, sizeof(buf) - pos, "%02x%s", raw[i],
                        ((i % 2) && (i < 15)) ? ":" : "");
    }
    return buf;
}

/* The default topology's addresses, as emu.h documents them */
const uct_ib_emu_mac_t MAC_MLX5_0 = {0x02, 0xc9, 0x00, 0x00, 0x00, 0x01};
const uct_ib_emu_mac_t MAC_MLX5_1 = {0x02, 0xc9, 0x00, 0x00, 0x00, 0x02};
constexpr uint16_t LID_MLX5_2     = 0x11;
constexpr uint16_t LID_MLX5_3     = 0x12; /* LMC 1: 0x13 is its too */


/* The resources a DevX QP needs, created on one context */
/* mlx5dv_create_qp as the md's UMR QP: a verbs QP with send ops (by
 * default RC, MR list and local invalidate), sq_len sends, one receive */
inline struct ibv_qp *
create_umr_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
              unsigned sq_len = 4,
              uint64_t ibv_ops = IBV_QP_EX_WITH_LOCAL_INV,
              uint64_t dv_ops = MLX5DV_QP_EX_WITH_MR_LIST,
              enum ibv_qp_type type = IBV_QPT_RC)
{
    struct ibv_qp_init_attr_ex attr    = {};
    struct mlx5dv_qp_init_attr dv_attr = {};

    attr.qp_type           = type;
    attr.send_cq           = cq;
    attr.recv_cq           = cq;
    attr.cap.max_send_wr   = sq_len;
    attr.cap.max_recv_wr   = 1;
    attr.cap.max_send_sge  = 1;
    attr.cap.max_recv_sge  = 1;
    attr.pd                = pd;
    attr.comp_mask         = IBV_QP_INIT_ATTR_PD |
                             IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    attr.send_ops_flags    = ibv_ops;
    dv_attr.comp_mask      = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
    dv_attr.send_ops_flags = dv_ops;
    return uct_ib_glue->mlx5dv_create_qp(ctx, &attr, &dv_attr);
}

struct devx_env {
    struct ibv_context      *ctx      = nullptr;
    struct ibv_pd           *pd       = nullptr;
    uint32_t                pdn       = 0;
    struct ibv_cq           *cq       = nullptr;
    uint32_t                cqn       = 0;
    struct mlx5dv_devx_uar  *uar      = nullptr;
    std::vector<uint8_t>    wq_buf;
    struct mlx5dv_devx_umem *wq_umem  = nullptr;
    std::vector<uint8_t>    dbr_buf;
    struct mlx5dv_devx_umem *dbr_umem = nullptr;
};

/* A DevX QP and its number */
struct devx_qp {
    struct mlx5dv_devx_obj *obj = nullptr;
    uint32_t               qpn  = 0;
};


/*
 * Installs the emulated glue table on the default topology; everything the
 * test opened is closed at the end, and nothing may be left to reclaim.
 */
class emu_fixture : public ucs::test_base {
protected:
    static constexpr uint8_t LOG_SQ_SIZE   = 6;
    static constexpr uint8_t LOG_RQ_SIZE   = 6;
    static constexpr uint8_t LOG_RQ_STRIDE = 2; /* 64-byte receive WQEs */

    void init() override
    {
        UCS_SKIP_ON_HWPATH("a test of the emulated device through its own "
                           "glue table");
        ASSERT_EQ(UCS_OK, uct_ib_emu_reset());
        ASSERT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_emu_glue_ops));
    }

    void cleanup() override
    {
        while (!m_contexts.empty()) {
            close(m_contexts.back());
        }

        EXPECT_EQ(0u, uct_ib_emu_counters().objects_reclaimed)
                << "the test left objects behind";
        uct_ib_emu_clear_faults();
        EXPECT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_glue_rdma_core_ops));
        EXPECT_EQ(UCS_OK, uct_ib_emu_reset());
    }

    /* The device called name, from a device list freed right away */
    struct ibv_device *device(const std::string &name)
    {
        struct ibv_device *found = nullptr;
        int num                  = 0;
        struct ibv_device **list = uct_ib_glue->get_device_list(&num);

        EXPECT_NE(nullptr, list);
        for (int i = 0; (list != nullptr) && (i < num); ++i) {
            if (name == uct_ib_glue->get_device_name(list[i])) {
                found = list[i];
            }
        }
        if (list != nullptr) {
            uct_ib_glue->free_device_list(list);
        }

        EXPECT_NE(nullptr, found) << "no device " << name;
        return found;
    }

    struct ibv_context *open(const std::string &name, bool want_devx = true,
                             int *devx_p = nullptr)
    {
        struct ibv_context *ctx = nullptr;
        struct ibv_device *dev  = device(name);

        if (dev == nullptr) {
            return nullptr;
        }

        EXPECT_EQ(UCS_OK,
                  uct_ib_glue_open_device(dev, want_devx, &ctx, devx_p));
        if (ctx != nullptr) {
            m_contexts.push_back(ctx);
        }
        return ctx;
    }

    void close(struct ibv_context *ctx)
    {
        m_contexts.erase(std::remove(m_contexts.begin(), m_contexts.end(), ctx),
                         m_contexts.end());
        EXPECT_EQ(UCS_OK, uct_ib_glue_close_device(ctx));
    }

    static union ibv_gid gid_of(struct ibv_context *ctx, uint32_t port,
                                uint32_t index)
    {
        struct ibv_gid_entry entry = {};

        EXPECT_EQ(0, uct_ib_glue->query_gid_ex(ctx, port, index, &entry, 0));
        return entry.gid;
    }

    static uint32_t pdn_of(struct ibv_pd *pd)
    {
        struct mlx5dv_pd dvpd = {};
        struct mlx5dv_obj obj = {};

        obj.pd.in  = pd;
        obj.pd.out = &dvpd;
        EXPECT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD));
        return dvpd.pdn;
    }

    static struct mlx5dv_cq dv_cq(struct ibv_cq *cq)
    {
        struct mlx5dv_cq dvcq = {};
        struct mlx5dv_obj obj = {};

        obj.cq.in  = cq;
        obj.cq.out = &dvcq;
        EXPECT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ));
        return dvcq;
    }

    static struct mlx5_wqe_av av_of(struct ibv_ah *ah)
    {
        struct mlx5_wqe_av av = {};
        struct mlx5dv_ah dvah = {};
        struct mlx5dv_obj obj = {};

        obj.ah.in  = ah;
        obj.ah.out = &dvah;
        EXPECT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH));
        if (dvah.av != nullptr) {
            av = *dvah.av;
        }
        return av;
    }

    void env_init(devx_env &env, struct ibv_context *ctx)
    {
        /* a receive queue and a send queue of 64-byte entries */
        size_t wq_len = (size_t(64) << LOG_SQ_SIZE) +
                        ((size_t(16) << LOG_RQ_STRIDE) << LOG_RQ_SIZE);

        env.ctx = ctx;
        env.pd  = uct_ib_glue->alloc_pd(ctx);
        ASSERT_NE(nullptr, env.pd);
        env.pdn = pdn_of(env.pd);
        env.cq  = uct_ib_glue->create_cq(ctx, 128, nullptr, nullptr, 0);
        ASSERT_NE(nullptr, env.cq);
        env.cqn = dv_cq(env.cq).cqn;
        env.uar = uct_ib_glue->devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_BF);
        ASSERT_NE(nullptr, env.uar);
        env.wq_buf.resize(wq_len);
        env.wq_umem = uct_ib_glue->devx_umem_reg(ctx, env.wq_buf.data(),
                                                 wq_len,
                                                 IBV_ACCESS_LOCAL_WRITE);
        ASSERT_NE(nullptr, env.wq_umem);
        env.dbr_buf.resize(64);
        env.dbr_umem = uct_ib_glue->devx_umem_reg(ctx, env.dbr_buf.data(),
                                                  env.dbr_buf.size(),
                                                  IBV_ACCESS_LOCAL_WRITE);
        ASSERT_NE(nullptr, env.dbr_umem);
    }

    void env_cleanup(devx_env &env)
    {
        EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(env.dbr_umem));
        EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(env.wq_umem));
        uct_ib_glue->devx_free_uar(env.uar);
        EXPECT_EQ(0, uct_ib_glue->destroy_cq(env.cq));
        EXPECT_EQ(0, uct_ib_glue->dealloc_pd(env.pd));
        env = devx_env();
    }

    /* A valid CREATE_QP for env: RC, regular RQ, umem-backed WQ and DBR */
    static prm_buf create_qp_cmd(const devx_env &env)
    {
        using namespace prm;
        prm_buf in(QP_CMD_BYTES);

        in.set(opcode, CREATE_QP);
        in.set(QPC + qpc::st, 0);
        in.set(QPC + qpc::pd, env.pdn);
        in.set(QPC + qpc::log_sq_size, LOG_SQ_SIZE);
        in.set(QPC + qpc::log_rq_size, LOG_RQ_SIZE);
        in.set(QPC + qpc::log_rq_stride, LOG_RQ_STRIDE);
        in.set(QPC + qpc::uar_page, env.uar->page_id);
        in.set(QPC + qpc::cqn_snd, env.cqn);
        in.set(QPC + qpc::cqn_rcv, env.cqn);
        in.set(QPC + qpc::dbr_umem_valid, 1);
        in.set(QPC + qpc::dbr_umem_id, env.dbr_umem->umem_id);
        in.set(QPC + qpc::dbr_addr, 0);
        in.set(wq_umem_valid, 1);
        in.set(wq_umem_id, env.wq_umem->umem_id);
        return in;
    }

    static devx_qp create_qp(const devx_env &env, prm_buf &in)
    {
        prm_buf out(prm::HDR_BYTES);
        devx_qp qp;

        qp.obj = uct_ib_glue->devx_obj_create(env.ctx, in.data(), in.size(),
                                              out.data(), out.size());
        EXPECT_NE(nullptr, qp.obj)
                << "errno " << errno << " status 0x" << std::hex
                << out.get(prm::status) << " syndrome 0x"
                << out.get(prm::syndrome);
        qp.qpn = static_cast<uint32_t>(out.get(prm::out_qpn));
        return qp;
    }

    static devx_qp create_qp(const devx_env &env)
    {
        prm_buf in = create_qp_cmd(env);
        return create_qp(env, in);
    }

    static prm_buf modify_cmd(uint16_t op, uint32_t qpn,
                              size_t bytes = prm::QP_CMD_BYTES)
    {
        prm_buf in(bytes);

        in.set(prm::opcode, op);
        in.set(prm::qpn, qpn);
        return in;
    }

    static prm_buf rst2init_cmd(uint32_t qpn, uint8_t port = 1)
    {
        using namespace prm;
        prm_buf in = modify_cmd(RST2INIT_QP, qpn);
        unsigned path = QPC + qpc::PRIMARY_PATH;

        in.set(path + ads::vhca_port_num, port);
        in.set(QPC + qpc::rwe, 1);
        in.set(QPC + qpc::rre, 1);
        return in;
    }

    /* INIT2RTR towards a RoCE peer, with its MAC and GID */
    static prm_buf init2rtr_roce_cmd(uint32_t qpn, uint32_t remote_qpn,
                                     const uct_ib_emu_mac_t &rmac,
                                     const union ibv_gid &rgid,
                                     uint8_t sgid_index)
    {
        using namespace prm;
        prm_buf in = modify_cmd(INIT2RTR_QP, qpn);
        unsigned path = QPC + qpc::PRIMARY_PATH;

        in.set(QPC + qpc::mtu, 3);
        in.set(QPC + qpc::log_msg_max, 30);
        in.set(QPC + qpc::remote_qpn, remote_qpn);
        in.set(QPC + qpc::log_rra_max, 2);
        in.set(QPC + qpc::min_rnr_nak, 12);
        in.set(path + ads::vhca_port_num, 1);
        in.set(path + ads::src_addr_index, sgid_index);
        in.set(path + ads::hop_limit, 64);
        in.set_bytes(path + ads::RGID, rgid.raw, 16);
        in.set_bytes(path + ads::rmac_47_32.offset, rmac.data(), 6);
        return in;
    }

    /* INIT2RTR towards an InfiniBand peer, without GRH */
    static prm_buf init2rtr_ib_cmd(uint32_t qpn, uint32_t remote_qpn,
                                   uint16_t rlid)
    {
        using namespace prm;
        prm_buf in = modify_cmd(INIT2RTR_QP, qpn);
        unsigned path = QPC + qpc::PRIMARY_PATH;

        in.set(QPC + qpc::mtu, 5);
        in.set(QPC + qpc::log_msg_max, 30);
        in.set(QPC + qpc::remote_qpn, remote_qpn);
        in.set(path + ads::vhca_port_num, 1);
        in.set(path + ads::rlid, rlid);
        return in;
    }

    static prm_buf rtr2rts_cmd(uint32_t qpn)
    {
        using namespace prm;
        prm_buf in = modify_cmd(RTR2RTS_QP, qpn);

        in.set(QPC + qpc::retry_count, 7);
        in.set(QPC + qpc::rnr_retry, 7);
        in.set(QPC + qpc::log_sra_max, 2);
        in.set(QPC + qpc::PRIMARY_PATH + ads::ack_timeout, 14);
        return in;
    }

    /* Run a modify command: 0 or the errno; *out holds the result header */
    static int modify(const devx_qp &qp, prm_buf &in, prm_buf *out = nullptr)
    {
        prm_buf local_out(prm::HDR_BYTES);
        prm_buf *o = (out != nullptr) ? out : &local_out;

        return uct_ib_glue->devx_obj_modify(qp.obj, in.data(), in.size(),
                                            o->data(), o->size());
    }

    static uint8_t qp_state(uint32_t qpn)
    {
        uct_ib_emu_qp_info_t info;

        EXPECT_EQ(UCS_OK, uct_ib_emu_qp_info(qpn, &info));
        return info.state;
    }

    /* Expect a modify to fail in the firmware with status and syndrome */
    static void expect_fw_failure(const devx_qp &qp, prm_buf &in,
                                  uint8_t status, uint32_t syndrome)
    {
        prm_buf out(prm::HDR_BYTES);
        uint8_t state_before = qp_state(qp.qpn);

        EXPECT_EQ(EREMOTEIO, modify(qp, in, &out));
        EXPECT_EQ(status, out.get(prm::status));
        EXPECT_EQ(syndrome, out.get(prm::syndrome))
                << uct_ib_emu_syndrome_str(
                           static_cast<uint32_t>(out.get(prm::syndrome)));
        EXPECT_EQ(state_before, qp_state(qp.qpn)) << "a failed modify "
                                                     "changed the state";
    }

    std::vector<struct ibv_context*> m_contexts;
};

} // namespace emu_test

#endif
