/*
 * UMR as the device executes it: a delivered work request of the md's UMR
 * QP binds an indirect mkey to an MR list (its KLMs checked against the MRs
 * they name) or invalidates it; the work request path itself is the verbs
 * front-end's (frontend/verbs_wr.cc). And what a bound mkey holds, for
 * tests (api/emu.h).
 */
#include <emu/firmware/umr.h>


namespace uct_ib_emu {

enum ibv_wc_status umr_execute(qp *q, const send_wr &wr)
{
    const device *dev = q->ctx->dev;
    mkey *m           = find_mkey_by_key(dev, wr.key);

    if ((m == nullptr) || m->ksm || (m->pd != q->pd)) {
        return IBV_WC_LOC_PROT_ERR; /* a DevX KSM mkey has no UMR enabled */
    }

    if (wr.op == send_wr::LOCAL_INV) {
        m->bound        = false;
        m->access       = 0;
        m->bound_by_qpn = 0;
        m->length       = 0;
        m->entries.clear();
        return IBV_WC_SUCCESS;
    }

    if (m->bound) {
        return IBV_WC_MW_BIND_ERR;
    }

    uint64_t length = 0;
    for (const klm &e : wr.sges) {
        const mr *r = find_mr_by_key(dev, e.lkey);
        uintptr_t start, end;

        if ((r == nullptr) || (r->pd != q->pd)) {
            return IBV_WC_LOC_PROT_ERR;
        }

        start = reinterpret_cast<uintptr_t>(r->ibv.addr);
        end   = start + r->ibv.length;
        if ((e.addr < start) || (e.addr > end) || (e.length > end - e.addr)) {
            return IBV_WC_LOC_PROT_ERR;
        }
        length += e.length;
    }

    m->bound        = true;
    m->access       = wr.access;
    m->bound_by_qpn = q->qpn;
    m->length       = length;
    m->entries      = wr.sges;
    return IBV_WC_SUCCESS;
}

} // namespace uct_ib_emu


using namespace uct_ib_emu;

ucs_status_t uct_ib_emu_mkey_info(uint32_t key, uct_ib_emu_mkey_info_t *info)
{
    emu_state &s = state();
    guard g(s.lock);

    for (const auto &dev : s.devices) {
        const mkey *m = find_mkey_by_key(dev.get(), key);
        const mr *r   = find_mr_by_key(dev.get(), key);

        if (m != nullptr) {
            info->device       = dev->name;
            info->indirect     = true;
            info->bound        = m->bound;
            info->access       = m->access;
            info->bound_by_qpn = m->bound_by_qpn;
            info->length       = m->length;
            info->ksm          = m->ksm;
            info->start_addr   = m->start_addr;
            info->entries.clear();
            for (const klm &e : m->entries) {
                uint32_t len = m->ksm ?
                               static_cast<uint32_t>(std::min<uint64_t>(
                                   uint64_t(1) << m->log_entity_size,
                                   UINT32_MAX)) :
                               e.length;
                info->entries.push_back({e.lkey, e.addr, len});
            }
            return UCS_OK;
        }

        if (r != nullptr) {
            info->device       = dev->name;
            info->indirect     = false;
            info->bound        = false;
            info->access       = static_cast<uint32_t>(r->access);
            info->bound_by_qpn = 0;
            info->length       = r->ibv.length;
            info->ksm          = false;
            info->start_addr   = reinterpret_cast<uintptr_t>(r->ibv.addr);
            info->entries.clear();
            return UCS_OK;
        }
    }

    return UCS_ERR_NO_ELEM;
}
