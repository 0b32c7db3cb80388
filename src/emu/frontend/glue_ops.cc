/*
 * The emulated device's glue table. Every slot is the emulator's
 * implementation behind a fault-injection gate: an armed fault makes the
 * call fail in the slot's convention without reaching the model.
 */
#include <emu/model/model.h>
#include <emu/frontend/ops.h>

#include <type_traits>


namespace uct_ib_emu {

namespace {

/* What a failed call of convention conv returns for error err */
template <typename R>
R failed_call(uct_ib_glue_conv_t conv, int err)
{
    if constexpr (std::is_pointer<R>::value) {
        errno = err;
        return nullptr;
    } else if constexpr (std::is_same<R, bool>::value) {
        return false;
    } else {
        static_assert(std::is_same<R, int>::value, "unexpected return type");
        if (conv == UCT_IB_GLUE_CONV_ERRNO) {
            return err;
        }
        errno = err; /* M1 and COUNT */
        return -1;
    }
}

template <uct_ib_glue_op_t Op, auto Impl>
struct slot;

template <uct_ib_glue_op_t Op, typename R, typename... Args,
          R (*Impl)(Args...)>
struct slot<Op, Impl> {
    static R call(Args... args)
    {
        int err;

        if constexpr (!std::is_void<R>::value) {
            if (take_op_fault(Op, &err)) {
                return failed_call<R>(glue_op_conv(Op), err);
            }
        }

        return Impl(args...);
    }
};

} // namespace
} // namespace uct_ib_emu


#define UCT_IB_EMU_SLOT(_name, _conv, _ret, _args) \
    ._name = uct_ib_emu::slot<UCT_IB_GLUE_OP_##_name, \
                              uct_ib_emu::emu_##_name>::call,

const uct_ib_glue_ops_t uct_ib_emu_glue_ops = {
    .version  = UCT_IB_GLUE_VERSION,
    .name     = UCT_IB_GLUE_ENV_EMULATED,
    .emulated = 1,
    UCT_IB_GLUE_FOREACH_OP(UCT_IB_EMU_SLOT)
};

#undef UCT_IB_EMU_SLOT
