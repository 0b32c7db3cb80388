/*
 * The SIGBUS guard over the fabric segments' mappings (segment_guard.h).
 */
#include <emu/fabric/segment_guard.h>

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <mutex>


namespace uct_ib_emu {
namespace fab {

namespace {

/* A process maps its own fabric and, briefly, those the control API opens */
constexpr int SLOTS = 8;

struct guard_slot {
    std::atomic<bool>      taken{false};
    std::atomic<uintptr_t> addr{0};     /* 0 until the slot is filled */
    std::atomic<size_t>    length{0};
    std::atomic<bool>      lost{false};
};

guard_slot       slots[SLOTS];
struct sigaction previous;
std::once_flag   installed;

void on_sigbus(int sig, siginfo_t *info, void *ucontext)
{
    const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);

    for (guard_slot &slot : slots) {
        const uintptr_t addr = slot.addr.load(std::memory_order_acquire);
        const size_t length  = slot.length.load(std::memory_order_acquire);

        if ((addr == 0) || (at < addr) || (at >= addr + length)) {
            continue;
        }
        /* zeroed memory in place of the segment: the access completes */
        if (mmap(reinterpret_cast<void*>(addr), length,
                 PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE |
                 MAP_ANONYMOUS, -1, 0) != MAP_FAILED) {
            slot.lost.store(true, std::memory_order_release);
            return;
        }
        break;
    }

    /* not ours: what was there before, or the default (which kills) */
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, info, ucontext);
    } else if ((previous.sa_handler != SIG_DFL) &&
               (previous.sa_handler != SIG_IGN)) {
        previous.sa_handler(sig);
    } else {
        signal(SIGBUS, SIG_DFL); /* the access faults again, and kills */
    }
}

void install()
{
    struct sigaction sa = {};

    sa.sa_sigaction = on_sigbus;
    sa.sa_flags     = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGBUS, &sa, &previous);
}

} // namespace

int segment_guard_add(void *addr, size_t length)
{
    std::call_once(installed, install);

    for (int i = 0; i < SLOTS; ++i) {
        if (slots[i].taken.exchange(true, std::memory_order_acq_rel)) {
            continue;
        }
        slots[i].length.store(length, std::memory_order_relaxed);
        slots[i].lost.store(false, std::memory_order_relaxed);
        slots[i].addr.store(reinterpret_cast<uintptr_t>(addr),
                            std::memory_order_release);
        return i;
    }
    return -1;
}

void segment_guard_remove(int slot)
{
    if (slot >= 0) {
        slots[slot].addr.store(0, std::memory_order_release);
        slots[slot].taken.store(false, std::memory_order_release);
    }
}

bool segment_guard_lost(int slot)
{
    return (slot >= 0) && slots[slot].lost.load(std::memory_order_acquire);
}

} // namespace fab
} // namespace uct_ib_emu
