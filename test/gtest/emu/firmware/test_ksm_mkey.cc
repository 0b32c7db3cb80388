/*
 * DevX KSM mkeys on the emulated device: the capability, CREATE_MKEY in KSM
 * mode as UCX 1.13.1's mlx5 md builds its atomic key (the range shifted by
 * the atomic MR offset its peer adds to the remote address), RDMA and
 * atomics through it landing in the MR its entry names, an access split
 * across entries, the bounds, the command's checks, and the release (the
 * PD's reference, an MR gone under the key). Commands are written with the
 * PRM bit positions below, independent of prm.h.
 */
#include "emu/engine_test.h"

#include <emu/api/syndrome.h>


namespace {

using namespace emu_test;

/* PRM facts of CREATE_MKEY (mlx5_ifc.h: create_mkey_in, mkc) */
namespace ksm_prm {
constexpr uint16_t CREATE_MKEY  = 0x200;
constexpr uint16_t DESTROY_MKEY = 0x202;

constexpr size_t   CMD_BYTES    = 2176 / 8; /* the entries follow */
constexpr size_t   ENTRY_BYTES  = 16;       /* reserved, mkey, address */
constexpr unsigned MKC          = 128;
constexpr field    actual_size  {768, 32};
constexpr field    mkey_index   { 72, 24};  /* create_mkey_out */

namespace mkc {
constexpr field free                      {  1,  1};
constexpr field access_mode_4_2           {  3,  3};
constexpr field a                         { 17,  1};
constexpr field rw                        { 18,  1};
constexpr field rr                        { 19,  1};
constexpr field lw                        { 20,  1};
constexpr field lr                        { 21,  1};
constexpr field access_mode_1_0           { 22,  2};
constexpr field qpn                       { 32, 24};
constexpr field mkey_7_0                  { 56,  8};
constexpr field length64                  { 96,  1};
constexpr field pd                        {104, 24};
constexpr field start_addr                {128, 64};
constexpr field len                       {192, 64};
constexpr field translations_octword_size {416, 32};
constexpr field log_entity_size           {475,  5};
} // namespace mkc

namespace cap {
constexpr field fixed_buffer_size         {264,  1};
constexpr field log_max_klm_list_size     {282,  6};
} // namespace cap

constexpr uint8_t MODE_MTT = 0x1;
constexpr uint8_t MODE_KSM = 0x3;
} // namespace ksm_prm

/* UCX's contiguous KSM: entries of 2 GiB, the region's base aligned down */
constexpr unsigned LOG_2G = 31;
constexpr uint64_t SIZE_2G = uint64_t(1) << LOG_2G;

/* What a KSM mkey maps: entry i is key at addr */
struct ksm_entry {
    uint32_t key;
    uint64_t addr;
};

/* A KSM mkey's layout */
struct ksm_spec {
    uint32_t               pdn;
    uint64_t               start;
    uint64_t               len;
    unsigned               log_entity;
    std::vector<ksm_entry> entries;
    uint8_t                tag = 0x5c;
};


class test_emu_ksm_mkey : public engine_fixture {
protected:
    void cleanup() override
    {
        /* the mkeys hold their PDs: they go first */
        for (struct mlx5dv_devx_obj *obj : m_objs) {
            EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(obj));
        }
        m_objs.clear();
        engine_fixture::cleanup();
    }

    static prm_buf create_cmd(const ksm_spec &k)
    {
        using namespace ksm_prm;
        prm_buf in(CMD_BYTES + k.entries.size() * ENTRY_BYTES);
        const unsigned mkc = MKC;

        in.set(prm::opcode, CREATE_MKEY);
        in.set(mkc + mkc::access_mode_1_0, MODE_KSM & 0x3);
        in.set(mkc + mkc::access_mode_4_2, MODE_KSM >> 2);
        in.set(mkc + mkc::a, 1);
        in.set(mkc + mkc::rw, 1);
        in.set(mkc + mkc::rr, 1);
        in.set(mkc + mkc::lw, 1);
        in.set(mkc + mkc::lr, 1);
        in.set(mkc + mkc::pd, k.pdn);
        in.set(mkc + mkc::qpn, 0xffffff);
        in.set(mkc + mkc::mkey_7_0, k.tag);
        in.set(mkc + mkc::start_addr, k.start);
        in.set(mkc + mkc::len, k.len);
        in.set(mkc + mkc::translations_octword_size, k.entries.size());
        in.set(mkc + mkc::log_entity_size, k.log_entity);
        in.set(actual_size, k.entries.size());
        for (size_t i = 0; i < k.entries.size(); ++i) {
            unsigned at = unsigned(CMD_BYTES + i * ENTRY_BYTES) * 8;

            in.set(field{at + 32, 32}, k.entries[i].key);
            in.set(field{at + 64, 64}, k.entries[i].addr);
        }
        return in;
    }

    /* The atomic key UCX 1.13.1's md makes for mr (uct_ib_md_atomic_offset
     * of the peer's atomic MR id is off): the range from the region's base
     * aligned down to 2 GiB, shifted by off, one 2 GiB entry per step */
    static ksm_spec ucx_atomic_key(uint32_t pdn, const struct ibv_mr *mr,
                                   uint64_t off)
    {
        uint64_t addr = reinterpret_cast<uintptr_t>(mr->addr);
        uint64_t base = addr & ~(SIZE_2G - 1);
        uint64_t len  = (mr->length + (addr - base) + 7) & ~uint64_t(7);
        uint64_t n    = (len + off + SIZE_2G - 1) / SIZE_2G;
        ksm_spec k;

        k.pdn        = pdn;
        k.start      = base + off;
        k.len        = len;
        k.log_entity = LOG_2G;
        for (uint64_t i = 0; i < n; ++i) {
            k.entries.push_back({mr->lkey, base + i * SIZE_2G});
        }
        return k;
    }

    /* CREATE_MKEY on ctx: the key, or 0 with *out holding the failure */
    uint32_t create(struct ibv_context *ctx, const prm_buf &cmd,
                    prm_buf *out = nullptr)
    {
        prm_buf in  = cmd;
        prm_buf own(prm::HDR_BYTES);
        prm_buf &o  = (out != nullptr) ? *out : own;
        struct mlx5dv_devx_obj *obj;

        obj = uct_ib_glue->devx_obj_create(ctx, in.data(), in.size(),
                                           o.data(), o.size());
        if (obj == nullptr) {
            EXPECT_EQ(EREMOTEIO, errno);
            return 0;
        }
        m_objs.push_back(obj);
        return (uint32_t(o.get(ksm_prm::mkey_index)) << 8) |
               in.get(ksm_prm::MKC + ksm_prm::mkc::mkey_7_0);
    }

    /* The failure CREATE_MKEY answers for cmd */
    uint32_t refused(const prm_buf &cmd, uint8_t status)
    {
        prm_buf out(prm::HDR_BYTES);

        EXPECT_EQ(0u, create(m_ctx1, cmd, &out));
        EXPECT_EQ(status, out.get(prm::status));
        return static_cast<uint32_t>(out.get(prm::syndrome));
    }

    /* m_a's operations on m_b's memory through rkey; the CQE */
    polled_cqe fetch_add(uint64_t raddr_, uint32_t rkey, uint64_t add,
                         uint64_t *result)
    {
        struct ibv_mr *lmr = local_mr(result, sizeof(*result));
        struct mlx5_wqe_atomic_seg a = {};
        auto wqe = ctrl(m_a, MLX5_OPCODE_ATOMIC_FA);

        raddr(wqe, reinterpret_cast<void*>(raddr_), rkey);
        a.swap_add = htobe64(add);
        append(wqe, a);
        data(wqe, result, sizeof(*result), lmr->lkey);
        return run(wqe);
    }

    polled_cqe rdma(uint8_t opcode, uint64_t raddr_, uint32_t rkey,
                    void *local, uint32_t len)
    {
        struct ibv_mr *lmr = local_mr(local, len);
        auto wqe = ctrl(m_a, opcode);

        raddr(wqe, reinterpret_cast<void*>(raddr_), rkey);
        data(wqe, local, len, lmr->lkey);
        return run(wqe);
    }

    static uint64_t addr_of(const void *p)
    {
        return reinterpret_cast<uintptr_t>(p);
    }

    alignas(64) uint64_t           m_remote[64]  = {};
    alignas(64) uint8_t            m_remote2[64] = {};
    std::vector<struct mlx5dv_devx_obj*> m_objs;

private:
    struct ibv_mr *local_mr(void *buf, size_t len)
    {
        return reg(m_a, buf, len);
    }

    polled_cqe run(std::vector<uint8_t> &wqe)
    {
        std::vector<polled_cqe> cqes;

        post(m_a, wqe);
        uct_ib_emu_engine_run();
        cqes = poll_all(m_a);
        EXPECT_EQ(1u, cqes.size());
        return cqes.empty() ? polled_cqe{} : cqes.front();
    }
};

} // namespace


TEST_F(test_emu_ksm_mkey, capability)
{
    prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    in.set(prm::op_mod, 1); /* general, current */
    ASSERT_EQ(0, uct_ib_glue->devx_general_cmd(m_ctx0, in.data(), in.size(),
                                               out.data(), out.size()));
    EXPECT_EQ(1u, out.get(prm::CAPABILITY + ksm_prm::cap::fixed_buffer_size));
    EXPECT_EQ(16u,
              out.get(prm::CAPABILITY + ksm_prm::cap::log_max_klm_list_size));
}

/* UCX's atomic key: the peer adds off to the address, the key's range is
 * shifted by off, and the access lands where the MR is */
TEST_F(test_emu_ksm_mkey, atomic_key_as_ucx_builds_it)
{
    const uint64_t off = 8 * 0x9b; /* a pid % 256 */
    uint64_t result = 0, readback = 0;
    uint64_t src[2] = {0x1111, 0x2222};
    uct_ib_emu_mkey_info_t info;
    struct ibv_mr *rmr;
    uint32_t key;

    connect_pair(m_a, m_b);
    m_remote[4] = 100;
    rmr = reg(m_b, m_remote, sizeof(m_remote));
    ASSERT_NE(nullptr, rmr);

    ksm_spec k = ucx_atomic_key(m_b.env.pdn, rmr, off);
    key        = create(m_ctx1, create_cmd(k));
    ASSERT_NE(0u, key);
    EXPECT_EQ(k.tag, key & 0xff);
    EXPECT_NE(rmr->rkey, key);
    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_count(ksm_prm::CREATE_MKEY));

    ASSERT_EQ(UCS_OK, uct_ib_emu_mkey_info(key, &info));
    EXPECT_TRUE(info.indirect);
    EXPECT_TRUE(info.ksm);
    EXPECT_EQ(k.start, info.start_addr);
    EXPECT_EQ(k.len, info.length);
    ASSERT_EQ(k.entries.size(), info.entries.size());
    EXPECT_EQ(rmr->lkey, info.entries[0].lkey);

    polled_cqe c = fetch_add(addr_of(&m_remote[4]) + off, key, 5, &result);
    EXPECT_EQ(MLX5_CQE_REQ, c.opcode) << "syndrome 0x" << std::hex
                                      << int(c.syndrome);
    EXPECT_EQ(100u, result);
    EXPECT_EQ(105u, m_remote[4]);

    c = rdma(MLX5_OPCODE_RDMA_WRITE, addr_of(&m_remote[8]) + off, key, src,
             sizeof(src));
    EXPECT_EQ(MLX5_CQE_REQ, c.opcode);
    EXPECT_EQ(0x1111u, m_remote[8]);
    EXPECT_EQ(0x2222u, m_remote[9]);

    c = rdma(MLX5_OPCODE_RDMA_READ, addr_of(&m_remote[4]) + off, key,
             &readback, sizeof(readback));
    EXPECT_EQ(MLX5_CQE_REQ, c.opcode);
    EXPECT_EQ(105u, readback);
}

/* Without the key, the offset address with the MR's own key is outside the
 * MR: what UCX 1.13.1 sends when the device has no KSM */
TEST_F(test_emu_ksm_mkey, offset_with_the_mr_key_is_out_of_bounds)
{
    uint64_t result = 0;
    struct ibv_mr *rmr;

    connect_pair(m_a, m_b);
    rmr = reg(m_b, m_remote, sizeof(m_remote));
    ASSERT_NE(nullptr, rmr);

    polled_cqe c = fetch_add(addr_of(&m_remote[60]) + 8 * 0x9b, rmr->rkey, 1,
                             &result);
    EXPECT_EQ(MLX5_CQE_REQ_ERR, c.opcode);
    EXPECT_EQ(MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, c.syndrome);
}

/* Two 4 KiB entries naming different MRs: a write across the entity
 * boundary is split between them */
TEST_F(test_emu_ksm_mkey, access_split_across_entries)
{
    constexpr unsigned LOG_4K = 12;
    const uint64_t start      = 0x7f0000000000ull - 4096; /* any address */
    uint8_t src[32];
    struct ibv_mr *mr1, *mr2;
    uint32_t key;
    ksm_spec k;

    connect_pair(m_a, m_b);
    mr1 = reg(m_b, m_remote, sizeof(m_remote));
    mr2 = reg(m_b, m_remote2, sizeof(m_remote2));
    ASSERT_NE(nullptr, mr1);
    ASSERT_NE(nullptr, mr2);

    /* entry 0 maps [start, start + 4K) to the 4K ending at m_remote's end,
     * entry 1 the next 4K to m_remote2 */
    k.pdn        = m_b.env.pdn;
    k.start      = start;
    k.len        = 2 * 4096;
    k.log_entity = LOG_4K;
    /* push_back, not a braced list: GCC 12 at -O2 warns of a null
     * memmove in the vector's assignment from one (-Wnonnull) */
    k.entries.push_back({mr1->lkey, addr_of(m_remote) + sizeof(m_remote) -
                                    4096});
    k.entries.push_back({mr2->lkey, addr_of(m_remote2)});
    key          = create(m_ctx1, create_cmd(k));
    ASSERT_NE(0u, key);

    for (unsigned i = 0; i < sizeof(src); ++i) {
        src[i] = static_cast<uint8_t>(0xa0 + i);
    }
    polled_cqe c = rdma(MLX5_OPCODE_RDMA_WRITE, start + 4096 - 16, key, src,
                        sizeof(src));
    EXPECT_EQ(MLX5_CQE_REQ, c.opcode) << "syndrome 0x" << std::hex
                                      << int(c.syndrome);
    EXPECT_EQ(0, memcmp(reinterpret_cast<uint8_t*>(m_remote) +
                        sizeof(m_remote) - 16, src, 16));
    EXPECT_EQ(0, memcmp(m_remote2, src + 16, 16));
}

/* The key's range ends at start + len, whatever its entries map */
TEST_F(test_emu_ksm_mkey, beyond_the_range_is_a_remote_access_error)
{
    uint64_t src[2] = {1, 2};
    struct ibv_mr *rmr;
    uint32_t key;
    ksm_spec k;

    connect_pair(m_a, m_b);
    rmr = reg(m_b, m_remote, sizeof(m_remote));
    ASSERT_NE(nullptr, rmr);

    k.pdn        = m_b.env.pdn;
    k.start      = addr_of(m_remote);
    k.len        = 64;
    k.log_entity = 12;
    k.entries.clear();
    k.entries.push_back({rmr->lkey, addr_of(m_remote)});
    key          = create(m_ctx1, create_cmd(k));
    ASSERT_NE(0u, key);

    polled_cqe c = rdma(MLX5_OPCODE_RDMA_WRITE, k.start + 48, key, src, 16);
    EXPECT_EQ(MLX5_CQE_REQ, c.opcode);
    c = rdma(MLX5_OPCODE_RDMA_WRITE, k.start + 56, key, src, 16);
    EXPECT_EQ(MLX5_CQE_REQ_ERR, c.opcode);
    EXPECT_EQ(MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, c.syndrome);
    EXPECT_EQ(0u, m_remote[8]) << "nothing written past the range";
}

/* An entry's MR deregistered under the key: the device finds no key */
TEST_F(test_emu_ksm_mkey, mr_gone_under_the_key)
{
    uint64_t result = 0;
    struct ibv_mr *rmr;
    uint32_t key;

    connect_pair(m_a, m_b);
    rmr = reg(m_b, m_remote, sizeof(m_remote));
    ASSERT_NE(nullptr, rmr);
    key = create(m_ctx1, create_cmd(ucx_atomic_key(m_b.env.pdn, rmr, 8)));
    ASSERT_NE(0u, key);

    ASSERT_EQ(0, uct_ib_glue->dereg_mr(rmr));
    m_mrs.erase(std::find(m_mrs.begin(), m_mrs.end(), rmr));

    polled_cqe c = fetch_add(addr_of(&m_remote[0]) + 8, key, 1, &result);
    EXPECT_EQ(MLX5_CQE_REQ_ERR, c.opcode);
    EXPECT_EQ(MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, c.syndrome);
    EXPECT_EQ(0u, m_remote[0]);
}

TEST_F(test_emu_ksm_mkey, command_checks)
{
    using namespace ksm_prm;
    const unsigned mkc = MKC;
    struct ibv_mr *rmr;
    ksm_spec k;

    env_init(m_b.env, m_ctx1);
    m_qps.push_back(&m_b);
    rmr = reg(m_b, m_remote, sizeof(m_remote));
    ASSERT_NE(nullptr, rmr);
    k = ucx_atomic_key(m_b.env.pdn, rmr, 16);

    prm_buf cmd = create_cmd(k);
    cmd.set(mkc + mkc::access_mode_1_0, MODE_MTT);
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CREATE_MKEY_ACCESS_MODE),
              refused(cmd, prm::BAD_PARAM));

    cmd = create_cmd(k);
    cmd.set(mkc + mkc::free, 1);
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CREATE_MKEY_NOT_MODELLED),
              refused(cmd, prm::BAD_PARAM));

    cmd = create_cmd(k);
    cmd.set(mkc + mkc::length64, 1);
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CREATE_MKEY_NOT_MODELLED),
              refused(cmd, prm::BAD_PARAM));

    cmd = create_cmd(k);
    cmd.set(mkc + mkc::qpn, m_b.qp.qpn + 1);
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CREATE_MKEY_QPN),
              refused(cmd, prm::BAD_PARAM));

    cmd = create_cmd(k);
    cmd.set(mkc + mkc::pd, k.pdn + 0x100);
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CREATE_MKEY_BAD_PD),
              refused(cmd, prm::BAD_RESOURCE));

    cmd = create_cmd(k);
    cmd.set(actual_size, 0);
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CREATE_MKEY_TRANSLATIONS),
              refused(cmd, prm::BAD_PARAM));

    cmd = create_cmd(k);
    cmd.set(mkc + mkc::translations_octword_size, 0);
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CREATE_MKEY_TRANSLATIONS),
              refused(cmd, prm::BAD_PARAM)) << "more entries than sized for";

    cmd = create_cmd(k);
    cmd.set(actual_size, k.entries.size() + 1);
    cmd.set(mkc + mkc::translations_octword_size, k.entries.size() + 1);
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CMD_INPUT_LEN),
              refused(cmd, prm::BAD_INPUT_LEN)) << "an entry not in the input";

    cmd = create_cmd(k);
    cmd.set(mkc + mkc::len, k.entries.size() * SIZE_2G + 1);
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CREATE_MKEY_RANGE),
              refused(cmd, prm::BAD_PARAM)) << "longer than the entries";

    EXPECT_EQ(9u, uct_ib_emu_counters().cmd_failed_count(CREATE_MKEY));
    EXPECT_TRUE(m_objs.empty());
}

TEST_F(test_emu_ksm_mkey, lifetime)
{
    struct ibv_pd *pd;
    struct ibv_mr *rmr;
    struct mlx5dv_devx_obj *obj;
    uct_ib_emu_mkey_info_t info;
    prm_buf out(prm::HDR_BYTES), q(prm::HDR_BYTES);
    uint32_t key;

    env_init(m_b.env, m_ctx1);
    m_qps.push_back(&m_b);
    rmr = reg(m_b, m_remote, sizeof(m_remote));
    ASSERT_NE(nullptr, rmr);
    pd = uct_ib_glue->alloc_pd(m_ctx1);
    ASSERT_NE(nullptr, pd);

    key = create(m_ctx1, create_cmd(ucx_atomic_key(pdn_of(pd), rmr, 0)));
    ASSERT_NE(0u, key);
    obj = m_objs.back();
    EXPECT_EQ(EBUSY, uct_ib_glue->dealloc_pd(pd)) << "the mkey uses the PD";

    q.set(prm::opcode, ksm_prm::CREATE_MKEY);
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_obj_query(obj, q.data(), q.size(),
                                                  out.data(), out.size()))
            << "not a query of this object";

    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(obj));
    m_objs.clear();
    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_count(ksm_prm::DESTROY_MKEY));
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_mkey_info(key, &info));
    EXPECT_EQ(0, uct_ib_glue->dealloc_pd(pd));
}

/* A context closed with its mkey still there reclaims it */
TEST_F(test_emu_ksm_mkey, reclaimed_with_the_context)
{
    struct ibv_context *ctx = open("mlx5_1");
    struct ibv_pd *pd;
    struct ibv_mr *mr;
    uct_ib_emu_mkey_info_t info;
    uint32_t key;

    ASSERT_NE(nullptr, ctx);
    pd = uct_ib_glue->alloc_pd(ctx);
    ASSERT_NE(nullptr, pd);
    mr = uct_ib_glue->reg_mr(pd, m_remote, sizeof(m_remote),
                             IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(nullptr, mr);
    key = create(ctx, create_cmd(ucx_atomic_key(pdn_of(pd), mr, 0)));
    ASSERT_NE(0u, key);
    m_objs.clear(); /* left to the close */
    close(ctx);

    /* the mkey, the MR, the PD */
    EXPECT_EQ(3u, uct_ib_emu_counters().objects_reclaimed);
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_mkey_info(key, &info));
    uct_ib_emu_counters_reset();
}
