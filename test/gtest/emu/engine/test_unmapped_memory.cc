/*
 * Registered memory the user unmapped while its MR stays registered (UCX's
 * registration cache deregisters after the free): registration pins pages,
 * so on a NIC the access goes to a page nobody sees. The emulated device's
 * write goes nowhere, its read gives zeros, the requester completes, and
 * the process does not fault; a fault that is not the device's still runs
 * what the program asked for the signal.
 */
#include "emu/engine_test.h"

#include <emu/api/dropin.h>

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>

#ifdef HAVE_VALGRIND_H
#  include <valgrind/valgrind.h>
#endif

using namespace emu_test;

namespace {

class test_emu_unmapped_memory : public engine_fixture {
protected:
    void init() override
    {
#ifdef HAVE_VALGRIND_H
        if (RUNNING_ON_VALGRIND) {
            GTEST_SKIP() << "memcheck reports every access to an unmapped "
                            "page, the ones this test makes on purpose";
        }
#endif
        engine_fixture::init();
    }

    /* Two pages, registered on @a q, then unmapped */
    struct ibv_mr *reg_unmapped(engine_qp &q, void **addr)
    {
        const size_t len = 2 * getpagesize();
        void *mem = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        EXPECT_NE(MAP_FAILED, mem);
        if (mem == MAP_FAILED) {
            return nullptr;
        }
        struct ibv_mr *mr = reg(q, mem, len);
        EXPECT_EQ(0, munmap(mem, len));
        *addr = mem;
        return mr;
    }
};

sigjmp_buf g_program_jump;
int        g_program_signal;

void program_handler(int sig, siginfo_t*, void*)
{
    g_program_signal = sig;
    siglongjmp(g_program_jump, 1);
}

} // namespace

TEST_F(test_emu_unmapped_memory, write_goes_nowhere_and_read_gives_zeros) {
    connect_pair(m_a, m_b);
    uint64_t src = 0x1122334455667788ull, dst = ~0ull;
    struct ibv_mr *smr = reg(m_a, &src, sizeof(src));
    struct ibv_mr *dmr = reg(m_a, &dst, sizeof(dst));
    void *gone;
    struct ibv_mr *gmr = reg_unmapped(m_b, &gone);
    ASSERT_TRUE((smr != nullptr) && (dmr != nullptr) && (gmr != nullptr));
    uct_ib_emu_counters_reset();

    auto wr = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE);
    raddr(wr, gone, gmr->rkey);
    data(wr, &src, sizeof(src), smr->lkey);
    post(m_a, wr);
    auto rd = ctrl(m_a, MLX5_OPCODE_RDMA_READ);
    raddr(rd, gone, gmr->rkey);
    data(rd, &dst, sizeof(dst), dmr->lkey);
    post(m_a, rd);
    uct_ib_emu_engine_run();

    std::vector<polled_cqe> cqes = poll_all(m_a);
    ASSERT_EQ(2u, cqes.size());
    for (const polled_cqe &c : cqes) {
        EXPECT_EQ(int(MLX5_CQE_REQ), int(c.opcode)) << "completed, no error";
    }
    EXPECT_EQ(0u, dst) << "a read of a page nobody sees gives zeros";
    EXPECT_EQ(prm::QP_RTS, qp_state(m_a.qp.qpn));
    EXPECT_EQ(prm::QP_RTS, qp_state(m_b.qp.qpn));
    EXPECT_EQ(2u, uct_ib_emu_counters().dma_unmapped);
}

TEST_F(test_emu_unmapped_memory, a_receive_into_an_unmapped_page_completes) {
    connect_pair(m_a, m_b);
    void *gone;
    struct ibv_mr *gmr = reg_unmapped(m_b, &gone);
    ASSERT_NE(nullptr, gmr);
    uct_ib_emu_counters_reset();

    struct mlx5_wqe_data_seg seg = {};
    seg.byte_count = htobe32(64);
    seg.lkey       = htobe32(gmr->lkey);
    seg.addr       = htobe64(reinterpret_cast<uintptr_t>(gone));
    post_recv(m_b, {seg});
    auto send = ctrl(m_a, MLX5_OPCODE_SEND);
    const char msg[] = "lost";
    inline_data(send, msg, sizeof(msg));
    post(m_a, send);
    uct_ib_emu_engine_run();

    EXPECT_EQ(int(MLX5_CQE_REQ), int(poll_one(m_a, MLX5_CQE_REQ).opcode));
    EXPECT_EQ(sizeof(msg), poll_one(m_b, MLX5_CQE_RESP_SEND).byte_cnt);
    EXPECT_EQ(1u, uct_ib_emu_counters().dma_unmapped);
}

/* The program's handler, set through the drop-in front-end's entry point
 * (a program's sigaction() under the preload), runs for a fault of its own
 * and is the one the model answers for; the model's handler stays */
TEST_F(test_emu_unmapped_memory, a_fault_not_the_devices_runs_the_programs_handler) {
    struct sigaction act = {}, old = {}, now = {}, kernel = {};
    void *gone;

    act.sa_sigaction = program_handler;
    act.sa_flags     = SA_SIGINFO;
    sigemptyset(&act.sa_mask);
    ASSERT_EQ(0, uct_ib_emu_dropin_sigaction(SIGSEGV, &act, &old));
    ASSERT_EQ(0, uct_ib_emu_dropin_sigaction(SIGSEGV, nullptr, &now));
    EXPECT_EQ(reinterpret_cast<void*>(program_handler),
              reinterpret_cast<void*>(now.sa_sigaction));
    ASSERT_EQ(0, sigaction(SIGSEGV, nullptr, &kernel));
    EXPECT_NE(reinterpret_cast<void*>(program_handler),
              reinterpret_cast<void*>(kernel.sa_sigaction))
            << "the model's handler is the kernel's";
    EXPECT_EQ(ENOENT, uct_ib_emu_dropin_sigaction(SIGINT, &act, nullptr))
            << "only SIGSEGV and SIGBUS are the model's";

    gone = mmap(nullptr, getpagesize(), PROT_READ,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, gone);
    ASSERT_EQ(0, munmap(gone, getpagesize()));
    g_program_signal = 0;
    if (sigsetjmp(g_program_jump, 1) == 0) {
        *static_cast<volatile char*>(gone) = 1;
    }
    EXPECT_EQ(SIGSEGV, g_program_signal);

    ASSERT_EQ(0, uct_ib_emu_dropin_sigaction(SIGSEGV, &old, nullptr));

    /* and the device's own faults are still caught */
    connect_pair(m_a, m_b);
    uint64_t src = 7;
    struct ibv_mr *smr = reg(m_a, &src, sizeof(src));
    struct ibv_mr *gmr = reg_unmapped(m_b, &gone);
    ASSERT_TRUE((smr != nullptr) && (gmr != nullptr));
    auto wr = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE);
    raddr(wr, gone, gmr->rkey);
    data(wr, &src, sizeof(src), smr->lkey);
    post(m_a, wr);
    uct_ib_emu_engine_run();
    EXPECT_EQ(int(MLX5_CQE_REQ), int(poll_one(m_a, MLX5_CQE_REQ).opcode));
}
