/*
 * The extended polling interface of a CQ (ibv_start_poll, ibv_next_poll,
 * ibv_end_poll and the ibv_wc_read_* functions), as the mlx5 provider gives
 * it: start_poll and next_poll take the next completion (ENOENT when there
 * is none; start_poll's ENOENT needs no end_poll) and set the CQ's status
 * and wr_id; the read functions give the fields of that completion, the
 * timestamp the device wrote into its CQE among them.
 */
#include <emu/frontend/frontend.h>

#include <endian.h>

namespace uct_ib_emu {

namespace {

cq *of(struct ibv_cq_ex *cq_ex)
{
    return find<cq>(state(), ibv_cq_ex_to_cq(cq_ex));
}

/* Take the next completion into the CQ's polled_wc; ENOENT if none */
int take_next(struct ibv_cq_ex *cq_ex)
{
    emu_state &s = state();
    int count;

    {
        guard g(s.lock);
        cq *c = of(cq_ex);

        if (c == nullptr) {
            return EINVAL;
        }
        count = poll_ring_cqes(s, c, 1, &c->polled_wc, &c->polled_ts);
        if (count == 0) {
            count        = poll_verbs_cqes(s, c, 1, &c->polled_wc);
            c->polled_ts = 0;
        }
        if (count == 1) {
            cq_ex->status = c->polled_wc.status;
            cq_ex->wr_id  = c->polled_wc.wr_id;
            return 0;
        }
    }

    sched_yield(); /* as ibv_poll_cq on an empty CQ: let the engine run */
    return ENOENT;
}

int start_poll(struct ibv_cq_ex *cq_ex, struct ibv_poll_cq_attr *attr)
{
    if ((attr == nullptr) || (attr->comp_mask != 0)) {
        return EINVAL;
    }
    return take_next(cq_ex);
}

int next_poll(struct ibv_cq_ex *cq_ex)
{
    return take_next(cq_ex);
}

void end_poll(struct ibv_cq_ex *)
{
    /* each completion was consumed when it was taken */
}

/* The polled completion (the caller polled it: the CQ and its fields stay
 * until the next poll, so no lock is needed to read them) */
const struct ibv_wc &polled(struct ibv_cq_ex *cq_ex)
{
    static const struct ibv_wc none = {};
    emu_state &s = state();
    guard g(s.lock);
    cq *c = of(cq_ex);

    return (c != nullptr) ? c->polled_wc : none;
}

enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).opcode;
}

uint32_t read_vendor_err(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).vendor_err;
}

uint32_t read_byte_len(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).byte_len;
}

__be32 read_imm_data(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).imm_data;
}

uint32_t read_qp_num(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).qp_num;
}

uint32_t read_src_qp(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).src_qp;
}

unsigned int read_wc_flags(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).wc_flags;
}

uint32_t read_slid(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).slid;
}

uint8_t read_sl(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).sl;
}

uint8_t read_dlid_path_bits(struct ibv_cq_ex *cq_ex)
{
    return polled(cq_ex).dlid_path_bits;
}

uint64_t read_completion_ts(struct ibv_cq_ex *cq_ex)
{
    emu_state &s = state();
    guard g(s.lock);
    cq *c = of(cq_ex);

    return (c != nullptr) ? c->polled_ts : 0;
}

} // namespace

void cq_ex_init_ops(struct ibv_cq_ex *cq_ex)
{
    cq_ex->start_poll          = start_poll;
    cq_ex->next_poll           = next_poll;
    cq_ex->end_poll            = end_poll;
    cq_ex->read_opcode         = read_opcode;
    cq_ex->read_vendor_err     = read_vendor_err;
    cq_ex->read_byte_len       = read_byte_len;
    cq_ex->read_imm_data       = read_imm_data;
    cq_ex->read_qp_num         = read_qp_num;
    cq_ex->read_src_qp         = read_src_qp;
    cq_ex->read_wc_flags       = read_wc_flags;
    cq_ex->read_slid           = read_slid;
    cq_ex->read_sl             = read_sl;
    cq_ex->read_dlid_path_bits = read_dlid_path_bits;
    cq_ex->read_completion_ts  = read_completion_ts;
}

} // namespace uct_ib_emu
