/*
 * The send opcodes the engine models, as one table: the segments each WQE
 * carries after its control segment, what it does at the responder and what
 * comes back. An opcode not in the table completes with a local QP
 * operation error.
 */
#include <emu/engine/engine.h>


namespace uct_ib_emu {

namespace {

constexpr opcode_info opcodes[] = {
    {MLX5_OPCODE_NOP,            "NOP",            OP_LOCAL},
    {MLX5_OPCODE_SEND,           "SEND",           OP_SEND},
    {MLX5_OPCODE_SEND_IMM,       "SEND_IMM",       OP_SEND | OP_IMM},
    {MLX5_OPCODE_SEND_INVAL,     "SEND_INVAL",     OP_SEND | OP_INVAL},
    {MLX5_OPCODE_UMR,            "UMR",            OP_LOCAL | OP_UMR},
    {MLX5_OPCODE_TAG_MATCHING,   "TAG_MATCHING",   OP_LOCAL | OP_TM},
    {MLX5_OPCODE_RDMA_WRITE,     "RDMA_WRITE",     OP_RADDR | OP_WRITE},
    {MLX5_OPCODE_RDMA_WRITE_IMM, "RDMA_WRITE_IMM", OP_RADDR | OP_WRITE |
                                                   OP_IMM | OP_SEND},
    {MLX5_OPCODE_RDMA_READ,      "RDMA_READ",      OP_RADDR | OP_READ |
                                                   OP_RESPONSE},
    {MLX5_OPCODE_ATOMIC_CS,      "ATOMIC_CS",      OP_RADDR | OP_ATOMIC |
                                                   OP_ATOMIC_OP | OP_RESPONSE},
    {MLX5_OPCODE_ATOMIC_FA,      "ATOMIC_FA",      OP_RADDR | OP_ATOMIC |
                                                   OP_ATOMIC_OP | OP_RESPONSE},
    {MLX5_OPCODE_ATOMIC_MASKED_CS, "ATOMIC_MASKED_CS", OP_RADDR | OP_ATOMIC |
                                                   OP_ATOMIC_OP | OP_RESPONSE |
                                                   OP_MASKED},
    {MLX5_OPCODE_ATOMIC_MASKED_FA, "ATOMIC_MASKED_FA", OP_RADDR | OP_ATOMIC |
                                                   OP_ATOMIC_OP | OP_RESPONSE |
                                                   OP_MASKED}
};

} // namespace

const opcode_info *find_opcode(uint8_t opcode)
{
    for (const opcode_info &info : opcodes) {
        if (info.opcode == opcode) {
            return &info;
        }
    }

    return nullptr;
}

} // namespace uct_ib_emu
