/*
 * What the parts of the preload library share: the model's drop-in table,
 * loaded on first use (preload.cc).
 */
#ifndef UCT_IB_EMU_FRONTEND_PRELOAD_PRELOAD_H_
#define UCT_IB_EMU_FRONTEND_PRELOAD_PRELOAD_H_

#include <emu/api/dropin.h>
#include <uct/api/tools/ib_glue.h>

#define PRELOAD_EXPORT extern "C" __attribute__((visibility("default")))

/* The model's glue table, loading the model on the first call; NULL (errno
 * ENOSYS) when it cannot be loaded */
const uct_ib_glue_ops_t *preload_glue_ops();

/* The model's drop-in table, loading the model on the first call; NULL
 * (errno ENOSYS) when it cannot be loaded, and while this thread is loading
 * it (the dynamic loader's own file calls during the load) */
const uct_ib_emu_dropin_ops_t *preload_dropin_ops();

/* A registration of [addr, addr + length) addressed as iova, for
 * ibv_reg_mr_iova and ibv_reg_mr_iova2: the model's keys address by virtual
 * address only, so another iova is EOPNOTSUPP; the optional access flags
 * are hints a device may ignore (ibv_reg_mr(3)) */
struct ibv_mr *preload_reg_mr_iova(struct ibv_pd *pd, void *addr,
                                   size_t length, uint64_t iova, int access);

/* The model's connection manager (emu/api/cm.h), loading the model on the
 * first call; NULL if it cannot be loaded */
struct uct_ib_emu_cm_ops;
const struct uct_ib_emu_cm_ops *preload_cm_ops();

/* The model's uct_ib_emu_dropin_sigaction once the model is loaded; NULL
 * before (this never loads it) */
uct_ib_emu_dropin_sigaction_func_t preload_model_sigaction();

#endif
