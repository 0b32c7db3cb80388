/*
 * Firmware command statuses and the emulated device's syndromes.
 *
 * A failed command returns EREMOTEIO with `status` and `syndrome` in its
 * output mailbox. The status values are mlx5's; each check the emulated
 * firmware applies has its own syndrome so a test can tell which one fired.
 * Syndromes are grouped by command: 0x0f00xx the command interface, then the
 * command's opcode in the upper bits (0x5030xx INIT2RTR_QP, ...).
 *
 * This table is the one place where the emulator's checks are documented.
 */
#ifndef UCT_IB_EMU_API_SYNDROME_H_
#define UCT_IB_EMU_API_SYNDROME_H_

#include <cerrno>
#include <cstdint>


/* Command statuses (the top byte of the first output dword) */
enum uct_ib_emu_fw_status_t : uint8_t {
    UCT_IB_EMU_FW_OK             = 0x00,
    UCT_IB_EMU_FW_INTERNAL_ERR   = 0x01,
    UCT_IB_EMU_FW_BAD_OP         = 0x02,
    UCT_IB_EMU_FW_BAD_PARAM      = 0x03,
    UCT_IB_EMU_FW_BAD_SYS_STATE  = 0x04,
    UCT_IB_EMU_FW_BAD_RESOURCE   = 0x05,
    UCT_IB_EMU_FW_RESOURCE_BUSY  = 0x06,
    UCT_IB_EMU_FW_EXCEED_LIM     = 0x08,
    UCT_IB_EMU_FW_BAD_RES_STATE  = 0x09,
    UCT_IB_EMU_FW_BAD_INDEX      = 0x0a,
    UCT_IB_EMU_FW_NO_RESOURCES   = 0x0f,
    UCT_IB_EMU_FW_BAD_QP_STATE   = 0x10,
    UCT_IB_EMU_FW_BAD_PKT        = 0x30,
    UCT_IB_EMU_FW_BAD_SIZE       = 0x40,
    UCT_IB_EMU_FW_BAD_INPUT_LEN  = 0x50,
    UCT_IB_EMU_FW_BAD_OUTPUT_LEN = 0x51
};


/*
 * _(name, status, syndrome, what the device rejected)
 */
#define UCT_IB_EMU_FOREACH_SYNDROME(_) \
    /* command interface */ \
    _(CMD_BAD_OPCODE,           BAD_OP,         0x0f0001, \
      "opcode not supported by the device") \
    _(CMD_BAD_OP_MOD,           BAD_PARAM,      0x0f0002, \
      "op_mod not valid for the command") \
    _(CMD_INPUT_LEN,            BAD_INPUT_LEN,  0x0f0003, \
      "input mailbox shorter than the command") \
    _(CMD_OUTPUT_LEN,           BAD_OUTPUT_LEN, 0x0f0004, \
      "output mailbox shorter than the command output") \
    /* QUERY_HCA_CAP */ \
    _(HCA_CAP_OTHER_FUNCTION,   BAD_PARAM,      0x100001, \
      "other_function set: querying another function is not permitted") \
    _(HCA_CAP_BAD_TYPE,         BAD_PARAM,      0x100002, \
      "capability type not supported") \
    _(HCA_CAP_NO_ROCE,          BAD_PARAM,      0x100003, \
      "RoCE capabilities queried on a device without Ethernet ports") \
    /* QUERY_HCA_VPORT_CONTEXT */ \
    _(VPORT_OTHER_VPORT,        BAD_PARAM,      0x762001, \
      "other_vport set: only the function's own vport can be queried") \
    _(VPORT_BAD_PORT,           BAD_PARAM,      0x762002, \
      "port_num is not a port of the device") \
    _(VPORT_NOT_IB,             BAD_PARAM,      0x762003, \
      "HCA vport context queried on an Ethernet port") \
    /* CREATE_QP */ \
    _(CREATE_QP_BAD_ST,         BAD_PARAM,      0x500001, \
      "qpc.st is not RC or DCI") \
    _(CREATE_QP_BAD_PD,         BAD_RESOURCE,   0x500002, \
      "qpc.pd is not a protection domain of this context") \
    _(CREATE_QP_BAD_CQN_SND,    BAD_RESOURCE,   0x500003, \
      "qpc.cqn_snd is not a completion queue of this context") \
    _(CREATE_QP_BAD_CQN_RCV,    BAD_RESOURCE,   0x500004, \
      "qpc.cqn_rcv is not a completion queue of this context") \
    _(CREATE_QP_LOG_RQ_STRIDE,  BAD_PARAM,      0x500007, \
      "receive WQE stride above cmd_hca_cap.max_wqe_sz_rq") \
    _(CREATE_QP_BAD_RQ_TYPE,    BAD_PARAM,      0x500008, \
      "qpc.rq_type is not regular, SRQ or zero-size") \
    _(CREATE_QP_BAD_SRQN,       BAD_RESOURCE,   0x500009, \
      "qpc.srqn_rmpn_xrqn is not a shared receive queue of this context") \
    _(CREATE_QP_BAD_UAR_PAGE,   BAD_RESOURCE,   0x50000a, \
      "qpc.uar_page is not a UAR page of this context") \
    _(CREATE_QP_BAD_WQ_UMEM,    BAD_RESOURCE,   0x50000c, \
      "wq_umem_id is not a umem of this context") \
    _(CREATE_QP_WQ_UMEM_SIZE,   BAD_PARAM,      0x50000d, \
      "receive and send queues do not fit in the WQ umem") \
    _(CREATE_QP_BAD_DBR_UMEM,   BAD_RESOURCE,   0x50000f, \
      "qpc.dbr_umem_id is not a umem of this context") \
    _(CREATE_QP_DBR_ADDR,       BAD_PARAM,      0x500010, \
      "qpc.dbr_addr misaligned or the doorbell record exceeds its umem") \
    _(CREATE_QP_LIMIT,          EXCEED_LIM,     0x500011, \
      "no more QPs: cmd_hca_cap.log_max_qp reached") \
    _(CREATE_QP_LOG_QUEUE_SIZE, BAD_PARAM,      0x500012, \
      "qpc.log_sq_size or log_rq_size above cmd_hca_cap.log_max_qp_sz") \
    _(CREATE_QP_BAD_CS_REQ,     BAD_PARAM,      0x500013, \
      "qpc.cs_req not 0 (off), 0x11 (up to 32 bytes) or 0x22 (up to 64)") \
    _(CREATE_QP_BAD_CS_RES,     BAD_PARAM,      0x500014, \
      "qpc.cs_res not 0 (off), 1 (up to 32 bytes) or 2 (up to 64)") \
    /* QP state transitions: the QP is not in the state the command needs */ \
    _(RST2INIT_BAD_STATE,       BAD_RES_STATE,  0x502001, \
      "RST2INIT_QP on a QP that is not in RST") \
    _(INIT2RTR_BAD_STATE,       BAD_RES_STATE,  0x503001, \
      "INIT2RTR_QP on a QP that is not in INIT") \
    _(RTR2RTS_BAD_STATE,        BAD_RES_STATE,  0x504001, \
      "RTR2RTS_QP on a QP that is not in RTR") \
    _(RTS2RTS_BAD_STATE,        BAD_RES_STATE,  0x505001, \
      "RTS2RTS_QP on a QP that is not in RTS") \
    _(SQERR2RTS_BAD_STATE,      BAD_RES_STATE,  0x506001, \
      "SQERR2RTS_QP on a QP that is not in SQER") \
    _(SQD2RTS_BAD_STATE,        BAD_RES_STATE,  0x50c001, \
      "SQD_RTS_QP on a QP that is not in SQD") \
    _(INIT2INIT_BAD_STATE,      BAD_RES_STATE,  0x50e001, \
      "INIT2INIT_QP on a QP that is not in INIT") \
    /* QP state transitions: fields */ \
    _(MODIFY_QP_OPT_PARAM,      BAD_PARAM,      0x50f001, \
      "opt_param_mask has a bit this transition does not accept") \
    _(MODIFY_QP_ATOMIC_MODE,    BAD_PARAM,      0x50f002, \
      "qpc.atomic_mode above the atomic sizes the device executes (8 bytes)") \
    _(RST2INIT_BAD_PORT,        BAD_PARAM,      0x502002, \
      "primary_address_path.vhca_port_num outside 1..num_ports") \
    _(RST2INIT_BAD_PKEY_INDEX,  BAD_PARAM,      0x502003, \
      "primary_address_path.pkey_index outside the port's P_Key table") \
    _(INIT2RTR_BAD_MTU,         BAD_PARAM,      0x503002, \
      "qpc.mtu is not 256..4096") \
    _(INIT2RTR_MTU_ABOVE_PORT,  BAD_PARAM,      0x503003, \
      "qpc.mtu above the port's max MTU") \
    _(INIT2RTR_LOG_MSG_MAX,     BAD_PARAM,      0x503004, \
      "qpc.log_msg_max above cmd_hca_cap.log_max_msg") \
    _(INIT2RTR_LOG_RRA_MAX,     BAD_PARAM,      0x503005, \
      "qpc.log_rra_max above cmd_hca_cap.log_max_ra_res_qp") \
    _(INIT2RTR_BAD_PORT,        BAD_PARAM,      0x503006, \
      "primary_address_path.vhca_port_num is 0 or outside 1..num_ports") \
    _(INIT2RTR_PORT_MISMATCH,   BAD_PARAM,      0x503007, \
      "primary_address_path.vhca_port_num differs from the QP's port") \
    _(INIT2RTR_FL_UNSUPPORTED,  BAD_PARAM,      0x503008, \
      "fl (force loopback) set but the device does not allow it for RC " \
      "QPs in the port's RoCE state") \
    _(INIT2RTR_ROCE_DISABLED,   BAD_PARAM,      0x503009, \
      "RoCE path on an Ethernet port whose RoCE is disabled") \
    _(INIT2RTR_NO_RMAC,         BAD_PARAM,      0x50300a, \
      "Ethernet path without a remote MAC") \
    _(INIT2RTR_MCAST_RMAC,      BAD_PARAM,      0x50300b, \
      "Ethernet path with a multicast remote MAC on an RC QP") \
    _(INIT2RTR_NO_RGID,         BAD_PARAM,      0x50300c, \
      "global path without a remote GID") \
    _(INIT2RTR_BAD_SGID_INDEX,  BAD_PARAM,      0x50300d, \
      "src_addr_index is not a populated GID entry of the port") \
    _(INIT2RTR_BAD_RLID,        BAD_PARAM,      0x50300e, \
      "InfiniBand path with rlid 0 or a multicast LID") \
    _(INIT2RTR_NO_LAG,          BAD_PARAM,      0x50300f, \
      "lag_tx_port_affinity given on a device that is not in LAG mode") \
    _(INIT2RTR_LAG_PORT,        BAD_PARAM,      0x503010, \
      "lag_tx_port_affinity outside 1..cmd_hca_cap.num_lag_ports") \
    _(RTR2RTS_LOG_SRA_MAX,      BAD_PARAM,      0x504002, \
      "qpc.log_sra_max above cmd_hca_cap.log_max_ra_req_qp") \
    /* CREATE_MKEY */ \
    _(CREATE_MKEY_ACCESS_MODE,  BAD_PARAM,      0x200001, \
      "mkc.access_mode is not KSM, the one mode the device models for " \
      "DevX mkeys") \
    _(CREATE_MKEY_NOT_MODELLED, BAD_PARAM,      0x200002, \
      "mkc.free, length64 or bsf_en set: not modelled") \
    _(CREATE_MKEY_QPN,          BAD_PARAM,      0x200003, \
      "mkc.qpn is not 0xffffff: mkeys bound to a QP are not modelled") \
    _(CREATE_MKEY_BAD_PD,       BAD_RESOURCE,   0x200004, \
      "mkc.pd is not a protection domain of this context") \
    _(CREATE_MKEY_TRANSLATIONS, BAD_PARAM,      0x200005, \
      "translations_octword_actual_size is 0, above " \
      "mkc.translations_octword_size or above 2^log_max_klm_list_size") \
    _(CREATE_MKEY_RANGE,        BAD_PARAM,      0x200006, \
      "mkc.len beyond the entries x 2^log_entity_size, or start_addr + " \
      "len wraps") \
    _(CREATE_MKEY_LIMIT,        EXCEED_LIM,     0x200007, \
      "no more mkeys: cmd_hca_cap.log_max_mkey reached") \
    /* CREATE_RMP */ \
    _(CREATE_RMP_BAD_STATE,     BAD_PARAM,      0x90c001, \
      "rmpc.state is not RDY") \
    _(CREATE_RMP_BAD_WQ_TYPE,   BAD_PARAM,      0x90c002, \
      "wq.wq_type is not linked list or cyclic (the device has no " \
      "striding receive queues)") \
    _(CREATE_RMP_BASIC_CYCLIC,  BAD_PARAM,      0x90c003, \
      "rmpc.basic_cyclic_rcv_wqe set: the device's receive WQEs always " \
      "begin with a next segment") \
    _(CREATE_RMP_BAD_PD,        BAD_RESOURCE,   0x90c004, \
      "wq.pd is not a protection domain of this context") \
    _(CREATE_RMP_LOG_WQ_SZ,     BAD_PARAM,      0x90c005, \
      "wq.log_wq_sz above cmd_hca_cap.log_max_srq_sz") \
    _(CREATE_RMP_LOG_WQ_STRIDE, BAD_PARAM,      0x90c006, \
      "receive WQE stride below 32 bytes (a next segment and one scatter " \
      "entry) or above cmd_hca_cap.max_wqe_sz_rq") \
    _(CREATE_RMP_LWM,           BAD_PARAM,      0x90c007, \
      "wq.lwm not below the number of WQEs") \
    _(CREATE_RMP_BAD_WQ_UMEM,   BAD_RESOURCE,   0x90c008, \
      "wq.wq_umem_id is not a umem of this context") \
    _(CREATE_RMP_WQ_UMEM_SIZE,  BAD_PARAM,      0x90c009, \
      "the receive WQE ring does not fit in the WQ umem") \
    _(CREATE_RMP_BAD_DBR_UMEM,  BAD_RESOURCE,   0x90c00a, \
      "wq.dbr_umem_id is not a umem of this context") \
    _(CREATE_RMP_DBR_ADDR,      BAD_PARAM,      0x90c00b, \
      "wq.dbr_addr misaligned or the doorbell record exceeds its umem") \
    _(CREATE_RMP_LIMIT,         EXCEED_LIM,     0x90c00c, \
      "no more RMPs: cmd_hca_cap.log_max_rmp reached") \
    /* MODIFY_RMP */ \
    _(MODIFY_RMP_BAD_STATE,     BAD_RES_STATE,  0x90d001, \
      "rmp_state differs from the RMP's current state") \
    _(MODIFY_RMP_NEXT_STATE,    BAD_PARAM,      0x90d002, \
      "rmpc.state is not RDY: the device moves an RMP only to RDY") \
    _(MODIFY_RMP_BITMASK,       BAD_PARAM,      0x90d003, \
      "bitmask selects a field other than lwm") \
    _(MODIFY_RMP_LWM,           BAD_PARAM,      0x90d004, \
      "wq.lwm not below the number of WQEs") \
    /* DESTROY_RMP (issued by the kernel for obj_destroy) */ \
    _(DESTROY_RMP_IN_USE,       RESOURCE_BUSY,  0x90e001, \
      "RMP still the receive queue of a QP") \
    /* CREATE_XRQ */ \
    _(CREATE_XRQ_TOPOLOGY,      BAD_PARAM,      0x717001, \
      "xrqc.topology is neither none nor tag matching") \
    _(CREATE_XRQ_OFFLOAD,       BAD_PARAM,      0x717002, \
      "xrqc.offload is not 0 or rendezvous, or asks for rendezvous " \
      "without the tag-matching topology") \
    _(CREATE_XRQ_DC,            BAD_PARAM,      0x717003, \
      "xrqc.dc set: cmd_hca_cap.rndv_offload_dc is 0 (the device has no " \
      "DC transport)") \
    _(CREATE_XRQ_LIST_SZ,       BAD_PARAM,      0x717004, \
      "tag matching with log_matching_list_sz 0 or above " \
      "cmd_hca_cap.log_tag_matching_list_sz") \
    _(CREATE_XRQ_BAD_CQ,        BAD_RESOURCE,   0x717005, \
      "xrqc.cqn is not a CQ of this context") \
    _(CREATE_XRQ_BAD_WQ_TYPE,   BAD_PARAM,      0x717006, \
      "wq.wq_type is not linked list or cyclic, striding or not") \
    _(CREATE_XRQ_BAD_PD,        BAD_RESOURCE,   0x717007, \
      "wq.pd is not a protection domain of this context") \
    _(CREATE_XRQ_LOG_WQ_SZ,     BAD_PARAM,      0x717008, \
      "wq.log_wq_sz above cmd_hca_cap.log_max_srq_sz") \
    _(CREATE_XRQ_LOG_WQ_STRIDE, BAD_PARAM,      0x717009, \
      "receive WQE stride below 32 bytes (a next segment and one scatter " \
      "entry) or above cmd_hca_cap.max_wqe_sz_rq") \
    _(CREATE_XRQ_LWM,           BAD_PARAM,      0x71700a, \
      "wq.lwm not below the number of WQEs") \
    _(CREATE_XRQ_BAD_WQ_UMEM,   BAD_RESOURCE,   0x71700b, \
      "wq.wq_umem_id is not a umem of this context") \
    _(CREATE_XRQ_WQ_UMEM_SIZE,  BAD_PARAM,      0x71700c, \
      "the receive WQE ring does not fit in the WQ umem") \
    _(CREATE_XRQ_BAD_DBR_UMEM,  BAD_RESOURCE,   0x71700d, \
      "wq.dbr_umem_id is not a umem of this context") \
    _(CREATE_XRQ_DBR_ADDR,      BAD_PARAM,      0x71700e, \
      "wq.dbr_addr misaligned or the doorbell record exceeds its umem") \
    _(CREATE_XRQ_LIMIT,         EXCEED_LIM,     0x71700f, \
      "no more XRQs: cmd_hca_cap.log_max_xrq reached") \
    _(CREATE_XRQ_STRIDES,       BAD_PARAM,      0x717010, \
      "striding: 2^(9 + log_wqe_num_of_strides) outside 8..65536 strides, " \
      "or a receive WQE stride that cannot hold a data segment per stride") \
    /* DESTROY_XRQ (issued by the kernel for obj_destroy) */ \
    _(DESTROY_XRQ_IN_USE,       RESOURCE_BUSY,  0x718001, \
      "XRQ still the receive queue of a QP") \
    /* CREATE_DCT */ \
    _(CREATE_DCT_BAD_PD,        BAD_RESOURCE,   0x710001, \
      "dctc.pd is not a protection domain of this context") \
    _(CREATE_DCT_BAD_CQ,        BAD_RESOURCE,   0x710002, \
      "dctc.cqn is not a CQ of this context") \
    _(CREATE_DCT_BAD_SRQ,       BAD_RESOURCE,   0x710003, \
      "dctc.srqn_xrqn is not an SRQ, RMP or XRQ of this context") \
    _(CREATE_DCT_OFFLOAD,       BAD_PARAM,      0x710004, \
      "dctc.offload_type set: cmd_hca_cap.rndv_offload_dc is 0") \
    _(CREATE_DCT_BAD_PORT,      BAD_PARAM,      0x710005, \
      "dctc.port is not a port of the device") \
    _(CREATE_DCT_BAD_MTU,       BAD_PARAM,      0x710006, \
      "dctc.mtu is not 256..4096 or above the port's") \
    _(CREATE_DCT_BAD_ADDR_INDEX, BAD_PARAM,     0x710007, \
      "dctc.my_addr_index is not a GID of the port") \
    _(CREATE_DCT_PKEY_INDEX,    BAD_PARAM,      0x710008, \
      "dctc.pkey_index outside the port's P_Key table") \
    _(CREATE_DCT_ATOMIC_MODE,   BAD_PARAM,      0x710009, \
      "dctc.atomic_mode above what the device executes") \
    _(CREATE_DCT_BAD_CS_RES,    BAD_PARAM,      0x71000a, \
      "dctc.cs_res is not disabled, 32 or 64 bytes") \
    _(CREATE_DCT_LIMIT,         EXCEED_LIM,     0x71000b, \
      "no more DCTs: cmd_hca_cap.log_max_dct reached") \
    /* DRAIN_DCT, QUERY_DCT */ \
    _(DRAIN_DCT_BAD_STATE,      BAD_RES_STATE,  0x712001, \
      "the DCT is not active") \
    /* CREATE_QP and the QP transitions of a DCI */ \
    _(DCI_RQ,                   BAD_PARAM,      0x500020, \
      "a DCI with a receive queue of its own (rq_type regular)") \
    /* DESTROY_UMEM (issued by the kernel for umem_dereg) */ \
    _(DESTROY_UMEM_IN_USE,      RESOURCE_BUSY,  0xa0a001, \
      "umem still referenced by a QP, an RMP or an XRQ")


#define UCT_IB_EMU_SYNDROME_ENUM(_name, _status, _value, _what) \
    UCT_IB_EMU_SYND_##_name = _value,

enum uct_ib_emu_syndrome_t : uint32_t {
    UCT_IB_EMU_FOREACH_SYNDROME(UCT_IB_EMU_SYNDROME_ENUM)
};

#undef UCT_IB_EMU_SYNDROME_ENUM


/* The status that goes with one of the emulator's syndromes */
constexpr uct_ib_emu_fw_status_t
uct_ib_emu_syndrome_status(uct_ib_emu_syndrome_t syndrome)
{
#define UCT_IB_EMU_SYNDROME_STATUS(_name, _status, _value, _what) \
    (syndrome == UCT_IB_EMU_SYND_##_name) ? UCT_IB_EMU_FW_##_status :

    return UCT_IB_EMU_FOREACH_SYNDROME(UCT_IB_EMU_SYNDROME_STATUS)
           UCT_IB_EMU_FW_INTERNAL_ERR;

#undef UCT_IB_EMU_SYNDROME_STATUS
}

/* What an emulator syndrome means, or NULL for an unknown value */
const char *uct_ib_emu_syndrome_str(uint32_t syndrome);

/*
 * The errno a command status becomes when the kernel maps it instead of
 * returning EREMOTEIO with the mailbox (destroy commands, older kernels).
 */
constexpr int uct_ib_emu_fw_status_errno(uint8_t status)
{
    switch (status) {
    case UCT_IB_EMU_FW_OK:
        return 0;
    case UCT_IB_EMU_FW_BAD_OP:
    case UCT_IB_EMU_FW_BAD_PARAM:
    case UCT_IB_EMU_FW_BAD_RESOURCE:
    case UCT_IB_EMU_FW_BAD_RES_STATE:
    case UCT_IB_EMU_FW_BAD_INDEX:
    case UCT_IB_EMU_FW_BAD_QP_STATE:
    case UCT_IB_EMU_FW_BAD_PKT:
    case UCT_IB_EMU_FW_BAD_SIZE:
        return EINVAL;
    case UCT_IB_EMU_FW_RESOURCE_BUSY:
        return EBUSY;
    case UCT_IB_EMU_FW_EXCEED_LIM:
        return ENOMEM;
    case UCT_IB_EMU_FW_NO_RESOURCES:
        return EAGAIN;
    default: /* INTERNAL_ERR, BAD_SYS_STATE, BAD_INPUT_LEN, BAD_OUTPUT_LEN */
        return EIO;
    }
}

#endif
