/*
 * The doorbells a user rings on a UAR page, as the device sees them
 * (engine/doorbells.cc): in order (the record, then the UAR) and matching
 * the WQE in the ring they are counted as nothing; rung before the record,
 * with 8 bytes that are not the WQE's, a BlueFlame copy that is not the
 * WQE, or on a page the QP does not use, each is counted and reported.
 */
#include "emu/engine_test.h"

using namespace emu_test;

namespace {

class test_emu_doorbells : public engine_fixture {
protected:
    /* Write @a wqe (finished) to the ring of @a q at its producer index,
     * without the record */
    std::vector<uint8_t> write_wqe(engine_qp &q, std::vector<uint8_t> wqe)
    {
        finish(wqe, q);
        post_raw(q, wqe);
        return wqe;
    }

    /* The half of the QP's BlueFlame register a doorbell goes to */
    uint8_t *bf_half(engine_qp &q, unsigned half)
    {
        return static_cast<uint8_t*>(q.env.uar->reg_addr) + half * 0x100;
    }

    /* The WQE's first basic block, zeros past its end */
    static void bf_copy(uint8_t *half, const std::vector<uint8_t> &wqe)
    {
        for (size_t i = 0; i < MLX5_SEND_WQE_BB; i += 8) {
            uint64_t word = 0;

            if (i < wqe.size()) {
                memcpy(&word, wqe.data() + i,
                       std::min<size_t>(8, wqe.size() - i));
            }
            __atomic_store_n(reinterpret_cast<uint64_t*>(half + i), word,
                             __ATOMIC_RELEASE);
        }
    }

    static void ring8(uint8_t *half, const std::vector<uint8_t> &wqe)
    {
        uint64_t word;

        memcpy(&word, wqe.data(), sizeof(word));
        __atomic_store_n(reinterpret_cast<uint64_t*>(half), word,
                         __ATOMIC_RELEASE);
    }

    static uint64_t errors(uct_ib_emu_doorbell_error_t error)
    {
        const auto counters = uct_ib_emu_counters();
        auto       it       = counters.doorbell_errors.find(error);

        return (it == counters.doorbell_errors.end()) ? 0 : it->second;
    }

    std::vector<uint8_t> nop(engine_qp &q)
    {
        return ctrl(q, MLX5_OPCODE_NOP);
    }
};

} // namespace

TEST_F(test_emu_doorbells, in_order_and_matching_counts_nothing) {
    connect_pair(m_a, m_b);
    uct_ib_emu_counters_reset();

    /* BlueFlame copies in the two halves in turn, then an 8-byte ring of a
     * WQE of two basic blocks */
    for (unsigned i = 0; i < 4; ++i) {
        auto wqe = write_wqe(m_a, nop(m_a));
        ring_sq(m_a);
        bf_copy(bf_half(m_a, i % 2), wqe);
        uct_ib_emu_engine_run();
    }
    std::vector<uint8_t> target(128), payload(100, 0x5a);
    struct ibv_mr *mr = reg(m_b, target.data(), target.size());
    ASSERT_NE(nullptr, mr);
    auto big = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE);
    raddr(big, target.data(), mr->rkey);
    inline_data(big, payload.data(), payload.size());
    big = write_wqe(m_a, big);
    ring_sq(m_a);
    ring8(bf_half(m_a, 0), big);
    uct_ib_emu_engine_run();
    auto last = write_wqe(m_a, nop(m_a));
    ring_sq(m_a);
    bf_copy(bf_half(m_a, 1), last);
    uct_ib_emu_engine_run();

    EXPECT_EQ(0u, uct_ib_emu_counters().doorbell_error_count());
    EXPECT_EQ(6u, poll_all(m_a).size()) << "the NOPs and the write ran";
    EXPECT_EQ(0x5a, target[99]);
}

TEST_F(test_emu_doorbells, rung_before_the_record) {
    connect_pair(m_a, m_b);
    uct_ib_emu_counters_reset();
    ucs::scoped_log_capture log;

    auto wqe = write_wqe(m_a, nop(m_a));
    bf_copy(bf_half(m_a, 0), wqe);
    uct_ib_emu_engine_run();
    EXPECT_EQ(1u, errors(UCT_IB_EMU_DOORBELL_RECORD_BEHIND));
    EXPECT_TRUE(poll_all(m_a).empty()) << "the record did not count it yet";

    ring_sq(m_a);
    uct_ib_emu_engine_run();
    EXPECT_EQ(1u, poll_all(m_a).size());
    EXPECT_EQ(1u, uct_ib_emu_counters().doorbell_error_count());
    EXPECT_EQ(1u, log.count(UCS_LOG_LEVEL_ERROR, "mlx5_0: doorbell of qp"))
            << log.dump();
    EXPECT_EQ(1u, log.count("rung before the doorbell record")) << log.dump();
}

TEST_F(test_emu_doorbells, eight_bytes_that_are_not_the_wqes) {
    connect_pair(m_a, m_b);
    uct_ib_emu_counters_reset();
    ucs::scoped_log_capture log;

    auto wqe = write_wqe(m_a, nop(m_a));
    ring_sq(m_a);
    auto wrong = wqe;
    wrong[7] ^= 0x3f; /* the DS count */
    ring8(bf_half(m_a, 0), wrong);
    uct_ib_emu_engine_run();
    EXPECT_EQ(1u, errors(UCT_IB_EMU_DOORBELL_NOT_THE_WQE));
    EXPECT_EQ(1u, log.count(UCS_LOG_LEVEL_ERROR, "not the WQE's first"))
            << log.dump();
}

TEST_F(test_emu_doorbells, a_blueflame_copy_that_is_not_the_wqe) {
    connect_pair(m_a, m_b);
    uct_ib_emu_counters_reset();
    ucs::scoped_log_capture log;

    auto wqe = write_wqe(m_a, ctrl(m_a, MLX5_OPCODE_NOP, true, 0x1234));
    ring_sq(m_a);
    auto wrong = wqe;
    wrong[12] ^= 0xff; /* the immediate */
    bf_copy(bf_half(m_a, 0), wrong);
    uct_ib_emu_engine_run();
    EXPECT_EQ(0u, errors(UCT_IB_EMU_DOORBELL_BF_MISMATCH))
            << "a copy is judged once it settled";

    auto next = write_wqe(m_a, nop(m_a));
    ring_sq(m_a);
    bf_copy(bf_half(m_a, 1), next);
    uct_ib_emu_engine_run();
    EXPECT_EQ(1u, errors(UCT_IB_EMU_DOORBELL_BF_MISMATCH));
    EXPECT_EQ(1u, uct_ib_emu_counters().doorbell_error_count());
    EXPECT_EQ(1u, log.count(UCS_LOG_LEVEL_ERROR, "BlueFlame copy"))
            << log.dump();
}

TEST_F(test_emu_doorbells, a_qp_rung_on_a_page_it_does_not_use) {
    connect_pair(m_a, m_b);
    uct_ib_emu_counters_reset();
    ucs::scoped_log_capture log;

    /* a's WQE, rung on b's UAR page */
    auto wqe = write_wqe(m_a, nop(m_a));
    ring_sq(m_a);
    bf_copy(bf_half(m_b, 0), wqe);
    uct_ib_emu_engine_run();
    EXPECT_EQ(1u, errors(UCT_IB_EMU_DOORBELL_FOREIGN_QP));
    EXPECT_EQ(1u, log.count(UCS_LOG_LEVEL_ERROR, "mlx5_1: doorbell of qp"))
            << log.dump();
    EXPECT_EQ(1u, log.count("no such QP on this device")) << log.dump();
}

/* A ring the device did not look at before the QP's destroy command is
 * judged with its QP: the program rang before it destroyed */
TEST_F(test_emu_doorbells, a_ring_just_before_the_destroy_is_judged_with_its_qp) {
    connect_pair(m_a, m_b);
    uct_ib_emu_counters_reset();

    auto wqe = write_wqe(m_a, nop(m_a));
    ring_sq(m_a);
    bf_copy(bf_half(m_a, 0), wqe);
    EXPECT_EQ(0u, uct_ib_emu_counters().doorbells_seen) << "no pass yet";
    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(m_a.qp.obj));
    m_a.qp.obj = nullptr;

    EXPECT_EQ(1u, uct_ib_emu_counters().doorbells_seen);
    EXPECT_EQ(0u, uct_ib_emu_counters().doorbell_error_count());
}
