/*
 * Filling, copying and printing options structs from their field tables, and
 * the registry of top-level tables behind ucx_info -c and the unused-variable
 * warning.
 */
#include <ucs/config/parser.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

extern char **environ;

namespace {

using prefix_list = std::vector<std::string>;

/* Room for any knob value (the largest is ucs_config_names_array_t). */
struct value_buffer {
    alignas(16) char data[64];
};

bool is_table(const ucs_config_field_t *field)
{
    return field->parser.read == ucs_config_sscanf_table;
}

void *field_ptr(void *opts, const ucs_config_field_t *field)
{
    return static_cast<char*>(opts) + field->offset;
}

const void *field_ptr(const void *opts, const ucs_config_field_t *field)
{
    return static_cast<const char*>(opts) + field->offset;
}

const ucs_config_field_t *sub_table(const ucs_config_field_t *field)
{
    return static_cast<const ucs_config_field_t*>(field->parser.arg);
}

/* Prefixes of an embedded table's knobs: the field's own before the bare "". */
prefix_list nested_prefixes(const prefix_list &outer,
                            const ucs_config_field_t *field)
{
    prefix_list inner = outer;

    if (field->name[0] != '\0') {
        inner.insert(inner.end() - 1, field->name);
    }
    return inner;
}

prefix_list initial_prefixes(const char *table_prefix)
{
    prefix_list prefixes;

    if ((table_prefix != nullptr) && (table_prefix[0] != '\0')) {
        prefixes.push_back(table_prefix);
    }
    prefixes.push_back("");
    return prefixes;
}

const char *env_prefix_or_default(const char *env_prefix)
{
    return (env_prefix == nullptr) ? UCS_DEFAULT_ENV_PREFIX : env_prefix;
}

std::string help_of(const ucs_config_field_t *field)
{
    char buf[256];

    field->parser.help(buf, sizeof(buf), field->parser.arg);
    return buf;
}

/* Parse @a value into the field, replacing what is there, or change nothing. */
bool replace_value(void *opts, const ucs_config_field_t *field,
                   const char *value)
{
    value_buffer probe = {};

    if (!field->parser.read(value, probe.data, field->parser.arg)) {
        return false;
    }
    field->parser.release(probe.data, field->parser.arg);

    field->parser.release(field_ptr(opts, field), field->parser.arg);
    return field->parser.read(value, field_ptr(opts, field), field->parser.arg);
}

struct reported_values {
    std::mutex            lock;
    std::set<std::string> keys;
};

reported_values &the_reported_values()
{
    static reported_values r;
    return r;
}

void report_invalid_value(const std::string &var, const char *value,
                          const ucs_config_field_t *field)
{
    const std::string key = "invalid " + var + "=" + value;

    if (ucs_config_parser_first_report(key.c_str())) {
        ucs_error("invalid value of %s: '%s' (expected %s), using default "
                  "'%s'", var.c_str(), value, help_of(field).c_str(),
                  field->dfl_value);
    }
}

ucs_status_t fill_fields(void *opts, const ucs_config_field_t *fields,
                         const std::string &env_prefix,
                         const prefix_list &prefixes)
{
    ucs_status_t status;

    for (const ucs_config_field_t *f = fields; f->name != nullptr; ++f) {
        if (is_table(f)) {
            status = fill_fields(field_ptr(opts, f), sub_table(f), env_prefix,
                                 nested_prefixes(prefixes, f));
            if (status != UCS_OK) {
                return status;
            }
            continue;
        }

        if (!f->parser.read(f->dfl_value, field_ptr(opts, f), f->parser.arg)) {
            ucs_error("invalid default value '%s' of knob %s (expected %s)",
                      f->dfl_value, f->name, help_of(f).c_str());
            return UCS_ERR_INVALID_PARAM;
        }

        for (const std::string &prefix : prefixes) {
            std::string var   = env_prefix + prefix + f->name;
            const char  *value = getenv(var.c_str());

            if (value == nullptr) {
                continue;
            }
            if (!replace_value(opts, f, value)) {
                report_invalid_value(var, value, f);
            }
            break; /* the most specific variable wins, even if invalid */
        }
    }
    return UCS_OK;
}

/* Find a knob by its bare name, or by its name with a nested table's prefix. */
const ucs_config_field_t *find_field(const ucs_config_field_t *fields,
                                     const char *name, size_t *offset_p)
{
    for (const ucs_config_field_t *f = fields; f->name != nullptr; ++f) {
        if (is_table(f)) {
            size_t      prefix_len = strlen(f->name);
            const char  *inner     = name;
            size_t      offset;
            const ucs_config_field_t *found;

            if (strncmp(name, f->name, prefix_len) == 0) {
                inner = name + prefix_len;
            }
            found = find_field(sub_table(f), inner, &offset);
            if (found != nullptr) {
                *offset_p = f->offset + offset;
                return found;
            }
        } else if (strcmp(f->name, name) == 0) {
            *offset_p = 0;
            return f;
        }
    }
    return nullptr;
}

void print_doc(FILE *stream, const char *doc)
{
    const char *line = doc;

    while (*line != '\0') {
        const char *end = strchr(line, '\n');
        int        len  = (end == nullptr) ? (int)strlen(line) : (int)(end - line);

        fprintf(stream, "# %.*s\n", len, line);
        line += len + (end != nullptr);
    }
}

void print_fields(FILE *stream, const void *opts,
                  const ucs_config_field_t *fields, const std::string &env_prefix,
                  const std::string &prefix, std::set<std::string> *printed)
{
    char value[256];

    for (const ucs_config_field_t *f = fields; f->name != nullptr; ++f) {
        if (is_table(f)) {
            print_fields(stream, field_ptr(opts, f), sub_table(f), env_prefix,
                         (f->name[0] != '\0') ? f->name : prefix, printed);
            continue;
        }

        std::string var = env_prefix + prefix + f->name;
        if ((printed != nullptr) && !printed->insert(var).second) {
            continue;
        }

        f->parser.write(value, sizeof(value), field_ptr(opts, f), f->parser.arg);
        print_doc(stream, f->doc);
        fprintf(stream, "#\n# syntax:    %s\n# default:   %s\n#\n%s=%s\n\n",
                help_of(f).c_str(), f->dfl_value, var.c_str(), value);
    }
}

void collect_names(const ucs_config_field_t *fields, const std::string &env_prefix,
                   const prefix_list &prefixes, std::set<std::string> *names)
{
    for (const ucs_config_field_t *f = fields; f->name != nullptr; ++f) {
        if (is_table(f)) {
            collect_names(sub_table(f), env_prefix, nested_prefixes(prefixes, f),
                          names);
            continue;
        }
        for (const std::string &prefix : prefixes) {
            names->insert(env_prefix + prefix + f->name);
        }
    }
}

struct registry {
    std::mutex                                   lock;
    std::vector<const ucs_config_table_entry_t*> tables;
    std::set<std::string>                        warned;
};

registry &the_registry()
{
    static registry *r = new registry(); /* used by destructors at exit */
    return *r;
}

} // namespace

ucs_status_t ucs_config_parser_fill_opts(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *env_prefix,
                                         const char *table_prefix)
{
    ucs_status_t status;

    status = fill_fields(opts, fields, env_prefix_or_default(env_prefix),
                         initial_prefixes(table_prefix));
    if (status != UCS_OK) {
        ucs_config_parser_release_opts(opts, fields);
    }
    return status;
}

void ucs_config_parser_release_opts(void *opts, const ucs_config_field_t *fields)
{
    for (const ucs_config_field_t *f = fields; f->name != nullptr; ++f) {
        f->parser.release(field_ptr(opts, f), f->parser.arg);
    }
}

ucs_status_t ucs_config_parser_clone_opts(const void *src, void *dst,
                                          const ucs_config_field_t *fields)
{
    ucs_status_t status;

    for (const ucs_config_field_t *f = fields; f->name != nullptr; ++f) {
        status = f->parser.clone(field_ptr(src, f), field_ptr(dst, f),
                                 f->parser.arg);
        if (status != UCS_OK) {
            for (const ucs_config_field_t *done = fields; done != f; ++done) {
                done->parser.release(field_ptr(dst, done), done->parser.arg);
            }
            return status;
        }
    }
    return UCS_OK;
}

ucs_status_t ucs_config_parser_set_value(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, const char *value)
{
    size_t                   offset;
    const ucs_config_field_t *f = find_field(fields, name, &offset);

    if (f == nullptr) {
        return UCS_ERR_NO_ELEM;
    }

    return replace_value(static_cast<char*>(opts) + offset, f, value) ?
           UCS_OK : UCS_ERR_INVALID_PARAM;
}

ucs_status_t ucs_config_parser_get_value(const void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, char *value,
                                         size_t max)
{
    size_t                   offset;
    const ucs_config_field_t *f = find_field(fields, name, &offset);

    if (f == nullptr) {
        return UCS_ERR_NO_ELEM;
    }

    f->parser.write(value, max, field_ptr(static_cast<const char*>(opts) + offset, f),
                    f->parser.arg);
    return UCS_OK;
}

void ucs_config_parser_print_opts(FILE *stream, const char *title,
                                  const void *opts,
                                  const ucs_config_field_t *fields,
                                  const char *env_prefix,
                                  const char *table_prefix)
{
    fprintf(stream, "#\n# %s\n#\n\n", title);
    print_fields(stream, opts, fields, env_prefix_or_default(env_prefix),
                 (table_prefix == nullptr) ? "" : table_prefix, nullptr);
}

void ucs_config_parser_print_all_opts(FILE *stream, const char *env_prefix)
{
    std::vector<const ucs_config_table_entry_t*> tables;
    std::set<std::string>                        printed;
    const char *env = env_prefix_or_default(env_prefix);

    {
        registry                   &r = the_registry();
        std::lock_guard<std::mutex> guard(r.lock);
        tables = r.tables;
    }

    for (const ucs_config_table_entry_t *entry : tables) {
        std::vector<char> opts(entry->size);

        if (ucs_config_parser_fill_opts(opts.data(), entry->table, env,
                                        entry->prefix) != UCS_OK) {
            continue;
        }
        fprintf(stream, "#\n# %s\n#\n\n", entry->name);
        print_fields(stream, opts.data(), entry->table, env, entry->prefix,
                     &printed);
        ucs_config_parser_release_opts(opts.data(), entry->table);
    }
}

void ucs_config_register_table(const ucs_config_table_entry_t *entry)
{
    registry                   &r = the_registry();
    std::lock_guard<std::mutex> guard(r.lock);

    r.tables.push_back(entry);
}

void ucs_config_unregister_table(const ucs_config_table_entry_t *entry)
{
    registry                   &r = the_registry();
    std::lock_guard<std::mutex> guard(r.lock);

    r.tables.erase(std::remove(r.tables.begin(), r.tables.end(), entry),
                   r.tables.end());
}

unsigned ucs_config_parser_warn_unused_env_vars(const char *env_prefix)
{
    const std::string     env    = env_prefix_or_default(env_prefix);
    unsigned              count  = 0;
    std::set<std::string> known;
    registry              &r     = the_registry();
    std::lock_guard<std::mutex> guard(r.lock);

    for (const ucs_config_table_entry_t *entry : r.tables) {
        collect_names(entry->table, env, initial_prefixes(entry->prefix),
                      &known);
    }

    for (char **e = environ; *e != nullptr; ++e) {
        const char  *eq = strchr(*e, '=');
        std::string var(*e, (eq == nullptr) ? strlen(*e) : (size_t)(eq - *e));

        if ((var.compare(0, env.size(), env) != 0) || known.count(var) ||
            !r.warned.insert(var).second) {
            continue;
        }
        ucs_warn("unused environment variable: %s (no component has this "
                 "knob; check for a typo)", var.c_str());
        ++count;
    }
    return count;
}

int ucs_config_parser_first_report(const char *key)
{
    reported_values             &r = the_reported_values();
    std::lock_guard<std::mutex> guard(r.lock);

    return r.keys.insert(key).second;
}

void ucs_config_parser_forget_reported_values(void)
{
    reported_values             &r = the_reported_values();
    std::lock_guard<std::mutex> guard(r.lock);

    r.keys.clear();
}
