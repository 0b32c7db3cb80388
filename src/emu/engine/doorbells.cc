/*
 * What the device can see of the doorbells its user rings on UAR pages.
 * The engine runs a send queue from its doorbell record, so a UAR write
 * starts nothing here; but hardware starts from the UAR write, and the
 * order a NIC needs is checked as far as memory shows it: the doorbell
 * record counts the WQE before the UAR is rung (the store barrier between
 * them), the 8 bytes rung are the WQE's first, and a BlueFlame copy is
 * the WQE's first basic block as it is in the ring.
 *
 * Each pass looks at the four BlueFlame halves of every UAR page (two
 * registers, each written in its two halves in turn): a half whose first
 * 8 bytes changed was rung, and its record and first 8 bytes are checked
 * then. A copy may still be in progress when it is seen, so its other
 * bytes are checked once the ring settled: when a pass finds the other
 * half of the register rung and this one not, the program has gone on and
 * this half holds its last ring whole. A half whose other bytes did not
 * change since it last settled was rung with 8 bytes. Rings that come and
 * go between two passes are not seen; the check is of what is.
 */
#include <emu/engine/engine.h>


namespace uct_ib_emu {

namespace {

constexpr unsigned BF_HALVES = UAR_BF_REGS * 2;
constexpr unsigned BB_WORDS  = MLX5_SEND_WQE_BB / sizeof(uint64_t);

uint64_t load_word(const uint8_t *p)
{
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(p),
                           __ATOMIC_ACQUIRE);
}

/* The QP a doorbell on @a page names, if it uses that page */
const qp *find_ring_qp(const device *dev, const uar_page *page, uint32_t qpn)
{
    auto it = dev->qps.find(qpn);

    return ((it != dev->qps.end()) && (it->second->uar == page)) ?
           it->second : nullptr;
}

const uint8_t *ring_wqe(const ring &r, uint16_t index)
{
    return r.buf + size_t(index & (r.cnt - 1)) * MLX5_SEND_WQE_BB;
}

/* Where the QP a foreign doorbell names rings, for its report */
std::string foreign_detail(const device *dev, uint32_t qpn)
{
    auto it = dev->qps.find(qpn);
    char buf[64];

    if (it == dev->qps.end()) {
        return "no such QP on this device";
    }
    if (it->second->uar == nullptr) {
        return "it has no UAR page";
    }
    snprintf(buf, sizeof(buf), "it uses UAR page 0x%x",
             it->second->uar->page_id);
    return buf;
}

void report(emu_state &s, device *dev, uct_ib_emu_doorbell_error_t error,
            uint32_t qpn, uint16_t index, uint32_t page_id)
{
    ++s.engine.doorbell_errors[error];
    if (dev->doorbell_errors_reported & (1u << error)) {
        return;
    }
    dev->doorbell_errors_reported |= 1u << error;
    ucs_error("%s: doorbell of qp 0x%x, WQE %u, on UAR page 0x%x: %s%s%s "
              "(the first of its kind on this device; all are counted)",
              dev->name.c_str(), qpn, index, page_id,
              uct_ib_emu_doorbell_error_str(error),
              (error == UCT_IB_EMU_DOORBELL_FOREIGN_QP) ? "; " : "",
              (error == UCT_IB_EMU_DOORBELL_FOREIGN_QP) ?
              foreign_detail(dev, qpn).c_str() : "");
}

/* The half of @a page whose contents are @a words was rung: the record
 * and the ring must have the WQE it names */
void check_ring(emu_state &s, device *dev, uar_page *page,
                const uint64_t *words)
{
    const uint8_t  *w0    = reinterpret_cast<const uint8_t*>(words);
    const uint32_t qpn    = dma_load_be32(w0 + 4) >> 8;
    const uint16_t index  = static_cast<uint16_t>(dma_load_be32(w0) >> 8);
    const qp       *q     = find_ring_qp(dev, page, qpn);
    uint16_t       counter, posted;

    ++s.engine.doorbells_seen;
    if (q == nullptr) {
        report(s, dev, UCT_IB_EMU_DOORBELL_FOREIGN_QP, qpn, index,
               page->page_id);
        return;
    }

    const ring r = sq_ring(q);
    counter      = static_cast<uint16_t>(
            dma_load_be32(&qp_dbrec(q)[MLX5_SND_DBR]));
    posted       = counter - index; /* modulo 2^16 */
    if ((r.buf == nullptr) || (posted == 0) || (posted > r.cnt)) {
        report(s, dev, UCT_IB_EMU_DOORBELL_RECORD_BEHIND, qpn, index,
               page->page_id);
    } else if (words[0] != load_word(ring_wqe(r, index))) {
        report(s, dev, UCT_IB_EMU_DOORBELL_NOT_THE_WQE, qpn, index,
               page->page_id);
    }
}

/* The half's last ring settled with @a words: if it was a BlueFlame copy
 * (the rest of the half changed) of a WQE of one basic block, the copy
 * must hold that WQE */
void check_settled(emu_state &s, device *dev, uar_page *page,
                   uar_page::bf_half *half, const uint64_t *words)
{
    const uint8_t  *w0   = reinterpret_cast<const uint8_t*>(words);
    const uint32_t qpn   = dma_load_be32(w0 + 4) >> 8;
    const uint16_t index = static_cast<uint16_t>(dma_load_be32(w0) >> 8);
    const unsigned ds    = dma_load_be32(w0 + 4) & 0x3f;
    const qp       *q    = find_ring_qp(dev, page, qpn);

    if ((q == nullptr) || (ds > MLX5_SEND_WQE_BB / 16) ||
        (memcmp(words + 1, half->settled + 1,
                (BB_WORDS - 1) * sizeof(uint64_t)) == 0)) {
        return; /* reported when rung, a larger WQE, or 8 bytes rung */
    }

    const ring r = sq_ring(q);
    if (r.buf == nullptr) {
        return;
    }
    ++s.engine.bf_copies_checked;
    /* the bytes of the WQE; what the basic block holds after them is
     * nobody's */
    const uint8_t *wqe = ring_wqe(r, index);
    for (unsigned i = 1; i < (ds * 16 + 7) / 8; ++i) {
        if (words[i] != load_word(wqe + i * sizeof(uint64_t))) {
            report(s, dev, UCT_IB_EMU_DOORBELL_BF_MISMATCH, qpn, index,
                   page->page_id);
            return;
        }
    }
}

/* A half's contents; the first word last, so that when it still shows a
 * ring, the words read before it are not a later ring's (stores become
 * visible in order, and a ring writes its first word first) */
void read_half(const uint8_t *bf, uint64_t *words)
{
    for (unsigned i = BB_WORDS; i-- > 0;) {
        words[i] = load_word(bf + i * sizeof(uint64_t));
    }
}

} // namespace

void doorbell_check_page(emu_state &s, device *dev, uar_page *page)
{
    for (unsigned r = 0; r < UAR_BF_REGS; ++r) {
        uint64_t words[2][BB_WORDS];
        bool     rung[2];

        for (unsigned h = 0; h < 2; ++h) {
            uar_page::bf_half &half = page->bf_halves[2 * r + h];

            read_half(page->mem.bytes() + UAR_BF_OFFSET +
                      r * UAR_BF_REG_SIZE + h * BF_BUF_SIZE, words[h]);
            rung[h] = (words[h][0] != half.seen[0]);
            if (rung[h]) {
                check_ring(s, dev, page, words[h]);
                memcpy(half.seen, words[h], sizeof(half.seen));
                half.pending = !page->nc;
            }
        }

        /* a half the program left for the other one holds its last
         * ring whole */
        for (unsigned h = 0; h < 2; ++h) {
            uar_page::bf_half &half = page->bf_halves[2 * r + h];

            if (half.pending && !rung[h] && rung[1 - h]) {
                check_settled(s, dev, page, &half, words[h]);
                memcpy(half.settled, words[h], sizeof(half.settled));
                half.pending = false;
            }
        }
    }
}

void doorbell_check(emu_state &s, device *dev)
{
    for (const auto &entry : dev->uar_pages) {
        doorbell_check_page(s, dev, entry.second);
    }
}

} // namespace uct_ib_emu


const char *uct_ib_emu_doorbell_error_str(uct_ib_emu_doorbell_error_t error)
{
    switch (error) {
    case UCT_IB_EMU_DOORBELL_FOREIGN_QP:
        return "the QP it names does not use this UAR page";
    case UCT_IB_EMU_DOORBELL_RECORD_BEHIND:
        return "rung before the doorbell record counted the WQE";
    case UCT_IB_EMU_DOORBELL_NOT_THE_WQE:
        return "its 8 bytes are not the WQE's first";
    case UCT_IB_EMU_DOORBELL_BF_MISMATCH:
        return "the BlueFlame copy is not the WQE in the ring";
    }
    return "unknown";
}
