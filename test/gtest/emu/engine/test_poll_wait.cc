/*
 * Polls of CQ rings in memory that wait for the engine in a page fault
 * (src/emu/model/poll_wait.h), with the engine thread running and told to
 * take pages always: a drained ring's next page is taken from the
 * program's view; a poll there waits until a CQE is written and then reads
 * it, or until the wait's limit and then goes on polling, never longer.
 */
#include "emu/engine_test.h"

#ifdef HAVE_VALGRIND_H
#  include <valgrind/valgrind.h>
#endif

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <thread>


namespace {

using namespace emu_test;

constexpr size_t RING_PAGE = 4096;

class test_emu_poll_wait : public engine_fixture {
protected:
    void init() override
    {
        engine_fixture::init();
        skip_unless_userfaultfd();
        connect_pair(m_a, m_b);
        uct_ib_emu_counters_reset();
    }

    void cleanup() override
    {
        uct_ib_emu_engine_set_poll_wait(UCT_IB_EMU_POLL_WAIT_AUTO);
        engine_fixture::cleanup();
    }

    static void skip_unless_userfaultfd()
    {
#ifdef HAVE_VALGRIND_H
        if (RUNNING_ON_VALGRIND) {
            GTEST_SKIP() << "valgrind: the emulator takes no page there";
        }
#endif
#ifdef UCS_ENABLE_TSAN
        GTEST_SKIP() << "ThreadSanitizer build: a ring has one view, so no "
                        "page of it is taken";
#endif
#if defined(SYS_userfaultfd) && defined(UFFD_USER_MODE_ONLY)
        int fd = static_cast<int>(syscall(SYS_userfaultfd,
                                          O_CLOEXEC | UFFD_USER_MODE_ONLY));
        if (fd < 0) {
            GTEST_SKIP() << "the kernel refuses userfaultfd: "
                         << strerror(errno);
        }
        ::close(fd);
#else
        GTEST_SKIP() << "no userfaultfd in this build's headers";
#endif
    }

    /* The engine on its thread, taking the pages of receiving rings; a
     * poll waits @a max_wait_us at most */
    static void start_waiting(uint64_t max_wait_us = 500)
    {
        ASSERT_EQ(UCS_OK, uct_ib_emu_engine_set_step_mode(false));
        uct_ib_emu_engine_set_poll_wait(UCT_IB_EMU_POLL_WAIT_ALWAYS,
                                        max_wait_us);
    }

    /* Until the engine took @a count pages, or the test fails */
    bool pages_taken(uint64_t count)
    {
        return wait_for([count] {
            return uct_ib_emu_counters().poll_wait_taken >= count;
        }, 10, [count] {
            return std::to_string(count) + " pages taken";
        });
    }

    /* Whether @a cond became true within @a seconds (scaled); a timeout is
     * not a failure: the caller says what it means (another thread's
     * give-up, a skip) */
    template <typename F>
    static bool eventually(F cond, double seconds = 10)
    {
        ucs_time_t deadline = ucs_get_time() + ucs::test_timeout(seconds);

        // bounded: the deadline
        while (!cond()) {
            if (ucs_get_time() > deadline) {
                return false;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        return true;
    }

    /* Poll @a q's ring until a CQE comes, at most @a seconds: the number
     * of polls it took, or 0 if none came */
    static uint64_t poll_until_cqe(engine_qp &q, polled_cqe *cqe,
                                   double seconds = 10)
    {
        ucs_time_t deadline = ucs_get_time() + ucs::test_timeout(seconds);
        uint64_t polls      = 0;

        // bounded: the deadline
        do {
            ++polls;
            if (poll(q, cqe)) {
                return polls;
            }
        } while (ucs_get_time() < deadline);
        return 0;
    }

    engine_qp m_a, m_b;
};


TEST_F(test_emu_poll_wait, poll_waits_for_the_cqe_and_reads_it) {
    uint8_t buf[64] = {};
    struct ibv_mr *mr = reg(m_b, buf, sizeof(buf));
    const char msg[] = "after the wait";
    std::atomic<bool> sent{false};
    polled_cqe cqe = {};

    post_recv(m_b, {dseg(buf, sizeof(buf), mr->lkey)});
    start_waiting(1000000); /* the sender below has the time to see it */
    ASSERT_TRUE(pages_taken(2));

    /* the sender waits until the poll below waits in its fault */
    std::thread sender([&] {
        if (eventually([] {
                return uct_ib_emu_counters().poll_wait_faults >= 1;
            })) {
            post_send_inline(m_a, msg, sizeof(msg));
        }
        sent = true;
    });
    uint64_t polls = poll_until_cqe(m_b, &cqe);
    sender.join();

    ASSERT_TRUE(sent);
    ASSERT_NE(0u, polls) << "no CQE";
    EXPECT_EQ(MLX5_CQE_RESP_SEND, cqe.opcode);
    EXPECT_EQ(sizeof(msg), cqe.byte_cnt);
    EXPECT_EQ(0, memcmp(buf, msg, sizeof(msg)));

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_LE(1u, c.poll_wait_faults);
    EXPECT_LE(1u, c.poll_wait_written)
            << "the CQE did not end the wait: " << c.poll_wait_taken
            << " taken, " << c.poll_wait_faults << " faults, "
            << c.poll_wait_expired << " expired";

    /* the sender's own completion comes to its ring, which it polls
     * after a wait of its own, or at once */
    EXPECT_NE(0u, poll_until_cqe(m_a, &cqe));
    EXPECT_EQ(MLX5_CQE_REQ, cqe.opcode);
}

TEST_F(test_emu_poll_wait, wait_without_a_cqe_ends_at_its_limit) {
    polled_cqe cqe = {};

    start_waiting();
    ASSERT_TRUE(pages_taken(2));

    /* nothing comes: the polls go on after the wait's limit, and the
     * ring is left alone for a while */
    ucs_time_t end = ucs_get_time() + ucs_time_from_msec(50);
    uint64_t polls = 0;
    // bounded: 50 ms of polls
    while (ucs_get_time() < end) {
        EXPECT_FALSE(poll(m_b, &cqe));
        ++polls;
    }

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_LE(1u, c.poll_wait_faults);
    EXPECT_LE(1u, c.poll_wait_expired);
    EXPECT_EQ(0u, c.poll_wait_written);
    EXPECT_LT(c.poll_wait_expired, 50u) << "waited again and again";
    EXPECT_LT(1000u, polls) << "the polls did not go on after the wait";
}

TEST_F(test_emu_poll_wait, poll_of_a_cqe_not_consumed_does_not_wait) {
    uint8_t buf[8] = {};
    struct ibv_mr *mr = reg(m_b, buf, sizeof(buf));
    polled_cqe cqe = {};

    post_recv(m_b, {dseg(buf, sizeof(buf), mr->lkey)});
    start_waiting(1000000);
    ASSERT_TRUE(pages_taken(2));
    post_send_inline(m_a, "8 bytes", 8);

    /* the CQE is written, its page given back and taken again while the
     * test has not read it: where faults give their exact address the
     * engine takes the page of a ring that is not drained */
    if (!eventually([] {
            return uct_ib_emu_counters().poll_wait_taken >= 4;
        }, 1)) {
        GTEST_SKIP() << "only drained rings are taken here (no exact "
                        "fault addresses)";
    }

    ucs_time_t start = ucs_get_time();
    ASSERT_TRUE(poll(m_b, &cqe));
    EXPECT_GT(ucs::test_timeout(0.5), ucs_get_time() - start)
            << "the poll waited for a CQE that was there";
    EXPECT_EQ(MLX5_CQE_RESP_SEND, cqe.opcode);
}

TEST_F(test_emu_poll_wait, never_gives_every_page_back) {
    polled_cqe cqe = {};
    uint8_t buf[8] = {};
    struct ibv_mr *mr = reg(m_b, buf, sizeof(buf));

    start_waiting();
    ASSERT_TRUE(pages_taken(2));
    uct_ib_emu_engine_set_poll_wait(UCT_IB_EMU_POLL_WAIT_NEVER);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    uct_ib_emu_counters_reset();

    /* a poll now reads the ring without waiting */
    EXPECT_FALSE(poll(m_b, &cqe));
    EXPECT_FALSE(poll(m_a, &cqe));
    EXPECT_EQ(0u, uct_ib_emu_counters().poll_wait_faults);

    post_recv(m_b, {dseg(buf, sizeof(buf), mr->lkey)});
    post_send_inline(m_a, "8 bytes", 8);
    ASSERT_NE(0u, poll_until_cqe(m_b, &cqe));
    EXPECT_EQ(MLX5_CQE_RESP_SEND, cqe.opcode);
    EXPECT_EQ(0u, uct_ib_emu_counters().poll_wait_taken);
}

TEST_F(test_emu_poll_wait, page_unmapped_by_another_is_mapped_again) {
    start_waiting();
    ASSERT_TRUE(pages_taken(2));
    uct_ib_emu_engine_set_poll_wait(UCT_IB_EMU_POLL_WAIT_NEVER);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));

    /* a page of the watched ring that the engine did not take (the kernel
     * may drop the mapping of a shared page): its poll is served at once,
     * not woken again and again */
    uint8_t *ring = static_cast<uint8_t*>(m_b.cq.buf);
    size_t bytes  = size_t(m_b.cq.cqe_cnt) * m_b.cq.cqe_size;
    ASSERT_LE(2 * RING_PAGE, bytes) << "a ring of one page";
    ASSERT_EQ(0, madvise(ring + RING_PAGE, RING_PAGE, MADV_DONTNEED))
            << strerror(errno);

    ucs_time_t start = ucs_get_time();
    uint8_t op_own   = __atomic_load_n(ring + RING_PAGE + 63,
                                       __ATOMIC_ACQUIRE);
    EXPECT_EQ(uint8_t(MLX5_CQE_INVALID << 4), op_own & 0xf0);
    EXPECT_GT(ucs::test_timeout(1), ucs_get_time() - start);
}

TEST_F(test_emu_poll_wait, ring_goes_while_its_page_is_taken) {
    start_waiting();
    ASSERT_TRUE(pages_taken(2));
    /* the fixture's cleanup destroys the QPs and the CQs now: their
     * pages are forgotten, and nothing is left behind */
}

} // namespace
