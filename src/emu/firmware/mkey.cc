/*
 * DevX CREATE_MKEY as the firmware executes it, in the one access mode the
 * device models: KSM, an indirect mkey addressed by virtual address from
 * start_addr whose translation entries (16 bytes each: a key and an address)
 * all cover 2^log_entity_size bytes. UCX's mlx5 md builds its atomic keys so
 * (the peer adds 8 x its atomic MR id to the remote address, the KSM start
 * is shifted by the same amount) and, with invalidation, its indirect keys.
 * The entries' keys are resolved when the mkey is used (engine/mkey.cc),
 * as the device does; DESTROY_MKEY is the DevX object's destroy.
 */
#include <emu/firmware/devx.h>
#include <emu/fabric/host_topology.h>


namespace uct_ib_emu {

namespace prm = uct_mlx5_prm;

namespace {

constexpr unsigned ACCESS_MODE_KSM = 0x3;
constexpr uint32_t QPN_ANY         = 0xffffff;
constexpr size_t   KSM_ENTRY_BYTES = 16;

template <typename F>
uint64_t get(const uint32_t *buf)
{
    return uct_mlx5_prm_get<F>(buf);
}

template <typename F>
using mkc_f = prm::at<prm::create_mkey_in::memory_key_mkey_entry, F>;

int mkc_access(const uint32_t *in)
{
    int access = 0;

    if (get<mkc_f<prm::mkc::lw>>(in)) {
        access |= IBV_ACCESS_LOCAL_WRITE;
    }
    if (get<mkc_f<prm::mkc::rr>>(in)) {
        access |= IBV_ACCESS_REMOTE_READ;
    }
    if (get<mkc_f<prm::mkc::rw>>(in)) {
        access |= IBV_ACCESS_REMOTE_WRITE;
    }
    if (get<mkc_f<prm::mkc::a>>(in)) {
        access |= IBV_ACCESS_REMOTE_ATOMIC;
    }
    return access;
}

/* Entry i of the translation list after the command's fixed part */
klm ksm_entry(const mailbox &in, uint64_t i)
{
    const uint32_t *e = in.dw() +
                        prm::create_mkey_in::klm_pas_mtt::offset / 32 +
                        i * (KSM_ENTRY_BYTES / 4);
    klm entry;

    entry.lkey   = be32toh(e[1]);
    entry.addr   = (uint64_t(be32toh(e[2])) << 32) | be32toh(e[3]);
    entry.length = 0; /* KSM: every entry covers the entity size */
    return entry;
}

} // namespace


fw_result mkey_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                          mkey **mkey_p)
{
    device *dev = ctx->dev;
    uint64_t n, start, len;
    unsigned mode, log_entity;
    std::unique_ptr<mkey> m;
    uint32_t index, key;
    fw_result result;
    pd *p;

    result = check_mailboxes<prm::create_mkey_in::layout,
                             prm::create_mkey_out::layout>(in, out);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    mode = static_cast<unsigned>(
            (get<mkc_f<prm::mkc::access_mode_4_2>>(in.dw()) << 2) |
            get<mkc_f<prm::mkc::access_mode_1_0>>(in.dw()));
    if (mode != ACCESS_MODE_KSM) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_MKEY_ACCESS_MODE);
    }
    if (get<mkc_f<prm::mkc::free>>(in.dw()) ||
        get<mkc_f<prm::mkc::length64>>(in.dw()) ||
        get<mkc_f<prm::mkc::bsf_en>>(in.dw())) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_MKEY_NOT_MODELLED);
    }
    if (get<mkc_f<prm::mkc::qpn>>(in.dw()) != QPN_ANY) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_MKEY_QPN);
    }

    p = lookup(dev->pds, get<mkc_f<prm::mkc::pd>>(in.dw()), ctx);
    if (p == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_MKEY_BAD_PD);
    }

    /* The entries: as many as announced, within the list the mkey was
     * sized for and the device's limit, and present in the input */
    n = get<prm::create_mkey_in::translations_octword_actual_size>(in.dw());
    if ((n == 0) ||
        (n > get<mkc_f<prm::mkc::translations_octword_size>>(in.dw())) ||
        (n > (uint64_t(1) << LOG_MAX_KLM_LIST))) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_MKEY_TRANSLATIONS);
    }
    if (in.size() < prm::create_mkey_in::layout::size_bits / 8 +
                    n * KSM_ENTRY_BYTES) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_INPUT_LEN);
    }

    /* The range the entries cover holds the mkey's */
    log_entity = static_cast<unsigned>(
            get<mkc_f<prm::mkc::log_page_size>>(in.dw()));
    start      = get<mkc_f<prm::mkc::start_addr>>(in.dw());
    len        = get<mkc_f<prm::mkc::len>>(in.dw());
    if ((len > (n << log_entity)) || (start + len < start)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_MKEY_RANGE);
    }

    if (dev->mkeys.size() + dev->mrs.size() >= (1u << LOG_MAX_MKEY)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_MKEY_LIMIT);
    }

    index = alloc_mkey_index(dev);
    key   = (index << 8) |
            static_cast<uint32_t>(get<mkc_f<prm::mkc::mkey_7_0>>(in.dw()));

    m                  = std::make_unique<mkey>(ctx);
    m->pd              = p;
    m->ksm             = true;
    m->bound           = true;
    m->access          = static_cast<uint32_t>(mkc_access(in.dw()));
    m->start_addr      = start;
    m->length          = len;
    m->log_entity_size = log_entity;
    m->dv.lkey         = key;
    m->dv.rkey         = key;
    for (uint64_t i = 0; i < n; ++i) {
        m->entries.push_back(ksm_entry(in, i));
    }

    ++p->refs;
    dev->mkeys[index] = m.get();
    put<prm::create_mkey_out::mkey_index>(out.dw(), index);
    uct_ib_emu_debug("%s: created KSM mkey 0x%x: 0x%" PRIx64 "+0x%" PRIx64
                     ", %" PRIu64 " entries of 2^%u bytes",
                     dev->name.c_str(), key, start, len, n, log_entity);
    *mkey_p = add_object(ctx, std::move(m));
    return FW_OK;
}

} // namespace uct_ib_emu
