/*
 * Instruments for tests: counters, QP introspection and fault injection.
 */
#include "model.h"


namespace uct_ib_emu {

namespace {

#define UCT_IB_EMU_OP_CONV(_name, _conv, _ret, _args) UCT_IB_GLUE_CONV_##_conv,
#define UCT_IB_EMU_OP_NAME(_name, _conv, _ret, _args) #_name,

constexpr uct_ib_glue_conv_t op_conv[] = {
    UCT_IB_GLUE_FOREACH_OP(UCT_IB_EMU_OP_CONV)
};

constexpr const char *op_name[] = {
    UCT_IB_GLUE_FOREACH_OP(UCT_IB_EMU_OP_NAME)
};

#undef UCT_IB_EMU_OP_CONV
#undef UCT_IB_EMU_OP_NAME

static_assert(sizeof(op_conv) / sizeof(op_conv[0]) == UCT_IB_GLUE_OP_LAST,
              "one convention per glue slot");

template <typename T, typename Map>
T map_value(const Map &map, typename Map::key_type key)
{
    auto it = map.find(key);
    return (it == map.end()) ? T() : it->second;
}

} // namespace

uct_ib_glue_conv_t glue_op_conv(uct_ib_glue_op_t op)
{
    return op_conv[op];
}

bool take_op_fault(uct_ib_glue_op_t op, int *err)
{
    emu_state &s = state();

    /* every glue call asks: without a fault armed, it costs no lock */
    if (s.op_faults_armed.load(std::memory_order_acquire) == 0) {
        return false;
    }

    guard g(s.lock);
    fault &f = s.op_faults[op];

    if (f.count == 0) {
        return false;
    }

    if (--f.count == 0) {
        s.op_faults_armed.fetch_sub(1, std::memory_order_release);
    }
    *err = f.err;
    uct_ib_emu_debug("%s: injected failure, errno %d", op_name[op], f.err);
    return true;
}

bool take_wr_fault(emu_state &s, wr_fault *f)
{
    if (s.wr_faults.count == 0) {
        return false;
    }

    --s.wr_faults.count;
    *f = s.wr_faults;
    uct_ib_emu_debug("work request: injected completion status %d, vendor "
                     "syndrome 0x%x", f->status, f->vendor_err);
    return true;
}

void clear_faults_locked(emu_state &s)
{
    for (fault &f : s.op_faults) {
        f = fault();
    }
    s.op_faults_armed.store(0, std::memory_order_release);
    s.cmd_faults.clear();
    s.wr_faults = wr_fault();
}

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
    counters.err_cqes          = s.engine.err_cqes;

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

    s.ah_created        = 0;
    s.ah_destroyed      = 0;
    s.ah_reclaimed      = 0;
    s.objects_reclaimed = 0;
    s.cmds.clear();
    s.cmds_failed.clear();
    s.drops.clear();
    s.engine = engine_counters();
    port_counters_reset_locked(s);
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
        info->pdn           = q->pd->pdn;
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

ucs_status_t uct_ib_emu_fail_op(uct_ib_glue_op_t op, unsigned count, int err)
{
    emu_state &s = state();
    guard g(s.lock);

    if ((op < 0) || (op >= UCT_IB_GLUE_OP_LAST) ||
        (op_conv[op] == UCT_IB_GLUE_CONV_VOID) ||
        (op_conv[op] == UCT_IB_GLUE_CONV_NAME) ||
        ((count > 0) && (err <= 0))) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((s.op_faults[op].count == 0) && (count > 0)) {
        s.op_faults_armed.fetch_add(1, std::memory_order_release);
    } else if ((s.op_faults[op].count > 0) && (count == 0)) {
        s.op_faults_armed.fetch_sub(1, std::memory_order_release);
    }
    s.op_faults[op] = fault{count, err};
    return UCS_OK;
}

ucs_status_t uct_ib_emu_fail_op(const std::string &op_name_str,
                                unsigned count, int err)
{
    for (int op = 0; op < UCT_IB_GLUE_OP_LAST; ++op) {
        if (op_name_str == op_name[op]) {
            return uct_ib_emu_fail_op(static_cast<uct_ib_glue_op_t>(op),
                                      count, err);
        }
    }

    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t uct_ib_emu_fail_cmd(uint16_t opcode, unsigned count,
                                 uint8_t status, uint32_t syndrome,
                                 unsigned skip)
{
    emu_state &s = state();
    guard g(s.lock);

    if ((count > 0) && (status == UCT_IB_EMU_FW_OK)) {
        return UCS_ERR_INVALID_PARAM;
    }

    s.cmd_faults[opcode] = cmd_fault{skip, count, status, syndrome};
    return UCS_OK;
}

ucs_status_t uct_ib_emu_fail_wr(unsigned count, enum ibv_wc_status status,
                                uint32_t vendor_err)
{
    emu_state &s = state();
    guard g(s.lock);

    if ((count > 0) && (status == IBV_WC_SUCCESS)) {
        return UCS_ERR_INVALID_PARAM;
    }

    s.wr_faults = wr_fault{count, status, vendor_err};
    return UCS_OK;
}

void uct_ib_emu_clear_faults()
{
    emu_state &s = state();
    guard g(s.lock);

    clear_faults_locked(s);
}

unsigned uct_ib_emu_pending_faults()
{
    emu_state &s = state();
    guard g(s.lock);
    unsigned pending = 0;

    for (const fault &f : s.op_faults) {
        pending += f.count;
    }
    for (const auto &entry : s.cmd_faults) {
        pending += entry.second.count;
    }
    return pending + s.wr_faults.count;
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
