/*
 * The inline part of the mlx5 common layer (ib_mlx5.h): CQE64 polling, the
 * WQE segment builders and the doorbell, which the data path of a transport
 * calls on every operation and every progress call.
 *
 * May include what ib_mlx5.h may include.
 */
#ifndef UCT_IB_MLX5_INL_
#define UCT_IB_MLX5_INL_

#include "ib_mlx5.h"

#include <ucs/sys/compiler_def.h>

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

/* ------------------------------------------------------------------------
 * CQE64 polling
 */

bool uct_ib_mlx5_poll_cq::ready() const
{
    const uint8_t op_own = __atomic_load_n(&cqe()->op_own, __ATOMIC_ACQUIRE);

    return ((op_own ^ owner) & MLX5_CQE_OWNER_MASK) == 0;
}

struct mlx5_cqe64 *uct_ib_mlx5_poll_cq::cqe() const
{
    return reinterpret_cast<struct mlx5_cqe64*>(next);
}

void uct_ib_mlx5_poll_cq::advance()
{
    ++ci;
    next += cqe_size;
    if (ucs_unlikely((ci & mask) == 0)) {
        next   = cqe64;
        owner ^= MLX5_CQE_OWNER_MASK;
    }
}

struct mlx5_cqe64 *uct_ib_mlx5_poll_cq::peek() const
{
    return ready() ? cqe() : nullptr;
}

void uct_ib_mlx5_poll_cq::update_ci() const
{
    __atomic_store_n(&dbrec[UCT_MLX5_CQ_DBR_SET_CI], htobe32(ci & 0xffffff),
                     __ATOMIC_RELEASE);
}

void uct_ib_mlx5_poll_cq::arm(bool solicited) const
{
    const uint32_t cmd = solicited ? MLX5_CQ_DB_REQ_NOT_SOL :
                                     MLX5_CQ_DB_REQ_NOT;
    const uint32_t val = ((arm_sn & 3) << 28) | cmd | (ci & 0xffffff);
    const uint64_t doorbell = (uint64_t(val) << 32) | cqn;

    /* the record before the doorbell that makes the device read it */
    __atomic_store_n(&dbrec[UCT_MLX5_CQ_DBR_ARM], htobe32(val),
                     __ATOMIC_RELEASE);
    __atomic_store_n(reinterpret_cast<uint64_t*>(
                             static_cast<uint8_t*>(uar) + MLX5_CQ_DOORBELL),
                     htobe64(doorbell), __ATOMIC_RELEASE);
}

/* The QP number an error or send CQE is for */
static inline uint32_t uct_ib_mlx5_cqe_qpn(const struct mlx5_cqe64 *cqe)
{
    return be32toh(cqe->sop_drop_qpn) & 0xffffff;
}

/* ------------------------------------------------------------------------
 * WQE segments, 16-byte units of a WQE of 64-byte basic blocks
 */

/** The control segment of the WQE at @a pi of @a txwq: @a opcode with
 *  @a opmod, the WQE's size in @a ds 16-byte units, the completion and
 *  fence flags @a fm_ce_se, no signature, stream or immediate (one
 *  8-byte store). */
static inline void
uct_ib_mlx5_set_ctrl_seg(struct mlx5_wqe_ctrl_seg *ctrl,
                         const uct_ib_mlx5_txwq_t *txwq, uint16_t pi,
                         uint8_t opcode, uint8_t opmod, unsigned ds,
                         uint8_t fm_ce_se)
{
    /* signature, dci_stream_channel_id, fm_ce_se (its byte 3), imm */
    const uint64_t second = htobe64(uint64_t(fm_ce_se) << 32);

    static_assert(offsetof(struct mlx5_wqe_ctrl_seg, signature) == 8 &&
                  offsetof(struct mlx5_wqe_ctrl_seg, fm_ce_se) == 11 &&
                  sizeof(struct mlx5_wqe_ctrl_seg) == 16,
                  "the PRM's control segment");
    ctrl->opmod_idx_opcode = htobe32((uint32_t(opmod) << 24) |
                                     (uint32_t(pi) << 8) | opcode);
    ctrl->qpn_ds           = htobe32(txwq->qpn_ds | ds);
    memcpy(&ctrl->signature, &second, sizeof(second));
}

/** A remote address segment at @a seg; the byte after it. */
static inline uint8_t *
uct_ib_mlx5_set_raddr_seg(uint8_t *seg, uint64_t raddr, uint32_t rkey)
{
    auto *raddr_seg = reinterpret_cast<struct mlx5_wqe_raddr_seg*>(seg);

    raddr_seg->raddr    = htobe64(raddr);
    raddr_seg->rkey     = htobe32(rkey);
    raddr_seg->reserved = 0;
    return seg + sizeof(*raddr_seg);
}

/** The header of @a length bytes of inline data at @a seg; the byte where
 *  the data goes. */
static inline uint8_t *uct_ib_mlx5_set_inl_seg(uint8_t *seg, uint32_t length)
{
    /* a host integer holding a big-endian value, as mlx5dv.h declares */
    reinterpret_cast<struct mlx5_wqe_inl_data_seg*>(seg)->byte_count =
            htobe32(length | MLX5_INLINE_SEG);
    return seg + sizeof(struct mlx5_wqe_inl_data_seg);
}

/** A data segment: @a byte_count_be bytes at @a addr of the memory key
 *  @a lkey_be (both big endian, so that a caller may swap them once). */
static inline void
uct_ib_mlx5_set_data_seg(struct mlx5_wqe_data_seg *dseg, uint64_t addr,
                         uint32_t byte_count_be, uint32_t lkey_be)
{
    dseg->byte_count = byte_count_be;
    dseg->lkey       = lkey_be;
    dseg->addr       = htobe64(addr);
}

/** A standard atomic segment (fetch-and-add, compare-and-swap) at @a seg;
 *  its length. */
static inline size_t
uct_ib_mlx5_set_atomic_seg(uint8_t *seg, uint64_t swap_add, uint64_t compare)
{
    struct mlx5_wqe_atomic_seg a;

    a.swap_add = htobe64(swap_add);
    a.compare  = htobe64(compare);
    memcpy(seg, &a, sizeof(a));
    return sizeof(a);
}

/** The segment(s) of a masked compare-and-swap on @a size (4 or 8) bytes
 *  at @a seg; their length. */
static inline size_t
uct_ib_mlx5_set_masked_cs_seg(uint8_t *seg, unsigned size, uint64_t swap,
                              uint64_t compare, uint64_t swap_mask,
                              uint64_t compare_mask)
{
    if (size == 4) {
        struct uct_mlx5_masked_cs32_seg a;

        a.swap         = htobe32(swap);
        a.compare      = htobe32(compare);
        a.swap_mask    = htobe32(swap_mask);
        a.compare_mask = htobe32(compare_mask);
        memcpy(seg, &a, sizeof(a));
        return sizeof(a);
    } else {
        struct uct_mlx5_masked_cs64_seg a;

        a.swap         = htobe64(swap);
        a.compare      = htobe64(compare);
        a.swap_mask    = htobe64(swap_mask);
        a.compare_mask = htobe64(compare_mask);
        memcpy(seg, &a, sizeof(a));
        return sizeof(a);
    }
}

/** The segment of a masked fetch-and-add on @a size (4 or 8) bytes, with
 *  the most significant bit of each field in @a boundary, at @a seg; its
 *  length. */
static inline size_t
uct_ib_mlx5_set_masked_fa_seg(uint8_t *seg, unsigned size, uint64_t add,
                              uint64_t boundary)
{
    if (size == 4) {
        struct uct_mlx5_masked_fa32_seg a = {};

        a.add            = htobe32(add);
        a.field_boundary = htobe32(boundary);
        memcpy(seg, &a, sizeof(a));
        return sizeof(a);
    } else {
        struct uct_mlx5_masked_fa64_seg a;

        a.add            = htobe64(add);
        a.field_boundary = htobe64(boundary);
        memcpy(seg, &a, sizeof(a));
        return sizeof(a);
    }
}

/** The length of the segment(s) of a masked atomic on @a size bytes:
 *  compare-and-swap if @a cs, else fetch-and-add. */
static inline size_t uct_ib_mlx5_masked_atomic_seg_size(bool cs, unsigned size)
{
    if (cs) {
        return (size == 4) ? sizeof(struct uct_mlx5_masked_cs32_seg) :
                             sizeof(struct uct_mlx5_masked_cs64_seg);
    }
    return (size == 4) ? sizeof(struct uct_mlx5_masked_fa32_seg) :
                         sizeof(struct uct_mlx5_masked_fa64_seg);
}

/** A few bytes of inline data, without a call for the common small sizes */
static inline void uct_ib_mlx5_inline_copy(uint8_t *dst, const void *src,
                                           unsigned length)
{
    auto *s = static_cast<const uint8_t*>(src);

    if (length == 8) {
        memcpy(dst, s, 8); /* an 8-byte put or message: one store */
        return;
    }
    if (length > 32) {
        memcpy(dst, s, length);
        return;
    }
    for (; length >= 8; length -= 8, dst += 8, s += 8) {
        memcpy(dst, s, 8);
    }
    for (; length > 0; --length) {
        *dst++ = *s++;
    }
}

/* ------------------------------------------------------------------------
 * Doorbells
 */

/** Publish @a counter (WQEs posted) in the doorbell record @a dbrec, after
 *  the WQEs it counts. */
static inline void uct_ib_mlx5_update_dbrec(uint32_t *dbrec, uint16_t counter)
{
    __atomic_store_n(dbrec, htobe32(counter), __ATOMIC_RELEASE);
}

/** Order the stores before it ahead of the write-combining ones after it,
 *  and push those out of the CPU's write-combining buffers (x86: the store
 *  fence; the compiler barrier elsewhere is not enough for a device) */
static inline void uct_ib_mlx5_wc_fence()
{
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("sfence" ::: "memory");
#elif defined(__aarch64__)
    asm volatile("dsb st" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/** One 8-byte store to a UAR. Built with ThreadSanitizer, the device on
 *  the other side is the emulator's engine thread reading the page: the
 *  stores become relaxed atomics, which compile to the same moves, so that
 *  the sanitizer sees the program and the device agree on the access */
static inline void uct_ib_mlx5_mmio_write64(uint8_t *reg, uint64_t value)
{
#if defined(__SANITIZE_THREAD__)
    __atomic_store_n(reinterpret_cast<uint64_t*>(reg), value, __ATOMIC_RELAXED);
#else
    *reinterpret_cast<volatile uint64_t*>(reg) = value;
#endif
}

/** Copy a WQE's first basic block to a BlueFlame register in four 16-byte
 *  stores (a write-combining buffer gathers them into one PCIe write) */
static inline void uct_ib_mlx5_bf_copy(uint8_t *reg, const uint8_t *wqe)
{
#if defined(__SSE2__) && !defined(__SANITIZE_THREAD__)
    auto *dst = reinterpret_cast<__m128i*>(reg);
    auto *src = reinterpret_cast<const __m128i*>(wqe);
    __m128i a = _mm_load_si128(src), b = _mm_load_si128(src + 1);
    __m128i c = _mm_load_si128(src + 2), d = _mm_load_si128(src + 3);

    _mm_store_si128(dst, a);
    _mm_store_si128(dst + 1, b);
    _mm_store_si128(dst + 2, c);
    _mm_store_si128(dst + 3, d);
#else
    for (unsigned i = 0; i < MLX5_SEND_WQE_BB; i += sizeof(uint64_t)) {
        uint64_t word;

        memcpy(&word, wqe + i, sizeof(word));
        uct_ib_mlx5_mmio_write64(reg + i, word);
    }
#endif
}

/** The WQE of @a bbs basic blocks at @a wqe is complete and the producer
 *  index is @a pi: the doorbell record, then the UAR, as a NIC needs them:
 *  the record counts the WQE before the UAR is written; a WQE of one basic
 *  block goes whole to a BlueFlame register (the device takes it from
 *  there instead of reading the ring), a larger one, or any on a
 *  non-cached UAR, rings with its first 8 bytes; then the write-combining
 *  buffers are flushed, and the next doorbell takes the other half. */
static inline void uct_ib_mlx5_ring_doorbell(const uct_ib_mlx5_txwq_t *txwq,
                                             const uint8_t *wqe, uint16_t pi,
                                             unsigned bbs)
{
    uct_ib_mlx5_bf_reg_t *reg = txwq->reg;

    uct_ib_mlx5_update_dbrec(txwq->dbrec, pi);
    uct_ib_mlx5_wc_fence();
    if ((bbs == 1) && (reg->half != 0)) {
        uct_ib_mlx5_bf_copy(reg->addr, wqe);
    } else {
        uint64_t doorbell;

        memcpy(&doorbell, wqe, sizeof(doorbell));
        uct_ib_mlx5_mmio_write64(reg->addr, doorbell);
    }
    uct_ib_mlx5_wc_fence();
    reg->addr = reinterpret_cast<uint8_t*>(
            reinterpret_cast<uintptr_t>(reg->addr) ^ reg->half);
}

#endif
