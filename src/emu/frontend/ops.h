/*
 * The emulator's implementation of each glue slot: emu_<slot> has the
 * slot's signature and convention. glue_ops.cc puts them in the table.
 */
#ifndef UCT_IB_EMU_FRONTEND_OPS_H_
#define UCT_IB_EMU_FRONTEND_OPS_H_

#include <uct/api/tools/ib_glue.h>

namespace uct_ib_emu {

#define UCT_IB_EMU_DECLARE_OP(_name, _conv, _ret, _args) \
    _ret emu_##_name _args;

UCT_IB_GLUE_FOREACH_OP(UCT_IB_EMU_DECLARE_OP)

#undef UCT_IB_EMU_DECLARE_OP

} // namespace uct_ib_emu

#endif
