/*
 * A fabric's segment can be truncated under the processes that map it (by
 * a user, or a tool gone wrong): an access past its new end raises SIGBUS,
 * which would kill every member with no message. The guard covers each
 * mapping of a segment: a SIGBUS inside one replaces the mapping with
 * zeroed private memory of the same size, so the access completes (and
 * every later one), and marks it lost. A zeroed registry has no magic, so
 * the member's next check of the header reports the damage once and leaves
 * the fabric (member.cc); nothing reads past the mapping.
 *
 * Why a handler and not a size check: the segment can shrink between any
 * check and the access after it, so only the fault itself is a sound
 * place. The handler does only what is safe there: atomic loads and stores
 * and one mmap system call. A SIGBUS anywhere else goes to the handler
 * that was there before, or kills the process as it would have.
 */
#ifndef UCT_IB_EMU_FABRIC_SEGMENT_GUARD_H_
#define UCT_IB_EMU_FABRIC_SEGMENT_GUARD_H_

#include <cstddef>


namespace uct_ib_emu {
namespace fab {

/* Cover the shared mapping [addr, addr + length); a slot, or -1 when
 * every slot is taken (the mapping is then unguarded, as before) */
int segment_guard_add(void *addr, size_t length);

/* Stop covering it, before it is unmapped */
void segment_guard_remove(int slot);

/* Whether a SIGBUS replaced the mapping of @a slot */
bool segment_guard_lost(int slot);

} // namespace fab
} // namespace uct_ib_emu

#endif
