/*
 * The program's sigaction() and signal() of SIGSEGV and SIGBUS, while the
 * model catches them for its accesses to memory the program registered
 * (model/dma.h): the model records what the program asks and runs it for
 * every fault that is not its own, so a program that installs a handler
 * (UCX does, for its backtraces) keeps the emulated device from crashing
 * it when it frees registered memory. Before the model is loaded, and for
 * every other signal, the C library's own. sysv_signal(), bsd_signal() and
 * sigset() are not interposed: no program we run uses them.
 */
#include <emu/frontend/preload/preload.h>

#include <dlfcn.h>
#include <signal.h>


#define PRELOAD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

typedef int (*sigaction_func_t)(int, const struct sigaction*,
                                struct sigaction*);
typedef sighandler_t (*signal_func_t)(int, sighandler_t);

template <typename Func>
Func libc_next(const char *name)
{
    return reinterpret_cast<Func>(dlsym(RTLD_NEXT, name));
}

} // namespace


PRELOAD_EXPORT int sigaction(int sig, const struct sigaction *act,
                             struct sigaction *old)
{
    static const auto libc = libc_next<sigaction_func_t>("sigaction");
    const auto        model = preload_model_sigaction();

    if ((model != nullptr) && (model(sig, act, old) == 0)) {
        return 0;
    }
    return libc(sig, act, old);
}

PRELOAD_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    static const auto libc  = libc_next<signal_func_t>("signal");
    const auto        model = preload_model_sigaction();
    struct sigaction  act   = {}, old = {};

    if ((model != nullptr) && (handler != SIG_ERR)) {
        /* the C library's signal(): BSD semantics */
        act.sa_handler = handler;
        act.sa_flags   = SA_RESTART;
        sigemptyset(&act.sa_mask);
        sigaddset(&act.sa_mask, sig);
        if (model(sig, &act, &old) == 0) {
            return old.sa_handler;
        }
    }
    return libc(sig, handler);
}
