/*
 * Environment configuration: tables of typed knobs, filled from UCX_*
 * variables. A table field names its variable (without prefixes), its default
 * value, its documentation, where it lives in the options struct, and how it
 * is parsed. A field of type TABLE embeds another table, adding a prefix.
 *
 * A knob "GID_INDEX" in a table with prefix "IB_" is read from
 * UCX_IB_GID_INDEX, then UCX_GID_INDEX (most specific prefix first).
 */
#ifndef UCS_CONFIG_PARSER_H_
#define UCS_CONFIG_PARSER_H_

#include <ucs/config/types.h>
#include <ucs/type/status.h>
#include <stdio.h>

BEGIN_C_DECLS

#define UCS_DEFAULT_ENV_PREFIX "UCX_"

typedef struct ucs_config_parser {
    /* Parse @a buf into @a dest; return 1 on success, 0 on a bad value. */
    int          (*read)(const char *buf, void *dest, const void *arg);
    /* Print the value at @a src into @a buf. */
    void         (*write)(char *buf, size_t max, const void *src,
                          const void *arg);
    ucs_status_t (*clone)(const void *src, void *dest, const void *arg);
    void         (*release)(void *ptr, const void *arg);
    /* Describe the accepted syntax, for errors and listings. */
    void         (*help)(char *buf, size_t max, const void *arg);
    const void   *arg;
} ucs_config_parser_t;

typedef struct ucs_config_field {
    const char          *name;
    const char          *dfl_value;
    const char          *doc;
    size_t              offset;
    ucs_config_parser_t parser;
} ucs_config_field_t;

/* A registered top-level table, listed by ucx_info -c. */
typedef struct ucs_config_table_entry {
    const char         *name;    /* e.g. "IB memory domain" */
    const char         *prefix;  /* e.g. "IB_" */
    ucs_config_field_t *table;
    size_t             size;     /* sizeof the options struct */
} ucs_config_table_entry_t;

#define UCS_CONFIG_EMPTY_FIELD { NULL, NULL, NULL, 0, \
                                 { NULL, NULL, NULL, NULL, NULL, NULL } }

/**
 * Fill @a opts from the defaults and the environment. A bad value is logged
 * as an error naming the variable and its accepted syntax, and the default
 * is kept. Returns an error only if memory runs out or a default is invalid.
 */
ucs_status_t ucs_config_parser_fill_opts(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *env_prefix,
                                         const char *table_prefix);

/** Release what fill_opts or clone_opts allocated inside @a opts. */
void ucs_config_parser_release_opts(void *opts,
                                    const ucs_config_field_t *fields);

ucs_status_t ucs_config_parser_clone_opts(const void *src, void *dst,
                                          const ucs_config_field_t *fields);

/** Set one knob by its name (without prefixes); UCS_ERR_NO_ELEM if unknown,
 *  UCS_ERR_INVALID_PARAM if the value does not parse. */
ucs_status_t ucs_config_parser_set_value(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, const char *value);

ucs_status_t ucs_config_parser_get_value(const void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, char *value,
                                         size_t max);

/** Print every knob of a table: doc as a comment, then VAR=value. */
void ucs_config_parser_print_opts(FILE *stream, const char *title,
                                  const void *opts,
                                  const ucs_config_field_t *fields,
                                  const char *env_prefix,
                                  const char *table_prefix);

/** Print every registered table with the values the environment gives. */
void ucs_config_parser_print_all_opts(FILE *stream, const char *env_prefix);

/** Register a top-level table (normally through UCS_CONFIG_REGISTER_TABLE). */
void ucs_config_register_table(const ucs_config_table_entry_t *entry);
void ucs_config_unregister_table(const ucs_config_table_entry_t *entry);

/**
 * Warn, once per variable and process, about each environment variable that
 * starts with @a env_prefix but matches no knob of any registered table.
 * Returns how many new warnings were printed.
 */
unsigned ucs_config_parser_warn_unused_env_vars(const char *env_prefix);

/**
 * Whether a report about a knob's value (an invalid value, a value clamped or
 * refused) is the first of its kind in this process: @a key names the knob,
 * the value and what was said. Every interface and memory domain reads its
 * table again, and one line says all there is.
 */
int ucs_config_parser_first_report(const char *key);

/**
 * Forget which reports were made, so the next read reports again (tests, or
 * a process that changed its environment).
 */
void ucs_config_parser_forget_reported_values(void);

#define UCS_CONFIG_REGISTER_TABLE(_table, _name, _prefix, _type) \
    static ucs_config_table_entry_t _table##_config_entry = { \
        _name, _prefix, _table, sizeof(_type) \
    }; \
    static void __attribute__((constructor)) _table##_register(void) \
    { \
        ucs_config_register_table(&_table##_config_entry); \
    } \
    static void __attribute__((destructor)) _table##_unregister(void) \
    { \
        ucs_config_unregister_table(&_table##_config_entry); \
    }

END_C_DECLS

#endif
