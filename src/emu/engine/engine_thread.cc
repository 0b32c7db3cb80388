/*
 * The engine thread's scheduling: it is the device's processor, so it asks
 * the kernel for the shortest fair-class slice (Linux 6.12 and later take
 * sched_runtime as a SCHED_OTHER thread's slice; a thread with a short slice
 * preempts a running one when it wakes) and for precise timers. An older
 * kernel refuses or ignores the slice: the engine then runs with the
 * defaults, and nothing else changes. Its nice value stays what it
 * inherited: lowering it takes a privilege.
 *
 * A program that polls its CQs in memory on a loaded machine competes with
 * the engine for the cores; the engine then lowers the weight of the
 * program's threads that opened a device (raising their nice value needs
 * no privilege), so that the device's processor runs first when both can.
 *
 * Its own translation unit, which includes no model header: the kernel's
 * struct sched_attr cannot be included beside the C library's <sched.h>,
 * which <thread> brings.
 */
#include <linux/sched/types.h>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <sys/resource.h>
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

    /* the policy and nice value as they are, the slice ours */
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

bool user_thread_lower(pid_t tid, int steps)
{
    int nice;

    errno = 0;
    nice  = getpriority(PRIO_PROCESS, tid);
    if ((nice == -1) && (errno != 0)) {
        return false; /* gone */
    }
    return (nice >= 19) ||
           (setpriority(PRIO_PROCESS, tid, std::min(19, nice + steps)) == 0);
}

} // namespace uct_ib_emu
