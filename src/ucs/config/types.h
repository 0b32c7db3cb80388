/*
 * Value types of configuration knobs and their parsers.
 */
#ifndef UCS_CONFIG_TYPES_H_
#define UCS_CONFIG_TYPES_H_

#include <ucs/type/status.h>
#include <stddef.h>

BEGIN_C_DECLS

/* "auto" and "inf" for unsigned long knobs */
#define UCS_ULUNITS_AUTO  ((unsigned long)-2)
#define UCS_ULUNITS_INF   ((unsigned long)-1)

/* "auto" and "inf" for memory-size knobs */
#define UCS_MEMUNITS_AUTO ((size_t)-2)
#define UCS_MEMUNITS_INF  ((size_t)-1)

/* A comma-separated list, e.g. UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1 */
typedef struct ucs_config_names_array {
    char     **names;
    unsigned count;
} ucs_config_names_array_t;

/* How an asynchronous context runs its handlers (<ucs/async/async.h>) */
typedef enum {
    UCS_ASYNC_MODE_SIGNAL,
    UCS_ASYNC_MODE_THREAD,
    UCS_ASYNC_MODE_THREAD_SPINLOCK = UCS_ASYNC_MODE_THREAD,
    UCS_ASYNC_MODE_THREAD_MUTEX,
    UCS_ASYNC_MODE_POLL,
    UCS_ASYNC_MODE_LAST
} ucs_async_mode_t;

#define UCS_CONFIG_PARSER_FUNCS(_t) \
    int  ucs_config_sscanf_##_t(const char *buf, void *dest, const void *arg); \
    void ucs_config_sprintf_##_t(char *buf, size_t max, const void *src, \
                                 const void *arg); \
    void ucs_config_help_##_t(char *buf, size_t max, const void *arg);

UCS_CONFIG_PARSER_FUNCS(bool)
UCS_CONFIG_PARSER_FUNCS(uint)
UCS_CONFIG_PARSER_FUNCS(ulunits)
UCS_CONFIG_PARSER_FUNCS(double)
UCS_CONFIG_PARSER_FUNCS(enum)
UCS_CONFIG_PARSER_FUNCS(time)
UCS_CONFIG_PARSER_FUNCS(memunits)
UCS_CONFIG_PARSER_FUNCS(string)
UCS_CONFIG_PARSER_FUNCS(string_array)
UCS_CONFIG_PARSER_FUNCS(table)

ucs_status_t ucs_config_clone_int(const void *src, void *dest, const void *arg);
ucs_status_t ucs_config_clone_uint(const void *src, void *dest, const void *arg);
ucs_status_t ucs_config_clone_ulong(const void *src, void *dest, const void *arg);
ucs_status_t ucs_config_clone_double(const void *src, void *dest, const void *arg);
ucs_status_t ucs_config_clone_size(const void *src, void *dest, const void *arg);
ucs_status_t ucs_config_clone_string(const void *src, void *dest, const void *arg);
ucs_status_t ucs_config_clone_string_array(const void *src, void *dest,
                                           const void *arg);
ucs_status_t ucs_config_clone_table(const void *src, void *dest, const void *arg);

void ucs_config_release_nop(void *ptr, const void *arg);
void ucs_config_release_string(void *ptr, const void *arg);
void ucs_config_release_string_array(void *ptr, const void *arg);
void ucs_config_release_table(void *ptr, const void *arg);

#define UCS_CONFIG_PARSER(_t, _clone, _release, _arg) \
    { ucs_config_sscanf_##_t, ucs_config_sprintf_##_t, _clone, _release, \
      ucs_config_help_##_t, _arg }

/* int: y/yes/on/1 or n/no/off/0 */
#define UCS_CONFIG_TYPE_BOOL \
    UCS_CONFIG_PARSER(bool, ucs_config_clone_int, ucs_config_release_nop, NULL)

/* unsigned */
#define UCS_CONFIG_TYPE_UINT \
    UCS_CONFIG_PARSER(uint, ucs_config_clone_uint, ucs_config_release_nop, NULL)

/* unsigned long: a number, "auto" (UCS_ULUNITS_AUTO) or "inf" */
#define UCS_CONFIG_TYPE_ULUNITS \
    UCS_CONFIG_PARSER(ulunits, ucs_config_clone_ulong, ucs_config_release_nop, \
                      NULL)

/* double */
#define UCS_CONFIG_TYPE_DOUBLE \
    UCS_CONFIG_PARSER(double, ucs_config_clone_double, ucs_config_release_nop, \
                      NULL)

/* int: index into a NULL-terminated array of names, case-insensitive */
#define UCS_CONFIG_TYPE_ENUM(_names) \
    UCS_CONFIG_PARSER(enum, ucs_config_clone_int, ucs_config_release_nop, \
                      _names)

/* double, seconds: <number>[s|ms|us|ns], or "inf" (HUGE_VAL) */
#define UCS_CONFIG_TYPE_TIME \
    UCS_CONFIG_PARSER(time, ucs_config_clone_double, ucs_config_release_nop, \
                      NULL)

/* size_t: <number>[b|k|kb|m|mb|g|gb] (powers of 1024), "auto" or "inf" */
#define UCS_CONFIG_TYPE_MEMUNITS \
    UCS_CONFIG_PARSER(memunits, ucs_config_clone_size, ucs_config_release_nop, \
                      NULL)

/* char*, owned by the options struct */
#define UCS_CONFIG_TYPE_STRING \
    UCS_CONFIG_PARSER(string, ucs_config_clone_string, \
                      ucs_config_release_string, NULL)

/* ucs_config_names_array_t: comma-separated, "" is an empty list */
#define UCS_CONFIG_TYPE_STRING_ARRAY \
    UCS_CONFIG_PARSER(string_array, ucs_config_clone_string_array, \
                      ucs_config_release_string_array, NULL)

/* An embedded table; the field's name is the prefix its knobs add. */
#define UCS_CONFIG_TYPE_TABLE(_fields) \
    UCS_CONFIG_PARSER(table, ucs_config_clone_table, ucs_config_release_table, \
                      _fields)

END_C_DECLS

#endif
