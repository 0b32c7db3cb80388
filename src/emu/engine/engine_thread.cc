/*
 * The engine thread's scheduling: it is the device's processor, so it asks
 * the kernel for the shortest fair-class slice (Linux 6.12 and later take
 * sched_runtime as a SCHED_OTHER thread's slice; a thread with a short slice
 * preempts a running one when it wakes) and for precise timers. An older
 * kernel refuses or ignores the slice: the engine then runs with the
 * defaults, and nothing else changes.
 *
 * Its own translation unit, which includes no model header: the kernel's
 * struct sched_attr cannot be included beside the C library's <sched.h>,
 * which <thread> brings.
 */
#include <linux/sched/types.h>
#include <cstdint>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>


namespace uct_ib_emu {

namespace {

constexpr uint64_t ENGINE_SLICE_NS = 100000; /* the kernel's shortest */

} // namespace

void engine_thread_tune()
{
#if defined(SYS_sched_setattr) && defined(SYS_sched_getattr)
    struct sched_attr attr = {};

    /* the policy and the nice value it inherited as they are (a lower nice
     * value takes a privilege, and asking for one would refuse the slice
     * too), the slice ours */
    if ((syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) == 0) &&
        (attr.sched_policy == 0 /* SCHED_OTHER */)) {
        attr.size          = sizeof(attr);
        attr.sched_flags   = 0;
        attr.sched_runtime = ENGINE_SLICE_NS;
        (void)syscall(SYS_sched_setattr, 0, &attr, 0);
    }
#endif
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

} // namespace uct_ib_emu
