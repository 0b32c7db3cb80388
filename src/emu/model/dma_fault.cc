/*
 * The device's accesses to memory its user registered, safe against pages
 * the user unmapped (dma.h). A copy runs with a jump point set for its
 * thread; the model's SIGSEGV/SIGBUS handler returns there when the fault
 * is that copy's, and passes every other fault to what the program asked
 * for the signal, as the kernel would have run it.
 *
 * The program's requests reach this file through the drop-in front-end,
 * which interposes sigaction() and signal(); a program that links the
 * model directly and replaces the handler takes its faults back, copies
 * included.
 */
#include <emu/model/dma.h>

#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>


namespace uct_ib_emu {

namespace {

constexpr int CAUGHT[]   = {SIGSEGV, SIGBUS};
constexpr int NUM_CAUGHT = sizeof(CAUGHT) / sizeof(CAUGHT[0]);

typedef int (*sigaction_func_t)(int, const struct sigaction*,
                                struct sigaction*);

/* The program's disposition of each caught signal. A change is written
 * under g_lock into the copy not published, then published: the handler
 * reads the published one without a lock. */
struct dispositions {
    struct sigaction act[NUM_CAUGHT];
};

dispositions      g_program[2];
std::atomic<int>  g_published{0};
std::atomic<bool> g_installed{false};
std::mutex        g_lock;
sigaction_func_t  g_libc_sigaction = nullptr;

std::atomic<uint64_t> g_unmapped{0};

/* Set while this thread copies. Initial-exec: the handler reads it in any
 * thread, and a first access to dynamic TLS may allocate */
__attribute__((tls_model("initial-exec")))
thread_local sigjmp_buf *volatile t_copy_jump = nullptr;

int caught_index(int sig)
{
    for (int i = 0; i < NUM_CAUGHT; ++i) {
        if (CAUGHT[i] == sig) {
            return i;
        }
    }
    return -1;
}

/* The C library's sigaction, not one interposed in front of it (the
 * drop-in front-end's) */
sigaction_func_t libc_sigaction()
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *func = (libc != nullptr) ? dlsym(libc, "sigaction") : nullptr;

    if (libc != nullptr) {
        dlclose(libc);
    }
    return (func != nullptr) ? reinterpret_cast<sigaction_func_t>(func) :
                               ::sigaction;
}

/* Run what the program asked for @a sig, as the kernel would have */
void run_program_disposition(int sig, siginfo_t *info, void *ucontext)
{
    const int        i = caught_index(sig);
    struct sigaction p =
            g_program[g_published.load(std::memory_order_acquire)].act[i];
    sigset_t         mask, saved;

    if (!(p.sa_flags & SA_SIGINFO) &&
        ((p.sa_handler == SIG_DFL) || (p.sa_handler == SIG_IGN))) {
        if ((p.sa_handler == SIG_IGN) && (info->si_code <= 0)) {
            return; /* sent, and ignored */
        }
        /* the default action: a fault runs its instruction again and ends
         * the process as it would have; a sent signal is raised again */
        struct sigaction dfl = {};
        dfl.sa_handler = SIG_DFL;
        g_libc_sigaction(sig, &dfl, nullptr);
        if (info->si_code <= 0) {
            raise(sig);
        }
        return;
    }

    if (p.sa_flags & SA_RESETHAND) {
        struct sigaction &published =
                g_program[g_published.load(std::memory_order_acquire)].act[i];
        memset(&published, 0, sizeof(published));
        published.sa_handler = SIG_DFL;
    }

    mask = p.sa_mask;
    if (!(p.sa_flags & SA_NODEFER)) {
        sigaddset(&mask, sig);
    }
    pthread_sigmask(SIG_BLOCK, &mask, &saved);
    if (p.sa_flags & SA_SIGINFO) {
        p.sa_sigaction(sig, info, ucontext);
    } else {
        p.sa_handler(sig);
    }
    pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

void on_fault(int sig, siginfo_t *info, void *ucontext)
{
    sigjmp_buf *jump = t_copy_jump;

    /* a fault of this thread's copy (not a signal someone sent) */
    if ((jump != nullptr) && (info->si_code > 0)) {
        t_copy_jump = nullptr;
        siglongjmp(*jump, 1);
    }
    run_program_disposition(sig, info, ucontext);
}

/* memcpy that returns false instead of faulting on an unmapped page; the
 * handler is installed with SA_NODEFER, so the jump leaves the signal mask
 * as it was */
bool guarded_copy(void *dst, const void *src, size_t len)
{
    sigjmp_buf jump;

    if (!g_installed.load(std::memory_order_relaxed)) {
        memcpy(dst, src, len);
        return true;
    }

    if (sigsetjmp(jump, 0) != 0) {
        g_unmapped.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    t_copy_jump = &jump;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    memcpy(dst, src, len);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_copy_jump = nullptr;
    return true;
}

} // namespace

bool dma_user_write(void *user, const void *src, size_t len)
{
    return guarded_copy(user, src, len);
}

bool dma_user_read(void *dst, const void *user, size_t len)
{
    if (guarded_copy(dst, user, len)) {
        return true;
    }
    memset(dst, 0, len);
    return false;
}

uint64_t dma_user_unmapped()
{
    return g_unmapped.load(std::memory_order_relaxed);
}

void dma_user_unmapped_reset()
{
    g_unmapped.store(0, std::memory_order_relaxed);
}

void dma_fault_install()
{
    std::lock_guard<std::mutex> g(g_lock);
    struct sigaction            ours = {};
    const int                   next = 1 - g_published.load();
    int                         i;

    if (g_installed) {
        return;
    }

    g_libc_sigaction  = libc_sigaction();
    ours.sa_sigaction = on_fault;
    ours.sa_flags     = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    for (i = 0; i < NUM_CAUGHT; ++i) {
        if (g_libc_sigaction(CAUGHT[i], &ours, &g_program[next].act[i]) != 0) {
            break;
        }
    }
    if (i < NUM_CAUGHT) {
        /* nothing caught rather than half: the program's, back */
        while (i-- > 0) {
            g_libc_sigaction(CAUGHT[i], &g_program[next].act[i], nullptr);
        }
        return;
    }

    g_published.store(next, std::memory_order_release);
    g_installed = true;
}

void dma_fault_uninstall()
{
    std::lock_guard<std::mutex> g(g_lock);
    const dispositions          &program = g_program[g_published.load()];
    struct sigaction            now;

    if (!g_installed) {
        return;
    }

    g_installed = false;
    for (int i = 0; i < NUM_CAUGHT; ++i) {
        /* unless the program replaced the handler since (no interposer) */
        if ((g_libc_sigaction(CAUGHT[i], nullptr, &now) == 0) &&
            (now.sa_flags & SA_SIGINFO) && (now.sa_sigaction == on_fault)) {
            g_libc_sigaction(CAUGHT[i], &program.act[i], nullptr);
        }
    }
}

int dma_fault_program_sigaction(int sig, const struct sigaction *act,
                                struct sigaction *old)
{
    std::lock_guard<std::mutex> g(g_lock);
    const int                   i = caught_index(sig);
    int                         current;

    if ((i < 0) || !g_installed) {
        return ENOENT;
    }

    current = g_published.load();
    if (old != nullptr) {
        *old = g_program[current].act[i];
    }
    if (act != nullptr) {
        g_program[1 - current]        = g_program[current];
        g_program[1 - current].act[i] = *act;
        g_published.store(1 - current, std::memory_order_release);
    }
    return 0;
}

} // namespace uct_ib_emu
