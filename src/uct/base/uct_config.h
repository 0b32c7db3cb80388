/*
 * Configurations handed to users: an options struct filled from a table,
 * preceded by a small header that remembers the table, so that
 * uct_config_release/modify/get work on the bare pointer.
 */
#ifndef UCT_BASE_CONFIG_H_
#define UCT_BASE_CONFIG_H_

#include <ucs/config/parser.h>
#include <ucs/type/status.h>

/**
 * Allocate an options struct of @a entry->size bytes and fill it from the
 * environment: "UCX_" knobs, or "<env_prefix>_UCX_" ones when @a env_prefix
 * is neither NULL nor empty. The result is released with uct_config_release().
 */
[[nodiscard]] ucs_status_t uct_config_read(const ucs_config_table_entry_t *entry,
                                           const char *env_prefix,
                                           void **config_p);

#endif
