/*
 * Instruments for tests and tools (api/emu.h): counters, QP introspection
 * and syndrome names. Fault injection is the model's (model/faults.cc).
 */
#include <emu/model/model.h>


namespace uct_ib_emu {

namespace {

template <typename T, typename Map>
T map_value(const Map &map, typename Map::key_type key)
{
    auto it = map.find(key);
    return (it == map.end()) ? T() : it->second;
}

} // namespace

} // namespace uct_ib_emu


using namespace uct_ib_emu;

uint64_t uct_ib_emu_counters_t::cmd_count(uint16_t opcode) const
{
    return map_value<uint64_t>(cmds, opcode);
}

uint64_t uct_ib_emu_counters_t::cmd_failed_count(uint16_t opcode) const
{
    return map_value<uint64_t>(cmds_failed, opcode);
}

unsigned uct_ib_emu_counters_t::qp_count(uint8_t state) const
{
    return map_value<unsigned>(qps_by_state, state);
}

uint64_t uct_ib_emu_counters_t::drop_count(uct_ib_emu_drop_t reason) const
{
    return map_value<uint64_t>(drops, reason);
}

uint64_t uct_ib_emu_counters_t::err_cqe_count(uint8_t syndrome) const
{
    return map_value<uint64_t>(err_cqes, syndrome);
}

uint64_t uct_ib_emu_counters_t::doorbell_error_count() const
{
    uint64_t total = 0;

    for (const auto &entry : doorbell_errors) {
        total += entry.second;
    }
    return total;
}

uct_ib_emu_counters_t uct_ib_emu_counters()
{
    emu_state &s = state();
    guard g(s.lock);
    uct_ib_emu_counters_t counters;

    counters.ah_created        = s.ah_created;
    counters.ah_destroyed      = s.ah_destroyed;
    counters.ah_reclaimed      = s.ah_reclaimed;
    counters.objects_reclaimed = s.objects_reclaimed;
    counters.cmds              = s.cmds;
    counters.cmds_failed       = s.cmds_failed;
    counters.drops             = s.drops;
    counters.packets_sent      = s.engine.packets_sent;
    counters.packets_delivered = s.engine.packets_delivered;
    counters.retries           = s.engine.retries;
    counters.rnr_naks          = s.engine.rnr_naks;
    counters.cq_overruns       = s.engine.cq_overruns;
    counters.dma_unmapped      = dma_user_unmapped();
    counters.err_cqes          = s.engine.err_cqes;
    counters.doorbell_errors   = s.engine.doorbell_errors;
    counters.doorbells_seen    = s.engine.doorbells_seen;
    counters.bf_copies_checked = s.engine.bf_copies_checked;
    counters.poll_wait_taken   = s.poll_wait.counters().taken;
    counters.poll_wait_faults  = s.poll_wait.counters().faults;
    counters.poll_wait_written = s.poll_wait.counters().written;
    counters.poll_wait_expired = s.poll_wait.counters().expired;

    for (const auto &ctx : s.contexts) {
        for (const auto &entry : ctx.second->objects) {
            if (dynamic_cast<const ah*>(entry.first) != nullptr) {
                ++counters.ah_alive;
            }
        }
    }

    for (const auto &dev : s.devices) {
        for (const auto &entry : dev->qps) {
            ++counters.qps_by_state[entry.second->state];
        }
        counters.mkeys_alive += dev->mkeys.size();
    }

    return counters;
}

void uct_ib_emu_counters_reset()
{
    emu_state &s = state();
    guard g(s.lock);

    counters_reset_locked(s);
}

ucs_status_t uct_ib_emu_qp_info(uint32_t qpn, uct_ib_emu_qp_info_t *info)
{
    emu_state &s = state();
    guard g(s.lock);

    for (const auto &dev : s.devices) {
        auto it = dev->qps.find(qpn);
        const qp *q;

        if (it == dev->qps.end()) {
            continue;
        }

        q                   = it->second;
        info->device        = dev->name;
        info->devx          = q->devx;
        info->qpn           = q->qpn;
        info->state         = q->state;
        info->port          = q->port;
        info->pdn           = (q->pd != nullptr) ? q->pd->pdn : 0;
        info->cqn_snd       = (q->send_cq != nullptr) ? q->send_cq->cqn : 0;
        info->cqn_rcv       = (q->recv_cq != nullptr) ? q->recv_cq->cqn : 0;
        info->log_sq_size   = q->log_sq_size;
        info->log_rq_size   = q->log_rq_size;
        info->log_rq_stride = q->log_rq_stride;
        info->rq_type       = q->rq_type;
        info->no_sq         = q->no_sq;
        info->srqn          = (q->srq != nullptr) ? q->srq->srqn : 0;
        info->uar_page      = q->uar->page_id;
        info->remote_qpn    = q->remote_qpn;
        info->mtu           = q->mtu;
        info->log_msg_max   = q->log_msg_max;
        info->rre           = q->rre;
        info->rwe           = q->rwe;
        info->rae           = q->rae;
        info->atomic_mode   = q->atomic_mode;
        info->lag_tx_port_affinity = q->lag_tx_port_affinity;
        info->log_rra_max   = q->log_rra_max;
        info->log_sra_max   = q->log_sra_max;
        info->min_rnr_nak   = q->min_rnr_nak;
        info->retry_count   = q->retry_count;
        info->rnr_retry     = q->rnr_retry;
        info->ack_timeout   = q->path.ack_timeout;
        info->next_send_psn = q->next_send_psn;
        info->next_rcv_psn  = q->next_rcv_psn;
        info->primary       = q->path;
        return UCS_OK;
    }

    return UCS_ERR_NO_ELEM;
}

const char *uct_ib_emu_syndrome_str(uint32_t syndrome)
{
#define UCT_IB_EMU_SYNDROME_CASE(_name, _status, _value, _what) \
    case _value: \
        return _what;

    switch (syndrome) {
    UCT_IB_EMU_FOREACH_SYNDROME(UCT_IB_EMU_SYNDROME_CASE)
    default:
        return nullptr;
    }

#undef UCT_IB_EMU_SYNDROME_CASE
}
