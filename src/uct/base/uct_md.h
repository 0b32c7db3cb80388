/*
 * Memory domain base: the object a component's md_open returns and the
 * operations the public uct_md_* calls dispatch through.
 *
 * A transport's memory domain derives from uct_md and points at one const
 * operation table:
 *
 *     struct uct_xxx_md : uct_md { ... };
 *
 *     static const uct_md_ops_t uct_xxx_md_ops = {
 *         .close     = uct_xxx_md_close,
 *         .query     = uct_xxx_md_query,
 *         .mem_reg   = uct_xxx_mem_reg,
 *         .mem_dereg = uct_xxx_mem_dereg,
 *         .mkey_pack = uct_xxx_mkey_pack
 *     };
 *
 * The core checks the arguments the public API defines (non-NULL handles,
 * length > 0) before calling an operation, zeroes uct_md_attr_t before
 * query and fills its component_name afterwards.
 */
#ifndef UCT_BASE_MD_H_
#define UCT_BASE_MD_H_

#include <uct/base/uct_component.h>

#include <uct/api/uct.h>
#include <ucs/config/parser.h>
#include <ucs/debug/log_def.h>

/** Free the memory domain and everything it owns. */
typedef void         (*uct_md_close_func_t)(uct_md_h md);

/** Fill the attributes the transport knows (the struct arrives zeroed). */
typedef ucs_status_t (*uct_md_query_func_t)(uct_md_h md,
                                            uct_md_attr_t *md_attr);

/** Register memory; @a length > 0, @a flags are uct_md_mem_flags. */
typedef ucs_status_t (*uct_md_mem_reg_func_t)(uct_md_h md, void *address,
                                              size_t length, unsigned flags,
                                              uct_mem_h *memh_p);

typedef ucs_status_t (*uct_md_mem_dereg_func_t)(uct_md_h md, uct_mem_h memh);

/** Write uct_md_attr_t::rkey_packed_size bytes. */
typedef ucs_status_t (*uct_md_mkey_pack_func_t)(uct_md_h md, uct_mem_h memh,
                                                void *rkey_buffer);

struct uct_md_ops {
    uct_md_close_func_t     close;
    uct_md_query_func_t     query;
    uct_md_mem_reg_func_t   mem_reg;
    uct_md_mem_dereg_func_t mem_dereg;
    uct_md_mkey_pack_func_t mkey_pack;
};


/** Base of every memory domain. */
struct uct_md {
    const uct_md_ops_t *ops;       /**< set by the transport */
    uct_component_t    *component; /**< set by the core after md_open */
};


/**
 * Base of every memory domain configuration. A component's configuration
 * embeds it as its first member "super" and its table starts with
 *   {"", "", NULL, offsetof(uct_xxx_md_config_t, super),
 *    UCS_CONFIG_TYPE_TABLE(uct_md_config_table)}
 */
struct uct_md_config {
    int reserved; /**< no common knob yet; C forbids empty structs */
};

extern ucs_config_field_t uct_md_config_table[];


/** Whether a registration failure should be an error or a debug line. */
static inline ucs_log_level_t uct_md_reg_log_level(unsigned flags)
{
    return (flags & UCT_MD_MEM_FLAG_HIDE_ERRORS) ? UCS_LOG_LEVEL_DEBUG :
                                                   UCS_LOG_LEVEL_ERROR;
}


/* Stubs for memory domain slots: UCS_ERR_UNSUPPORTED */
ucs_status_t uct_md_mem_reg_unsupported(uct_md_h md, void *address,
                                        size_t length, unsigned flags,
                                        uct_mem_h *memh_p);

ucs_status_t uct_md_mem_dereg_unsupported(uct_md_h md, uct_mem_h memh);

ucs_status_t uct_md_mkey_pack_unsupported(uct_md_h md, uct_mem_h memh,
                                          void *rkey_buffer);

#endif
