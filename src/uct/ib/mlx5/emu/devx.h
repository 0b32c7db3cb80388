/*
 * The emulated firmware's command interface: mailboxes, command results and
 * the command handlers. Internal to the emulator.
 */
#ifndef UCT_IB_MLX5_EMU_DEVX_H_
#define UCT_IB_MLX5_EMU_DEVX_H_

#include "model.h"

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


/* QUERY_HCA_CAP (caps.cc) */
fw_result query_hca_cap_cmd(const context *ctx, const mailbox &in,
                            mailbox &out);

/* QP commands (devx_qp.cc) */
bool is_qp_modify_opcode(uint16_t opcode);
uint32_t qp_cmd_qpn(const mailbox &in);
fw_result qp_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                        qp **qp_p);
fw_result qp_modify_cmd(qp *q, const mailbox &in); /* output: the header */
fw_result qp_query_cmd(const qp *q, const mailbox &in, mailbox &out);
void devx_qp_destroy(qp *q);

/* RMP commands (rmp.cc) */
uint32_t rmp_cmd_rmpn(const mailbox &in);
fw_result rmp_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                         srq **rmp_p);
fw_result rmp_modify_cmd(srq *rmp, const mailbox &in); /* output: the header */
fw_result rmp_query_cmd(const srq *rmp, const mailbox &in, mailbox &out);
fw_result rmp_destroy_cmd(const srq *rmp); /* the check, not the release */
void devx_rmp_destroy(srq *rmp);

/* mlx5dv_devx_qp_modify/query on a verbs QP (the drop-in front-end): 0,
 * EREMOTEIO with the firmware's status in out, EINVAL (not a verbs QP of
 * the model, a command of another kind or QP), EOPNOTSUPP without DevX */
int emu_devx_qp_modify(struct ibv_qp *qp, const void *in, size_t inlen,
                       void *out, size_t outlen);
int emu_devx_qp_query(struct ibv_qp *qp, const void *in, size_t inlen,
                      void *out, size_t outlen);

} // namespace uct_ib_emu

#endif
