/*
 * Memory keys as the engine checks them: an MR's lkey/rkey, an indirect
 * mkey a UMR bound (zero-based, its KLM list resolved through the MRs it
 * names) or a DevX KSM mkey (by virtual address, its fixed-size entries
 * resolved the same way), the PD, the access rights and the bounds.
 */
#include <emu/engine/engine.h>


namespace uct_ib_emu {

namespace {

/* Local read needs no right; every other access must be granted */
bool grants(int granted, int need)
{
    return (need & ~granted) == 0;
}

key_check mr_translate(const mr *m, const pd *p, uint64_t addr, uint64_t len,
                       int access, frag_list *frags)
{
    /* an MR on device memory is zero-based: addresses are offsets */
    uint64_t start = (m->on_dm != nullptr) ? 0 :
                     reinterpret_cast<uintptr_t>(m->ibv.addr);
    uint64_t end   = start + m->ibv.length;

    if (m->pd != p) {
        return key_check::PD;
    }
    if (!grants(m->access, access)) {
        return key_check::ACCESS;
    }
    if ((addr < start) || (addr > end) || (len > end - addr)) {
        return key_check::BOUNDS;
    }
    if (len > 0) {
        frags->push_back({(m->on_dm != nullptr) ? m->dm_base + addr :
                                                  reinterpret_cast<uint8_t*>(addr),
                          static_cast<uint32_t>(len)});
    }
    return key_check::OK;
}

/* A KSM mkey: addr a virtual address from start_addr; entry i covers
 * [start_addr + i * entity, +entity) and maps it to its key from its address */
key_check ksm_translate(const device *dev, const pd *p, const mkey *ind,
                        uint64_t addr, uint64_t len, frag_list *frags)
{
    const uint64_t entity = uint64_t(1) << ind->log_entity_size;
    uint64_t off;

    if ((addr < ind->start_addr) || (addr - ind->start_addr > ind->length) ||
        (len > ind->length - (addr - ind->start_addr))) {
        return key_check::BOUNDS;
    }

    off = addr - ind->start_addr;
    while (len > 0) {
        uint64_t i      = off >> ind->log_entity_size;
        uint64_t within = off & (entity - 1);
        uint64_t take   = std::min(entity - within, len);
        const mr *target;

        if (i >= ind->entries.size()) {
            return key_check::BOUNDS;
        }
        target = find_mr_by_key(dev, ind->entries[i].lkey);
        if (target == nullptr) {
            return key_check::NO_KEY; /* not an MR, or it went away */
        }
        key_check r = mr_translate(target, p, ind->entries[i].addr + within,
                                   take, 0, frags);
        if (r != key_check::OK) {
            return r;
        }
        off += take;
        len -= take;
    }
    return key_check::OK;
}

} // namespace


namespace {

/* A memory window: its own range and rights, then its MR's memory */
key_check mw_translate(const mw *w, const pd *p, const qp *via, uint64_t addr,
                       uint64_t len, int access, frag_list *frags)
{
    if (!w->bound || (w->key == 0)) {
        return key_check::NO_KEY;
    }
    if ((w->pd != p) ||
        ((w->ibv.type == IBV_MW_TYPE_2) && (w->qpn != via->qpn))) {
        return key_check::PD;
    }
    if (!grants(w->access, access)) {
        return key_check::ACCESS;
    }
    if ((addr < w->start) || (addr - w->start > w->length) ||
        (len > w->length - (addr - w->start))) {
        return key_check::BOUNDS;
    }
    return mr_translate(w->target, p, addr, len, 0, frags);
}

} // namespace

key_check mem_translate(const device *dev, const pd *p, uint32_t key,
                        uint64_t addr, uint64_t len, int access,
                        frag_list *frags, const qp *via)
{
    const mr *m = find_mr_by_key(dev, key);
    const mkey *ind;
    uint64_t pos, skip;

    if (m != nullptr) {
        return mr_translate(m, p, addr, len, access, frags);
    }

    if (via != nullptr) {
        auto it = dev->mws.find(key >> 8);
        if ((it != dev->mws.end()) && (it->second->key == key)) {
            return mw_translate(it->second, p, via, addr, len, access, frags);
        }
    }

    ind = find_mkey_by_key(dev, key);
    if ((ind == nullptr) || !ind->bound) {
        return key_check::NO_KEY;
    }
    if (ind->pd != p) {
        return key_check::PD;
    }
    if (!grants(static_cast<int>(ind->access), access)) {
        return key_check::ACCESS;
    }
    if (ind->ksm) {
        return ksm_translate(dev, p, ind, addr, len, frags);
    }
    if ((addr > ind->length) || (len > ind->length - addr)) {
        return key_check::BOUNDS;
    }

    /* Zero-based: addr is an offset into the concatenated entries */
    pos = 0;
    for (const klm &e : ind->entries) {
        const mr *target;
        uint64_t take;

        if (len == 0) {
            break;
        }
        if (addr >= pos + e.length) {
            pos += e.length;
            continue;
        }

        skip   = addr - pos;
        take   = std::min<uint64_t>(e.length - skip, len);
        target = find_mr_by_key(dev, e.lkey);
        if (target == nullptr) {
            return key_check::NO_KEY; /* the MR went away after the bind */
        }
        key_check r = mr_translate(target, p, e.addr + skip, take, 0, frags);
        if (r != key_check::OK) {
            return r;
        }
        addr += take;
        len  -= take;
        pos  += e.length;
    }

    return (len == 0) ? key_check::OK : key_check::BOUNDS;
}

} // namespace uct_ib_emu
