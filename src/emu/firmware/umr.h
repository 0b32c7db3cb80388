/*
 * UMR (umr.cc): what the device does with a delivered work request of the
 * UMR QP. Includes only model/.
 */
#ifndef UCT_IB_EMU_FIRMWARE_UMR_H_
#define UCT_IB_EMU_FIRMWARE_UMR_H_

#include <emu/model/model.h>


namespace uct_ib_emu {

/* Bind or invalidate the mkey wr names, for q: IBV_WC_SUCCESS, or the
 * status it completes with (IBV_WC_LOC_PROT_ERR: no such mkey of q's PD or
 * an MR list entry outside its MR; IBV_WC_MW_BIND_ERR: already bound) */
enum ibv_wc_status umr_execute(qp *q, const send_wr &wr);

} // namespace uct_ib_emu

#endif
