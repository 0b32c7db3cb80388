/*
 * The engine's counters: every event counts on the emulator's totals and on
 * one port (the sender's for a packet sent or dropped, the receiver's for a
 * delivered one, the QP's for its retries, RNR NAKs and CQEs), and the
 * per-port view the tests (emu.h) and the tools (port_stats.h) read.
 */
#include <emu/engine/engine.h>
#include <emu/api/port_stats.h>

#include <cstdio>


namespace uct_ib_emu {

namespace {

/* The port of the QP with this number on c's device, or NULL */
port *cq_qp_port(const cq *c, uint32_t qpn)
{
    auto it = c->ctx->dev->qps.find(qpn);

    return (it == c->ctx->dev->qps.end()) ? nullptr : qp_port(it->second);
}

} // namespace


void count_retry(emu_state &s, const qp *q)
{
    port *p = qp_port(q);

    ++s.engine.retries;
    if (p != nullptr) {
        ++p->counters.engine.retries;
    }
}

void count_rnr_nak(emu_state &s, const qp *q)
{
    port *p = qp_port(q);

    ++s.engine.rnr_naks;
    if (p != nullptr) {
        ++p->counters.engine.rnr_naks;
    }
}

void count_err_cqe(emu_state &s, const cq *c, uint32_t qpn, uint8_t syndrome)
{
    port *p = cq_qp_port(c, qpn);

    ++s.engine.err_cqes[syndrome];
    if (p != nullptr) {
        ++p->counters.engine.err_cqes[syndrome];
    }
}

void count_cq_overrun(emu_state &s, const cq *c, uint32_t qpn)
{
    port *p = cq_qp_port(c, qpn);

    ++s.engine.cq_overruns;
    if (p != nullptr) {
        ++p->counters.engine.cq_overruns;
    }
}

} // namespace uct_ib_emu


using namespace uct_ib_emu;

namespace {

constexpr bool same_str(const char *a, const char *b)
{
    return (*a == *b) && ((*a == '\0') || same_str(a + 1, b + 1));
}

static_assert(same_str(UCT_IB_EMU_PORT_STATS_LIBRARY, UCT_IB_GLUE_EMU_LIBRARY),
              "tools look for the port counters in the library the glue loads");

/* Device and port of "mlx5_0:1" */
bool parse_dev_name(const char *dev_name, std::string *device, uint8_t *num)
{
    const char *colon = strrchr(dev_name, ':');
    char *end;
    unsigned long value;

    if ((colon == nullptr) || (colon == dev_name)) {
        return false;
    }

    value = strtoul(colon + 1, &end, 10);
    if ((*end != '\0') || (end == colon + 1) || (value < 1) || (value > 255)) {
        return false;
    }

    device->assign(dev_name, colon - dev_name);
    *num = static_cast<uint8_t>(value);
    return true;
}

void stat_add(uct_ib_emu_port_stat_t *stats, unsigned *num, const char *name,
              uint64_t count)
{
    if ((count == 0) || (*num >= UCT_IB_EMU_PORT_STATS_MAX)) {
        return;
    }

    snprintf(stats[*num].name, sizeof(stats[*num].name), "%s", name);
    stats[*num].count = count;
    ++*num;
}

} // namespace

uint64_t uct_ib_emu_port_counters_t::drop_count(uct_ib_emu_drop_t reason) const
{
    auto it = drops.find(reason);
    return (it == drops.end()) ? 0 : it->second;
}

uint64_t uct_ib_emu_port_counters_t::err_cqe_count(uint8_t syndrome) const
{
    auto it = err_cqes.find(syndrome);
    return (it == err_cqes.end()) ? 0 : it->second;
}

ucs_status_t uct_ib_emu_port_counters(const std::string &device, uint8_t num,
                                      uct_ib_emu_port_counters_t *counters)
{
    emu_state &s = state();
    guard g(s.lock);

    for (const auto &dev : s.devices) {
        const port *p = dev->get_port(num);

        if ((dev->name != device) || (p == nullptr)) {
            continue;
        }

        const engine_counters &e     = p->counters.engine;
        counters->packets_sent       = e.packets_sent;
        counters->packets_delivered  = e.packets_delivered;
        counters->retries            = e.retries;
        counters->rnr_naks           = e.rnr_naks;
        counters->cq_overruns        = e.cq_overruns;
        counters->drops              = p->counters.drops;
        counters->err_cqes           = e.err_cqes;
        return UCS_OK;
    }

    return UCS_ERR_NO_ELEM;
}

const char *uct_ib_emu_cqe_syndrome_str(uint8_t syndrome)
{
    switch (syndrome) {
    case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR:
        return "local length error";
    case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR:
        return "local QP operation error";
    case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR:
        return "local protection error";
    case MLX5_CQE_SYNDROME_WR_FLUSH_ERR:
        return "flushed";
    case MLX5_CQE_SYNDROME_MW_BIND_ERR:
        return "memory window bind error";
    case MLX5_CQE_SYNDROME_BAD_RESP_ERR:
        return "bad response";
    case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR:
        return "local access error";
    case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:
        return "remote invalid request";
    case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR:
        return "remote access error";
    case MLX5_CQE_SYNDROME_REMOTE_OP_ERR:
        return "remote operation error";
    case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:
        return "retry count exceeded";
    case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR:
        return "RNR retry count exceeded";
    case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR:
        return "remote aborted";
    default:
        return nullptr;
    }
}

extern "C" ucs_status_t
uct_ib_emu_query_port_stats(const char *dev_name,
                            uct_ib_emu_port_stats_t *stats)
{
    uct_ib_emu_port_counters_t c;
    std::string device;
    uint8_t num;
    char name[64];

    if (stats->version != UCT_IB_EMU_PORT_STATS_VERSION) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (!parse_dev_name(dev_name, &device, &num) ||
        (uct_ib_emu_port_counters(device, num, &c) != UCS_OK)) {
        return UCS_ERR_NO_DEVICE;
    }

    *stats                   = {};
    stats->version           = UCT_IB_EMU_PORT_STATS_VERSION;
    stats->packets_sent      = c.packets_sent;
    stats->packets_delivered = c.packets_delivered;
    stats->retries           = c.retries;
    stats->rnr_naks          = c.rnr_naks;
    stats->cq_overruns       = c.cq_overruns;

    for (const auto &entry : c.drops) {
        stats->packets_dropped += entry.second;
        stat_add(stats->drops, &stats->num_drops,
                 uct_ib_emu_drop_str(entry.first), entry.second);
    }
    for (const auto &entry : c.err_cqes) {
        const char *what = uct_ib_emu_cqe_syndrome_str(entry.first);

        snprintf(name, sizeof(name), "%s (0x%x)",
                 (what != nullptr) ? what : "syndrome", entry.first);
        stats->err_cqes += entry.second;
        stat_add(stats->err_cqe, &stats->num_err_cqes, name, entry.second);
    }
    return UCS_OK;
}
