/*
 * The endpoints of an interface by QP number, for the completion path: an
 * open-addressed table (linear probing, deletion by shifting back the
 * entries after the hole), indexed by the low bits of the QP number (a
 * device hands them out in sequence, so they rarely collide): a lookup is
 * a mask, a load and usually one compare. It grows when half full; find()
 * never allocates. QP number 0 is never an RC QP: a free slot holds it.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#ifndef UCT_RC_EP_TABLE_H_
#define UCT_RC_EP_TABLE_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <cstdint>
#include <new>

struct uct_rc_ep;

class uct_rc_ep_table {
public:
    uct_rc_ep_table() = default;
    ~uct_rc_ep_table()
    {
        if (m_entries != &m_empty) {
            delete[] m_entries;
        }
    }

    uct_rc_ep_table(const uct_rc_ep_table&)            = delete;
    uct_rc_ep_table &operator=(const uct_rc_ep_table&) = delete;

    uct_rc_ep *find(uint32_t qpn)
    {
        /* completions come in runs of one QP: the last one found first */
        if (ucs_likely(qpn == m_last.qpn)) {
            return m_last.ep;
        }
        for (uint32_t i = slot(qpn);; i = (i + 1) & m_mask) {
            const entry &e = m_entries[i];
            if (ucs_likely(e.qpn == qpn)) {
                m_last = e;
                return e.ep;
            } else if (e.ep == nullptr) {
                return nullptr;
            }
        }
    }

    /** Add @a ep as @a qpn (not in the table yet). */
    [[nodiscard]] ucs_status_t insert(uint32_t qpn, uct_rc_ep *ep)
    {
        if (2 * (m_count + 1) > capacity()) {
            ucs_status_t status = grow();
            if (status != UCS_OK) {
                return status;
            }
        }
        place(qpn, ep);
        ++m_count;
        return UCS_OK;
    }

    void erase(uint32_t qpn)
    {
        uint32_t hole = slot(qpn), i;

        while (m_entries[hole].qpn != qpn) {
            if (m_entries[hole].ep == nullptr) {
                return; /* not there */
            }
            hole = (hole + 1) & m_mask;
        }
        if (m_entries[hole].ep == nullptr) {
            return;
        }

        /* move back each later entry of the run that may sit in the hole */
        for (i = (hole + 1) & m_mask; m_entries[i].ep != nullptr;
             i = (i + 1) & m_mask) {
            const uint32_t home = slot(m_entries[i].qpn);
            if (((i - home) & m_mask) >= ((i - hole) & m_mask)) {
                m_entries[hole] = m_entries[i];
                hole            = i;
            }
        }
        m_entries[hole] = {};
        m_last          = {};
        --m_count;
    }

    unsigned size() const { return m_count; }

    /** The entry find() found last (QP number 0 and NULL at first): a
     *  caller may look there first. */
    uint32_t  last_qpn() const { return m_last.qpn; }
    uct_rc_ep *last_ep() const { return m_last.ep; }

    /** Call @a f(ep) for every endpoint; @a f must not change the table. */
    template <typename F> void for_each(F f) const
    {
        for (uint32_t i = 0; i < capacity(); ++i) {
            if (m_entries[i].ep != nullptr) {
                f(m_entries[i].ep);
            }
        }
    }

private:
    struct entry {
        uint32_t  qpn;
        uct_rc_ep *ep; /* NULL: free */
    };

    static constexpr uint32_t min_capacity = 16;

    uint32_t capacity() const { return m_mask + 1; }

    uint32_t slot(uint32_t qpn) const
    {
        return qpn & m_mask;
    }

    void place(uint32_t qpn, uct_rc_ep *ep)
    {
        uint32_t i = slot(qpn);

        while (m_entries[i].ep != nullptr) {
            i = (i + 1) & m_mask;
        }
        m_entries[i] = {qpn, ep};
    }

    ucs_status_t grow()
    {
        const uint32_t old_capacity = capacity();
        entry          *old         = m_entries;
        const uint32_t new_capacity = (m_entries == &m_empty) ? min_capacity :
                                      2 * old_capacity;

        m_entries = new (std::nothrow) entry[new_capacity]();
        if (m_entries == nullptr) {
            m_entries = old;
            return UCS_ERR_NO_MEMORY;
        }
        m_mask = new_capacity - 1;
        m_last = {};
        for (uint32_t i = 0; i < old_capacity; ++i) {
            if (old[i].ep != nullptr) {
                place(old[i].qpn, old[i].ep);
            }
        }
        if (old != &m_empty) {
            delete[] old;
        }
        return UCS_OK;
    }

    entry    m_last    = {};       /* the last entry found */
    entry    m_empty   = {};       /* the table before the first insert */
    entry    *m_entries = &m_empty;
    uint32_t m_mask    = 0;
    unsigned m_count   = 0;
};

#endif
