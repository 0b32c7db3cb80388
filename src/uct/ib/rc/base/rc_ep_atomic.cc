/*
 * Atomics through a neutral work request (rc_ep.h). Standard 8-byte
 * fetch-add and compare-swap on every transport; one with masked
 * (extended) atomics (uct_rc_iface::masked_atomics, rc_mlx5) does the rest
 * with them on 4 and 8 bytes:
 *   add  masked fetch-add, no field boundary    xor  every bit its own field
 *   and  masked swap of the bits value clears   or   of the bits value sets
 *   swap masked swap of every bit               cswap32  masked on every bit
 * Remote memory holds host-order values (the device works in host
 * endianness, as the kernel configures it); an 8-byte atomic, standard or
 * masked, answers in host order (the mode is of 8-byte requests), a 4-byte
 * masked one big endian.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_ep.h"

#include <cinttypes>

namespace {

/* Build @a wr for @a op on @a size bytes; false if the transport lacks it */
bool atomic_wr(const uct_rc_ep *ep, uct_atomic_op_t op, unsigned size,
               uint64_t value, uint64_t compare, uct_rc_wr_t *wr)
{
    const uint64_t all = (size == 4) ? UINT32_MAX : UINT64_MAX;
    const bool     std_ok = (size == 8);

    wr->atomic_size = size;
    wr->swap_add    = value;
    switch (op) {
    case UCT_ATOMIC_OP_ADD:
        wr->opcode = std_ok ? UCT_RC_OP_ATOMIC_FA : UCT_RC_OP_MASKED_FA;
        break;
    case UCT_ATOMIC_OP_CSWAP:
        wr->opcode       = std_ok ? UCT_RC_OP_ATOMIC_CS : UCT_RC_OP_MASKED_CS;
        wr->compare      = compare;
        wr->swap_mask    = all;
        wr->compare_mask = all;
        break;
    case UCT_ATOMIC_OP_XOR:
        wr->opcode       = UCT_RC_OP_MASKED_FA;
        wr->compare_mask = all; /* the field boundary: no carries */
        break;
    case UCT_ATOMIC_OP_AND:
        wr->opcode    = UCT_RC_OP_MASKED_CS;
        wr->swap_add  = 0;
        wr->swap_mask = ~value & all;
        break;
    case UCT_ATOMIC_OP_OR:
        wr->opcode    = UCT_RC_OP_MASKED_CS;
        wr->swap_mask = value;
        break;
    case UCT_ATOMIC_OP_SWAP:
        wr->opcode    = UCT_RC_OP_MASKED_CS;
        wr->swap_mask = all;
        break;
    default:
        return false;
    }

    return uct_rc_ep_iface(ep)->masked_atomics ||
           (wr->opcode == UCT_RC_OP_ATOMIC_FA) ||
           (wr->opcode == UCT_RC_OP_ATOMIC_CS);
}

ucs_status_t post_atomic(uct_ep_h tl_ep, uct_atomic_op_t opcode, unsigned size,
                         uint64_t value, uint64_t compare, uint64_t remote_addr,
                         uct_rkey_t rkey, void *result, uct_completion_t *comp)
{
    uct_rc_ep    *ep    = uct_rc_ep_of(tl_ep);
    uct_rc_iface *iface = uct_rc_ep_iface(ep);
    uct_rc_wr_t  wr     = {};
    uct_rc_op_t  op     = {};
    ucs_status_t status;

    status = uct_rc_ep_check(ep);
    if (status != UCS_OK) {
        return status;
    }
    if (!atomic_wr(ep, opcode, size, value, compare, &wr)) {
        return UCS_ERR_UNSUPPORTED;
    }
    if (ucs_unlikely(remote_addr % size)) {
        ucs_error("%s: atomic on %u bytes at unaligned address 0x%" PRIx64,
                  iface->dev_name.c_str(), size, remote_addr);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!uct_rc_ep_has_resources(ep, UCT_RC_EP_MAX_WR_COST)) {
        return UCS_ERR_NO_RESOURCE;
    }

    op.buf = iface->tx_bufs->get(); /* the device writes the old value here */
    if (op.buf == nullptr) {
        return UCS_ERR_NO_RESOURCE;
    }

    wr.sge[0]      = {reinterpret_cast<uintptr_t>(op.buf), size,
                      iface->tx_bufs->lkey()};
    wr.num_sge     = 1;
    wr.remote_addr = remote_addr;
    wr.rkey        = uct_rc_rkey(rkey);
    op.comp        = comp;
    op.result      = result;
    op.result_size = size;
    op.result_be   = (size == sizeof(uint32_t));
    status         = uct_rc_ep_post(ep, &wr, op, uct_rc_ep_wr_cost(ep, &wr));
    if (status != UCS_OK) {
        iface->tx_bufs->put(op.buf);
        return status;
    }
    return (result != nullptr) ? UCS_INPROGRESS : UCS_OK;
}

} // namespace

ucs_status_t uct_rc_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare,
                                      uint64_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint64_t *result,
                                      uct_completion_t *comp)
{
    return post_atomic(ep, UCT_ATOMIC_OP_CSWAP, 8, swap, compare, remote_addr,
                       rkey, result, comp);
}

ucs_status_t uct_rc_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare,
                                      uint32_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint32_t *result,
                                      uct_completion_t *comp)
{
    return post_atomic(ep, UCT_ATOMIC_OP_CSWAP, 4, swap, compare, remote_addr,
                       rkey, result, comp);
}

ucs_status_t uct_rc_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                     uint64_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey)
{
    return post_atomic(ep, opcode, 8, value, 0, remote_addr, rkey, nullptr,
                       nullptr);
}

ucs_status_t uct_rc_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                     uint32_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey)
{
    return post_atomic(ep, opcode, 4, value, 0, remote_addr, rkey, nullptr,
                       nullptr);
}

ucs_status_t uct_rc_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                      uint64_t value, uint64_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp)
{
    return post_atomic(ep, opcode, 8, value, 0, remote_addr, rkey, result,
                       comp);
}

ucs_status_t uct_rc_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                      uint32_t value, uint32_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp)
{
    return post_atomic(ep, opcode, 4, value, 0, remote_addr, rkey, result,
                       comp);
}
