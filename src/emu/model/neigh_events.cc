#include <emu/model/neigh_events.h>

#include <cstdio>
#include <cstring>

namespace uct_ib_emu {

namespace {

/* words: [0] kind and mac, [1..2] gid, [3..6] segment */
void pack(const neigh_event &e, uint64_t *w)
{
    memset(w, 0, 7 * sizeof(*w));
    w[0] = e.kind;
    memcpy(reinterpret_cast<uint8_t*>(&w[0]) + 1, e.mac, sizeof(e.mac));
    memcpy(&w[1], e.gid, sizeof(e.gid));
    memcpy(&w[3], e.segment, sizeof(e.segment));
}

void unpack(const uint64_t *w, neigh_event *e)
{
    e->kind = static_cast<neigh_event_kind>(w[0] & 0xff);
    memcpy(e->mac, reinterpret_cast<const uint8_t*>(&w[0]) + 1, sizeof(e->mac));
    memcpy(e->gid, &w[1], sizeof(e->gid));
    memcpy(e->segment, &w[3], sizeof(e->segment));
    e->segment[sizeof(e->segment) - 1] = '\0';
}

} // namespace

void neigh_event_post(neigh_event_ring *ring, neigh_event_kind kind,
                      const char *segment, const uint8_t *gid,
                      const uint8_t *mac)
{
    uint64_t         num  = __atomic_load_n(&ring->made, __ATOMIC_RELAXED) + 1;
    neigh_event_slot *slot = &ring->slots[(num - 1) % NEIGH_EVENTS];
    neigh_event      e    = {};
    uint64_t         w[7];

    e.kind = kind;
    snprintf(e.segment, sizeof(e.segment), "%s", segment);
    memcpy(e.gid, gid, sizeof(e.gid));
    if (mac != nullptr) {
        memcpy(e.mac, mac, sizeof(e.mac));
    }
    pack(e, w);

    __atomic_store_n(&slot->num, 0, __ATOMIC_SEQ_CST);
    for (unsigned i = 0; i < 7; ++i) {
        __atomic_store_n(&slot->words[i], w[i], __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&slot->num, num, __ATOMIC_SEQ_CST);
    __atomic_store_n(&ring->made, num, __ATOMIC_SEQ_CST);
}

uint64_t neigh_event_newest(const neigh_event_ring *ring)
{
    return __atomic_load_n(&ring->made, __ATOMIC_SEQ_CST);
}

bool neigh_event_read(const neigh_event_ring *ring, uint64_t *pos,
                      std::vector<neigh_event> *out)
{
    uint64_t made     = neigh_event_newest(ring);
    uint64_t first    = *pos + 1;
    bool     complete = true;

    if (made < *pos) {
        *pos = made; /* the ring was made anew under the reader */
        return false;
    }
    if (made - *pos > NEIGH_EVENTS) {
        first    = made - NEIGH_EVENTS + 1;
        complete = false;
    }

    for (uint64_t num = first; num <= made; ++num) {
        const neigh_event_slot *slot = &ring->slots[(num - 1) % NEIGH_EVENTS];
        uint64_t               w[7];
        neigh_event            e;

        if (__atomic_load_n(&slot->num, __ATOMIC_SEQ_CST) != num) {
            complete = false; /* overwritten by a newer one while we read */
            continue;
        }
        for (unsigned i = 0; i < 7; ++i) {
            w[i] = __atomic_load_n(&slot->words[i], __ATOMIC_SEQ_CST);
        }
        if (__atomic_load_n(&slot->num, __ATOMIC_SEQ_CST) != num) {
            complete = false;
            continue;
        }
        unpack(w, &e);
        out->push_back(e);
    }

    *pos = made;
    return complete;
}

} // namespace uct_ib_emu
