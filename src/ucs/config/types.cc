/*
 * Parsers of the knob value types. A read function accepts the whole string
 * or nothing: trailing garbage, a sign on an unsigned value and overflow are
 * all bad values.
 */
#include <ucs/config/parser.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <strings.h>

namespace {

bool is_one_of(const char *buf, std::initializer_list<const char*> words)
{
    for (const char *w : words) {
        if (strcasecmp(buf, w) == 0) {
            return true;
        }
    }
    return false;
}

/* Parse a whole non-negative decimal/hex/octal number. */
bool parse_ull(const char *buf, unsigned long long *value_p, char **end_p)
{
    char               *end;
    unsigned long long value;

    while (*buf == ' ') {
        ++buf;
    }
    if ((*buf == '-') || (*buf == '+') || (*buf == '\0')) {
        return false;
    }

    errno = 0;
    value = strtoull(buf, &end, 0);
    if ((errno != 0) || (end == buf)) {
        return false;
    }

    *value_p = value;
    *end_p   = end;
    return true;
}

void help_text(char *buf, size_t max, const char *text)
{
    snprintf(buf, max, "%s", text);
}

} // namespace

/* bool */

int ucs_config_sscanf_bool(const char *buf, void *dest, const void *)
{
    if (is_one_of(buf, {"y", "yes", "on", "1", "true"})) {
        *static_cast<int*>(dest) = 1;
    } else if (is_one_of(buf, {"n", "no", "off", "0", "false"})) {
        *static_cast<int*>(dest) = 0;
    } else {
        return 0;
    }
    return 1;
}

void ucs_config_sprintf_bool(char *buf, size_t max, const void *src, const void *)
{
    snprintf(buf, max, "%s", *static_cast<const int*>(src) ? "y" : "n");
}

void ucs_config_help_bool(char *buf, size_t max, const void *)
{
    help_text(buf, max, "<y|n>");
}

/* unsigned */

int ucs_config_sscanf_uint(const char *buf, void *dest, const void *)
{
    unsigned long long value;
    char               *end;

    if (!parse_ull(buf, &value, &end) || (*end != '\0') || (value > UINT_MAX)) {
        return 0;
    }

    *static_cast<unsigned*>(dest) = static_cast<unsigned>(value);
    return 1;
}

void ucs_config_sprintf_uint(char *buf, size_t max, const void *src, const void *)
{
    snprintf(buf, max, "%u", *static_cast<const unsigned*>(src));
}

void ucs_config_help_uint(char *buf, size_t max, const void *)
{
    help_text(buf, max, "unsigned integer");
}

/* unsigned long with auto/inf */

int ucs_config_sscanf_ulunits(const char *buf, void *dest, const void *)
{
    unsigned long long value;
    char               *end;

    if (is_one_of(buf, {"auto"})) {
        value = UCS_ULUNITS_AUTO;
    } else if (is_one_of(buf, {"inf"})) {
        value = UCS_ULUNITS_INF;
    } else if (!parse_ull(buf, &value, &end) || (*end != '\0') ||
               (value >= UCS_ULUNITS_AUTO)) {
        return 0;
    }

    *static_cast<unsigned long*>(dest) = static_cast<unsigned long>(value);
    return 1;
}

void ucs_config_sprintf_ulunits(char *buf, size_t max, const void *src,
                                const void *)
{
    unsigned long value = *static_cast<const unsigned long*>(src);

    if (value == UCS_ULUNITS_AUTO) {
        snprintf(buf, max, "auto");
    } else if (value == UCS_ULUNITS_INF) {
        snprintf(buf, max, "inf");
    } else {
        snprintf(buf, max, "%lu", value);
    }
}

void ucs_config_help_ulunits(char *buf, size_t max, const void *)
{
    help_text(buf, max, "auto, inf, or an unsigned integer");
}

/* double */

int ucs_config_sscanf_double(const char *buf, void *dest, const void *)
{
    char   *end;
    double value;

    errno = 0;
    value = strtod(buf, &end);
    if ((errno != 0) || (end == buf) || (*end != '\0') || !std::isfinite(value)) {
        return 0;
    }

    *static_cast<double*>(dest) = value;
    return 1;
}

void ucs_config_sprintf_double(char *buf, size_t max, const void *src,
                               const void *)
{
    snprintf(buf, max, "%.3f", *static_cast<const double*>(src));
}

void ucs_config_help_double(char *buf, size_t max, const void *)
{
    help_text(buf, max, "floating point number");
}

/* enum */

int ucs_config_sscanf_enum(const char *buf, void *dest, const void *arg)
{
    const char *const *names = static_cast<const char *const*>(arg);

    for (int i = 0; names[i] != nullptr; ++i) {
        if (strcasecmp(buf, names[i]) == 0) {
            *static_cast<int*>(dest) = i;
            return 1;
        }
    }
    return 0;
}

void ucs_config_sprintf_enum(char *buf, size_t max, const void *src,
                             const void *arg)
{
    const char *const *names = static_cast<const char *const*>(arg);

    snprintf(buf, max, "%s", names[*static_cast<const int*>(src)]);
}

void ucs_config_help_enum(char *buf, size_t max, const void *arg)
{
    const char *const *names = static_cast<const char *const*>(arg);
    std::string       text   = "[";

    for (int i = 0; names[i] != nullptr; ++i) {
        text += (i == 0) ? "" : "|";
        text += names[i];
    }
    text += "]";
    help_text(buf, max, text.c_str());
}

/* time, stored as seconds */

int ucs_config_sscanf_time(const char *buf, void *dest, const void *)
{
    struct unit {
        const char *suffix;
        double     scale;
    };
    static const unit units[] = {
        {"", 1.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}
    };
    char   *end;
    double value;

    if (is_one_of(buf, {"inf"})) {
        *static_cast<double*>(dest) = HUGE_VAL;
        return 1;
    }

    errno = 0;
    value = strtod(buf, &end);
    if ((errno != 0) || (end == buf) || !std::isfinite(value) || (value < 0) ||
        (*buf == '-')) {
        return 0;
    }

    for (const unit &u : units) {
        if (strcasecmp(end, u.suffix) == 0) {
            *static_cast<double*>(dest) = value * u.scale;
            return 1;
        }
    }
    return 0;
}

void ucs_config_sprintf_time(char *buf, size_t max, const void *src,
                             const void *)
{
    double value = *static_cast<const double*>(src);

    if (std::isinf(value)) {
        snprintf(buf, max, "inf");
    } else if ((value == 0) || (value >= 1.0)) {
        snprintf(buf, max, "%.10gs", value);
    } else if (value >= 1e-3) {
        snprintf(buf, max, "%.10gms", value * 1e3);
    } else if (value >= 1e-6) {
        snprintf(buf, max, "%.10gus", value * 1e6);
    } else {
        snprintf(buf, max, "%.10gns", value * 1e9);
    }
}

void ucs_config_help_time(char *buf, size_t max, const void *)
{
    help_text(buf, max, "time value: <number>[s|ms|us|ns], or inf");
}

/* memory units */

int ucs_config_sscanf_memunits(const char *buf, void *dest, const void *)
{
    struct unit {
        const char *suffix;
        unsigned   shift;
    };
    static const unit units[] = {
        {"", 0}, {"b", 0}, {"k", 10}, {"kb", 10}, {"m", 20}, {"mb", 20},
        {"g", 30}, {"gb", 30}, {"t", 40}, {"tb", 40}
    };
    unsigned long long value;
    char               *end;

    if (is_one_of(buf, {"auto"})) {
        *static_cast<size_t*>(dest) = UCS_MEMUNITS_AUTO;
        return 1;
    } else if (is_one_of(buf, {"inf"})) {
        *static_cast<size_t*>(dest) = UCS_MEMUNITS_INF;
        return 1;
    }

    if (!parse_ull(buf, &value, &end)) {
        return 0;
    }

    for (const unit &u : units) {
        if (strcasecmp(end, u.suffix) != 0) {
            continue;
        }
        if ((u.shift > 0) && (value > (UCS_MEMUNITS_AUTO - 1) >> u.shift)) {
            return 0; /* overflow */
        }
        value <<= u.shift;
        if (value >= UCS_MEMUNITS_AUTO) {
            return 0;
        }
        *static_cast<size_t*>(dest) = static_cast<size_t>(value);
        return 1;
    }
    return 0;
}

void ucs_config_sprintf_memunits(char *buf, size_t max, const void *src,
                                 const void *)
{
    static const char *suffixes[] = {"", "K", "M", "G", "T"};
    size_t            value       = *static_cast<const size_t*>(src);
    unsigned          i           = 0;

    if (value == UCS_MEMUNITS_AUTO) {
        snprintf(buf, max, "auto");
        return;
    } else if (value == UCS_MEMUNITS_INF) {
        snprintf(buf, max, "inf");
        return;
    }

    while ((value != 0) && ((value % 1024) == 0) && (i < 4)) {
        value /= 1024;
        ++i;
    }
    snprintf(buf, max, "%zu%s", value, suffixes[i]);
}

void ucs_config_help_memunits(char *buf, size_t max, const void *)
{
    help_text(buf, max, "memory units: <number>[b|kb|mb|gb|tb], auto, or inf");
}

/* string */

int ucs_config_sscanf_string(const char *buf, void *dest, const void *)
{
    char *copy = strdup(buf);

    if (copy == nullptr) {
        return 0;
    }
    *static_cast<char**>(dest) = copy;
    return 1;
}

void ucs_config_sprintf_string(char *buf, size_t max, const void *src,
                               const void *)
{
    const char *value = *static_cast<char *const*>(src);

    snprintf(buf, max, "%s", (value == nullptr) ? "" : value);
}

void ucs_config_help_string(char *buf, size_t max, const void *)
{
    help_text(buf, max, "string");
}

/* comma-separated string list */

int ucs_config_sscanf_string_array(const char *buf, void *dest, const void *)
{
    auto        *array = static_cast<ucs_config_names_array_t*>(dest);
    std::string text(buf);
    unsigned    count  = 0;
    size_t      pos;
    char        **names;

    if (!text.empty()) {
        count = 1;
        for (char c : text) {
            count += (c == ',');
        }
    }

    names = static_cast<char**>(calloc(count + 1, sizeof(*names)));
    if (names == nullptr) {
        return 0;
    }

    for (unsigned i = 0; i < count; ++i) {
        pos      = text.find(',');
        names[i] = strdup(text.substr(0, pos).c_str());
        if ((names[i] == nullptr) || (names[i][0] == '\0')) {
            ucs_config_names_array_t partial = {names, i + 1};
            ucs_config_release_string_array(&partial, nullptr);
            return 0; /* an empty element such as "a,,b" */
        }
        text.erase(0, (pos == std::string::npos) ? pos : pos + 1);
    }

    array->names = names;
    array->count = count;
    return 1;
}

void ucs_config_sprintf_string_array(char *buf, size_t max, const void *src,
                                     const void *)
{
    auto        *array = static_cast<const ucs_config_names_array_t*>(src);
    std::string text;

    for (unsigned i = 0; i < array->count; ++i) {
        text += (i == 0) ? "" : ",";
        text += array->names[i];
    }
    snprintf(buf, max, "%s", text.c_str());
}

void ucs_config_help_string_array(char *buf, size_t max, const void *)
{
    help_text(buf, max, "comma-separated list of names");
}

/* embedded table: handled by the parser itself, never read as a value */

int ucs_config_sscanf_table(const char *, void *, const void *)
{
    return 0;
}

void ucs_config_sprintf_table(char *buf, size_t max, const void *, const void *)
{
    help_text(buf, max, "");
}

void ucs_config_help_table(char *buf, size_t max, const void *)
{
    help_text(buf, max, "table");
}

/* clone and release */

ucs_status_t ucs_config_clone_int(const void *src, void *dest, const void *)
{
    *static_cast<int*>(dest) = *static_cast<const int*>(src);
    return UCS_OK;
}

ucs_status_t ucs_config_clone_uint(const void *src, void *dest, const void *)
{
    *static_cast<unsigned*>(dest) = *static_cast<const unsigned*>(src);
    return UCS_OK;
}

ucs_status_t ucs_config_clone_ulong(const void *src, void *dest, const void *)
{
    *static_cast<unsigned long*>(dest) = *static_cast<const unsigned long*>(src);
    return UCS_OK;
}

ucs_status_t ucs_config_clone_double(const void *src, void *dest, const void *)
{
    *static_cast<double*>(dest) = *static_cast<const double*>(src);
    return UCS_OK;
}

ucs_status_t ucs_config_clone_size(const void *src, void *dest, const void *)
{
    *static_cast<size_t*>(dest) = *static_cast<const size_t*>(src);
    return UCS_OK;
}

ucs_status_t ucs_config_clone_string(const void *src, void *dest, const void *)
{
    const char *value = *static_cast<char *const*>(src);
    char       *copy  = strdup((value == nullptr) ? "" : value);

    if (copy == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    *static_cast<char**>(dest) = copy;
    return UCS_OK;
}

ucs_status_t ucs_config_clone_string_array(const void *src, void *dest,
                                           const void *)
{
    auto     *from  = static_cast<const ucs_config_names_array_t*>(src);
    auto     *to    = static_cast<ucs_config_names_array_t*>(dest);
    char     **names;

    names = static_cast<char**>(calloc(from->count + 1, sizeof(*names)));
    if (names == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    for (unsigned i = 0; i < from->count; ++i) {
        names[i] = strdup(from->names[i]);
        if (names[i] == nullptr) {
            ucs_config_names_array_t partial = {names, i};
            ucs_config_release_string_array(&partial, nullptr);
            return UCS_ERR_NO_MEMORY;
        }
    }

    to->names = names;
    to->count = from->count;
    return UCS_OK;
}

ucs_status_t ucs_config_clone_table(const void *src, void *dest, const void *arg)
{
    return ucs_config_parser_clone_opts(src, dest,
                                        static_cast<const ucs_config_field_t*>(arg));
}

void ucs_config_release_nop(void *, const void *)
{
}

void ucs_config_release_string(void *ptr, const void *)
{
    free(*static_cast<char**>(ptr));
    *static_cast<char**>(ptr) = nullptr;
}

void ucs_config_release_string_array(void *ptr, const void *)
{
    auto *array = static_cast<ucs_config_names_array_t*>(ptr);

    for (unsigned i = 0; i < array->count; ++i) {
        free(array->names[i]);
    }
    free(array->names);
    array->names = nullptr;
    array->count = 0;
}

void ucs_config_release_table(void *ptr, const void *arg)
{
    ucs_config_parser_release_opts(ptr, static_cast<const ucs_config_field_t*>(arg));
}
