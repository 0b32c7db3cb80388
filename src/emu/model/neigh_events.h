/*
 * A host's neighbour events: each change of its neighbour table (an entry
 * added or changed, removed, or failed as the kernel marks an entry whose
 * probes go unanswered), kept in a ring of the last NEIGH_EVENTS. The
 * neighbour listeners of the front-end (frontend/neigh_monitor.cc) read
 * it and give the events as rtnetlink messages. A listener that falls more
 * than a ring behind has lost events, as a netlink socket whose buffer
 * overran (ENOBUFS).
 *
 * The ring is plain data: in a process-private emulator it is in the state,
 * on a fabric in each host's registry record, written under the fabric lock
 * by any process and read without locks by the host's own process (each
 * slot carries the number of its event, written last, as conn_rec does).
 */
#ifndef UCT_IB_EMU_MODEL_NEIGH_EVENTS_H_
#define UCT_IB_EMU_MODEL_NEIGH_EVENTS_H_

#include <cstdint>
#include <vector>

namespace uct_ib_emu {

constexpr unsigned NEIGH_EVENTS      = 256;
constexpr unsigned NEIGH_SEGMENT_LEN = 32;

enum neigh_event_kind : uint8_t {
    NEIGH_EVENT_NEW    = 1, /* resolves to mac from now on */
    NEIGH_EVENT_DEL    = 2, /* gone from the table */
    NEIGH_EVENT_FAILED = 3  /* unreachable: its probes went unanswered */
};

struct neigh_event {
    neigh_event_kind kind;
    char             segment[NEIGH_SEGMENT_LEN]; /* the L2 segment */
    uint8_t          gid[16];
    uint8_t          mac[6];
};

struct neigh_event_slot {
    uint64_t num;      /* the event's number, from 1; 0 while written */
    uint64_t words[7];
};

struct neigh_event_ring {
    uint64_t         made; /* events posted so far */
    neigh_event_slot slots[NEIGH_EVENTS];
};

/* Append an event (one writer at a time) */
void neigh_event_post(neigh_event_ring *ring, neigh_event_kind kind,
                      const char *segment, const uint8_t *gid,
                      const uint8_t *mac);

/* The number of the newest event: a listener opened now starts after it */
uint64_t neigh_event_newest(const neigh_event_ring *ring);

/*
 * Append the events after *pos, oldest first, to *out and move *pos to the
 * newest. false if some of them were overwritten before they were read
 * (they are lost; the ones still in the ring are given).
 */
bool neigh_event_read(const neigh_event_ring *ring, uint64_t *pos,
                      std::vector<neigh_event> *out);

} // namespace uct_ib_emu

#endif
