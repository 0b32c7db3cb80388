/*
 * The emulated firmware's command interface (firmware/): mailboxes, command
 * results, the execution of a command and its one handler per opcode.
 * firmware/ includes model/, fabric/ and engine/ (a QP's transitions reach
 * them), never frontend/.
 */
#ifndef UCT_IB_EMU_FIRMWARE_DEVX_H_
#define UCT_IB_EMU_FIRMWARE_DEVX_H_

#include <emu/model/model.h>

#include <algorithm>


namespace uct_ib_emu {

/* Opcodes the kernel issues on behalf of umem_reg/umem_dereg; not in prm.h's
 * command enum (opcodes.csv: MLX5_CMD_OP_CREATE_UMEM, MLX5_CMD_OP_DESTROY_UMEM) */
constexpr uint16_t CMD_OP_CREATE_UMEM  = 0xa08;
constexpr uint16_t CMD_OP_DESTROY_UMEM = 0xa0a;

/* A command mailbox held as big-endian dwords. The input is a copy of the
 * caller's buffer; the output is copied back to the caller at the end. Both
 * are zero-padded to at least the common header. */
class mailbox {
public:
    /* An input mailbox: a copy of len bytes at data */
    mailbox(const void *data, size_t len) :
        m_dw(dwords(len)), m_len(len)
    {
        memcpy(m_dw.data(), data, len);
    }

    /* An output mailbox of len bytes, zeroed */
    explicit mailbox(size_t len) : m_dw(dwords(len)), m_len(len)
    {
    }

    uint32_t *dw()
    {
        return m_dw.data();
    }

    const uint32_t *dw() const
    {
        return m_dw.data();
    }

    /* Whether the caller's buffer holds all of structure L */
    template <typename L>
    bool fits() const
    {
        return m_len >= L::size_bits / 8;
    }

    uint16_t opcode() const
    {
        return static_cast<uint16_t>(
                uct_mlx5_prm_get<uct_mlx5_prm::mbox_in::opcode>(dw()));
    }

    uint16_t op_mod() const
    {
        return static_cast<uint16_t>(
                uct_mlx5_prm_get<uct_mlx5_prm::mbox_in::op_mod>(dw()));
    }

    size_t size() const
    {
        return m_len;
    }

    void clear()
    {
        std::fill(m_dw.begin(), m_dw.end(), 0);
    }

    void copy_to(void *out, size_t len) const
    {
        memcpy(out, m_dw.data(), std::min(len, m_len));
    }

private:
    static size_t dwords(size_t len)
    {
        return std::max<size_t>((len + 3) / 4,
                                uct_mlx5_prm::mbox_in::layout::size_bits / 32);
    }

    std::vector<uint32_t> m_dw;
    size_t                m_len;
};

/* The size of the common command header, in bytes */
constexpr size_t MBOX_HDR_SIZE = uct_mlx5_prm::mbox_in::layout::size_bits / 8;
static_assert(MBOX_HDR_SIZE ==
              uct_mlx5_prm::mbox_out::layout::size_bits / 8,
              "input and output headers have the same size");

/* The device writing its own output: every value it writes fits, so a
 * value that does not is a bug of the model */
template <typename F>
void put(uint32_t *buf, uint64_t value)
{
    const bool fits = uct_mlx5_prm_set<F>(buf, value);

    ucs_assert_always(fits);
}

/* Start of an embedded structure F inside a command buffer */
template <typename F>
const uint32_t *sub(const uint32_t *buf)
{
    static_assert(F::offset % 32 == 0, "embedded structure not dword aligned");
    return buf + F::offset / 32;
}

template <typename F>
uint32_t *sub(uint32_t *buf)
{
    static_assert(F::offset % 32 == 0, "embedded structure not dword aligned");
    return buf + F::offset / 32;
}

/* An object the firmware knows by number, if it belongs to ctx */
template <typename T>
T *lookup(const std::map<uint32_t, T*> &table, uint32_t id,
          const context *ctx)
{
    auto it = table.find(id);

    return ((it != table.end()) && (it->second->ctx == ctx)) ? it->second :
                                                                nullptr;
}

/* What the firmware answers: status 0 or a failure with its syndrome */
struct fw_result {
    uint8_t  status;
    uint32_t syndrome;
};

constexpr fw_result FW_OK = {UCT_IB_EMU_FW_OK, 0};

constexpr fw_result fw_fail(uct_ib_emu_syndrome_t syndrome)
{
    return {uct_ib_emu_syndrome_status(syndrome), syndrome};
}

/* What the firmware checks first of a command: its input holds structure
 * In, the output buffer Out, and op_mod is 0 */
template <typename In, typename Out>
fw_result check_mailboxes(const mailbox &in, const mailbox &out)
{
    if (!in.fits<In>()) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_INPUT_LEN);
    }
    if (!out.fits<Out>()) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_OUTPUT_LEN);
    }
    if (in.op_mod() != 0) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_BAD_OP_MOD);
    }
    return FW_OK;
}


/* A query command's opening: its mailboxes checked (layouts In and Out),
 * and the context structure Ctx of its output to fill in */
template <typename In, typename Out, typename Ctx>
fw_result query_output(const mailbox &in, mailbox &out, uint32_t **ctx_p)
{
    fw_result result = check_mailboxes<In, Out>(in, out);

    if (result.status == UCT_IB_EMU_FW_OK) {
        *ctx_p = sub<Ctx>(out.dw());
    }
    return result;
}

/* The firmware executes a command (commands.cc), counted and exposed to
 * fault injection, by the DevX method it came through: a general command,
 * an object's creation (*qp_p, *rmp_p or *mkey_p is the new object), a
 * modify or a query of a QP or an RMP (rmp NULL: q's), an object's destroy,
 * and the umem registrations the kernel makes */
fw_result fw_general_cmd(emu_state &s, context *ctx, const mailbox &in,
                         mailbox &out);
fw_result fw_create_cmd(emu_state &s, context *ctx, const mailbox &in,
                        mailbox &out, qp **qp_p, srq **rmp_p, mkey **mkey_p);
fw_result fw_object_cmd(emu_state &s, const context *ctx, qp *q, srq *rmp,
                        bool modify, const mailbox &in, mailbox &out);
fw_result fw_destroy_cmd(emu_state &s, const devx_obj *obj);
fw_result fw_umem_create_cmd(emu_state &s, const context *ctx);
fw_result fw_umem_destroy_cmd(emu_state &s, const umem *u);

/* QUERY_HCA_CAP (caps.cc) */
fw_result query_hca_cap_cmd(const context *ctx, const mailbox &in,
                            mailbox &out);

/* QUERY_HCA_VPORT_CONTEXT (vport.cc) */
fw_result query_hca_vport_context_cmd(const context *ctx, const mailbox &in,
                                      mailbox &out);

/* QP commands (devx_qp.cc) */
bool is_qp_modify_opcode(uint16_t opcode);
uint32_t qp_cmd_qpn(const mailbox &in);
fw_result qp_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                        qp **qp_p);
fw_result qp_modify_cmd(qp *q, const mailbox &in); /* output: the header */
fw_result qp_query_cmd(const qp *q, const mailbox &in, mailbox &out);

/* CREATE_MKEY in KSM mode (mkey.cc) */
fw_result mkey_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                          mkey **mkey_p);

/* A DevX shared receive queue's work queue context (wq), checked with the
 * syndromes of its command, becomes an srq not yet installed (rmp.cc);
 * installing it takes its references and number */
struct wq_syndromes {
    uct_ib_emu_syndrome_t wq_type, pd, log_wq_sz, log_wq_stride, lwm,
                          wq_umem, wq_umem_size, dbr_umem, dbr_addr, limit;
    /* striding (multi-packet) queues allowed, with this syndrome for
     * their stride geometry; 0: only linked-list and cyclic ones */
    uct_ib_emu_syndrome_t strides;
};
fw_result wq_srq_create(context *ctx, const uint32_t *wqc,
                        const wq_syndromes &syn, std::unique_ptr<srq> *q_p);
void wq_srq_install(srq *q);

/* RMP commands (rmp.cc) */
uint32_t rmp_cmd_rmpn(const mailbox &in);
fw_result rmp_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                         srq **rmp_p);
fw_result rmp_modify_cmd(srq *rmp, const mailbox &in); /* output: the header */
fw_result rmp_query_cmd(const srq *rmp, const mailbox &in, mailbox &out);
fw_result rmp_destroy_cmd(const srq *rmp); /* the check, not the release */

/* XRQ commands (xrq.cc): an XRQ is an srq too (srq::xrq), owned by its
 * DevX object as an RMP is */
fw_result xrq_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                         srq **xrq_p);
fw_result xrq_destroy_cmd(const srq *xrq); /* the check, not the release */

/* DCT commands (dct.cc): a DCT is a qp (qp::is_dct), owned by its DevX
 * object */
fw_result dct_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                         qp **dct_p);
uint32_t dct_cmd_dctn(const mailbox &in);
fw_result dct_drain_cmd(qp *dct, const mailbox &in, mailbox &out);
fw_result dct_query_cmd(const qp *dct, const mailbox &in, mailbox &out);

} // namespace uct_ib_emu

#endif
