/*
 * The counting glue table and the callgrind instruction probe; see
 * bench_probe.h.
 */
#include "bench_probe.h"

#ifdef HAVE_VALGRIND_H
#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>
#endif

#include <dirent.h>
#include <endian.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <type_traits>

namespace bench {

namespace {

const uct_ib_glue_ops_t *inner_ops = nullptr;
uct_ib_glue_ops_t       counting_ops;
glue_counts             counts;

/* Whether a measured region is open */
bool measuring = false;

inline void toggle_collect()
{
#ifdef HAVE_VALGRIND_H
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

/* The opcode of a DevX command: bits 31..16 of its first big-endian dword */
unsigned cmd_opcode(const void *in, size_t inlen)
{
    uint32_t dword0;

    if ((in == nullptr) || (inlen < sizeof(dword0))) {
        return 0;
    }
    memcpy(&dword0, in, sizeof(dword0));
    return (be32toh(dword0) >> 16) & (glue_counts::max_opcode - 1);
}

void count_cmd(unsigned opcode)
{
    ++counts.devx_cmds;
    ++counts.by_opcode[opcode];
}

/* The kernel issues these for umem registration (as the emulator models) */
constexpr unsigned opcode_create_umem  = 0xa08;
constexpr unsigned opcode_destroy_umem = 0xa0a;

/* What a forwarded call adds to the counts */
template <uct_ib_glue_op_t Op, typename R, typename... Args>
void count_call(R ret, Args... args)
{
    auto arg = std::make_tuple(args...);

    if constexpr (Op == UCT_IB_GLUE_OP_create_ah) {
        counts.ah_created += (ret != nullptr);
    } else if constexpr (Op == UCT_IB_GLUE_OP_destroy_ah) {
        counts.ah_destroyed += (ret == 0);
    } else if constexpr ((Op == UCT_IB_GLUE_OP_devx_general_cmd) ||
                         (Op == UCT_IB_GLUE_OP_devx_obj_create) ||
                         (Op == UCT_IB_GLUE_OP_devx_obj_query) ||
                         (Op == UCT_IB_GLUE_OP_devx_obj_modify)) {
        count_cmd(cmd_opcode(std::get<1>(arg), std::get<2>(arg)));
    } else if constexpr (Op == UCT_IB_GLUE_OP_devx_obj_destroy) {
        ++counts.devx_cmds;
        ++counts.obj_destroyed;
    } else if constexpr (Op == UCT_IB_GLUE_OP_devx_umem_reg) {
        count_cmd(opcode_create_umem);
    } else if constexpr (Op == UCT_IB_GLUE_OP_devx_umem_dereg) {
        count_cmd(opcode_destroy_umem);
    }
    (void)ret;
    (void)arg;
}

/*
 * The slot of the counting table for glue operation Op: leave the measured
 * region (if one is open), call the inner table, count, and come back.
 */
template <uct_ib_glue_op_t Op, typename Fn, Fn uct_ib_glue_ops_t::*Slot>
struct forward;

template <uct_ib_glue_op_t Op, typename R, typename... Args,
          R (*uct_ib_glue_ops_t::*Slot)(Args...)>
struct forward<Op, R (*)(Args...), Slot> {
    static R call(Args... args)
    {
        const bool excluded = measuring;

        if (excluded) {
            toggle_collect();
        }

        if constexpr (std::is_void<R>::value) {
            (inner_ops->*Slot)(args...);
            if (excluded) {
                toggle_collect();
            }
        } else {
            R ret = (inner_ops->*Slot)(args...);
            count_call<Op>(ret, args...);
            if (excluded) {
                toggle_collect();
            }
            return ret;
        }
    }
};

#define BENCH_GLUE_FORWARD(_name) \
    forward<UCT_IB_GLUE_OP_##_name, decltype(uct_ib_glue_ops_t::_name), \
            &uct_ib_glue_ops_t::_name>

#define BENCH_GLUE_SLOT(_name, _conv, _ret, _args) \
    ops->_name = BENCH_GLUE_FORWARD(_name)::call;

void fill_counting_ops(uct_ib_glue_ops_t *ops, const uct_ib_glue_ops_t *inner)
{
    *ops      = *inner;
    ops->name = inner->emulated ? "counting+emulated" : "counting+rdma-core";
    UCT_IB_GLUE_FOREACH_OP(BENCH_GLUE_SLOT)
}

#undef BENCH_GLUE_SLOT
#undef BENCH_GLUE_FORWARD

} // namespace


glue_counts glue_counts::operator-(const glue_counts &before) const
{
    glue_counts diff;

    diff.ah_created    = ah_created - before.ah_created;
    diff.ah_destroyed  = ah_destroyed - before.ah_destroyed;
    diff.devx_cmds     = devx_cmds - before.devx_cmds;
    diff.obj_destroyed = obj_destroyed - before.obj_destroyed;
    for (unsigned i = 0; i < max_opcode; ++i) {
        diff.by_opcode[i] = by_opcode[i] - before.by_opcode[i];
    }
    return diff;
}

ucs_status_t glue_install_counting()
{
    ucs_status_t status;

    if (inner_ops != nullptr) {
        return UCS_OK;
    }

    inner_ops = uct_ib_glue;
    fill_counting_ops(&counting_ops, inner_ops);
    status = uct_ib_glue_install(&counting_ops);
    if (status != UCS_OK) {
        inner_ops = nullptr;
    }
    return status;
}

const uct_ib_glue_ops_t *glue_inner()
{
    return inner_ops;
}

const glue_counts &glue_counted()
{
    return counts;
}

const char *devx_opcode_name(unsigned opcode)
{
    /* PRM opcodes, named as the PRM does */
    static const struct {
        unsigned   opcode;
        const char *name;
    } names[] = {
        {0x100, "QUERY_HCA_CAP"},  {0x200, "CREATE_MKEY"},
        {0x202, "DESTROY_MKEY"},   {0x500, "CREATE_QP"},
        {0x501, "DESTROY_QP"},     {0x502, "RST2INIT_QP"},
        {0x503, "INIT2RTR_QP"},    {0x504, "RTR2RTS_QP"},
        {0x505, "RTS2RTS_QP"},     {0x507, "2ERR_QP"},
        {0x50a, "2RST_QP"},        {0x50b, "QUERY_QP"},
        {0x800, "ALLOC_PD"},       {0x801, "DEALLOC_PD"},
        {opcode_create_umem, "CREATE_UMEM"},
        {opcode_destroy_umem, "DESTROY_UMEM"}
    };

    for (const auto &entry : names) {
        if (entry.opcode == opcode) {
            return entry.name;
        }
    }
    return nullptr;
}


/* ------------------------------------------------------------------------
 * Instruction probe
 */
namespace instr {

namespace {

bool active = false;

std::string dump_tag(const std::string &name)
{
    return "ucx_connect_bench " + std::to_string(getpid()) + " " + name;
}

void dump(const std::string &name)
{
#ifdef HAVE_VALGRIND_H
    std::string tag = dump_tag(name);
    CALLGRIND_DUMP_STATS_AT(tag.c_str());
#else
    (void)name;
#endif
}

void zero()
{
#ifdef HAVE_VALGRIND_H
    CALLGRIND_ZERO_STATS;
#endif
}

/* The path of the dump file in @a dir whose trigger is @a tag, or "" */
std::string find_dump(const std::string &dir, const std::string &tag)
{
    const std::string trigger = "desc: Trigger: Client Request: " + tag;
    DIR               *d      = opendir(dir.c_str());
    struct dirent     *entry;
    std::string       found;

    if (d == nullptr) {
        return found;
    }

    while (found.empty() && ((entry = readdir(d)) != nullptr)) {
        if (strstr(entry->d_name, "callgrind") == nullptr) {
            continue;
        }

        std::string   path = dir + "/" + entry->d_name;
        std::ifstream file(path);
        std::string   line;

        /* the trigger is in the header */
        for (unsigned lines = 0; std::getline(file, line) && (lines < 64);
             ++lines) {
            if (line == trigger) {
                found = path;
                break;
            }
        }
    }
    closedir(d);
    return found;
}

/* The value of a "key=(id) name" or "key=(id)" line, names uncompressed */
std::string spec_name(const std::string &value,
                      std::map<std::string, std::string> *names)
{
    size_t close;

    if ((value.empty()) || (value[0] != '(') ||
        ((close = value.find(')')) == std::string::npos)) {
        return value; /* not compressed */
    }

    std::string id = value.substr(0, close + 1);
    if (close + 1 < value.size()) {
        (*names)[id] = value.substr(close + 2);
    }
    return (*names)[id];
}

/*
 * Read a callgrind dump (format version 1): the summary, and the self cost
 * (the first event, Ir) of each function and of the functions of each
 * object. A cost line right after "calls=" is the inclusive cost of a call,
 * not self cost. Names may be compressed ("(id) name" once, then "(id)"):
 * ob and cob share one table, fn, cfn and jfn another.
 */
bool parse_dump(const std::string &path, dump_costs *costs)
{
    std::ifstream                      file(path);
    std::map<std::string, std::string> ob_names, fn_names;
    std::string                        line, ob, fn_ob, fn;
    unsigned                           num_positions = 1;
    bool                               call_cost     = false;
    bool                               have_summary  = false;

    if (!file) {
        return false;
    }

    costs->by_object.clear();
    costs->by_function.clear();
    while (std::getline(file, line)) {
        if (line.empty() || (line[0] == '#')) {
            continue;
        }

        char first = line[0];
        if (isdigit(first) || (first == '+') || (first == '-') ||
            (first == '*')) {
            if (call_cost) {
                call_cost = false;
                continue;
            }

            /* positions, then the events */
            std::istringstream fields(line);
            std::string        field;
            for (unsigned i = 0; (i < num_positions) && (fields >> field); ++i) {
            }
            uint64_t ir = 0;
            if (fields >> ir) {
                costs->by_object[fn_ob] += ir;
                costs->by_function[fn] += ir;
            }
            continue;
        }

        size_t      eq    = line.find_first_of("=:");
        std::string key   = line.substr(0, eq);
        std::string value = (eq == std::string::npos) ? "" :
                            line.substr(eq + 1 + (line[eq] == ':'));

        if (key == "ob") {
            ob = spec_name(value, &ob_names);
        } else if (key == "cob") {
            (void)spec_name(value, &ob_names); /* may define a name */
        } else if ((key == "cfn") || (key == "jfn")) {
            (void)spec_name(value, &fn_names); /* may define a name */
        } else if (key == "fn") {
            fn    = spec_name(value, &fn_names);
            fn_ob = ob;
        } else if (key == "calls") {
            call_cost = true;
        } else if (key == "positions") {
            std::istringstream words(value);
            std::string        word;
            num_positions = 0;
            while (words >> word) {
                ++num_positions;
            }
        } else if (key == "summary") {
            costs->summary = strtoull(value.c_str(), nullptr, 10);
            have_summary   = true;
        }
    }
    return have_summary;
}

/* Dump as @a name and read the dump back; "" if done, else why not */
std::string dump_and_parse(const std::string &dir, const std::string &name,
                           dump_costs *costs)
{
    std::string path;

    dump(name);
    path = find_dump(dir, dump_tag(name));
    if (path.empty()) {
        return "no callgrind dump '" + dump_tag(name) + "' in '" + dir + "'";
    }
    if (!parse_dump(path, costs)) {
        return "cannot parse the callgrind dump " + path;
    }
    return "";
}

} // namespace

namespace {

std::string base_name(const std::string &path)
{
    size_t slash = path.rfind('/');

    return path.substr((slash == std::string::npos) ? 0 : slash + 1);
}

/* The name of the running program's file (libtool's "lt-" prefix off) */
const std::string &program_name()
{
    static const std::string name = [] {
        char    path[4096];
        ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
        std::string base = base_name((n > 0) ? std::string(path, size_t(n)) :
                                               std::string());

        return (base.compare(0, 3, "lt-") == 0) ? base.substr(3) : base;
    }();
    return name;
}

} // namespace

bool is_probe_object(const std::string &object)
{
    /* the running program, whichever benchmark it is (libtool may run it
     * as .libs/lt-<name>) */
    std::string base = base_name(object);

    if (base.compare(0, 3, "lt-") == 0) {
        base = base.substr(3);
    }
    return !program_name().empty() && (base == program_name());
}

void region_enter()
{
    measuring = true;
    toggle_collect();
}

void region_leave()
{
    toggle_collect();
    measuring = false;
}

bool under_valgrind()
{
#ifdef HAVE_VALGRIND_H
    return RUNNING_ON_VALGRIND;
#else
    return false;
#endif
}

bool start(const std::string &dump_dir, std::string *why_not)
{
    constexpr unsigned spin_iters = 100000;
    volatile unsigned  spin       = 0;
    dump_costs         costs;

#ifndef HAVE_VALGRIND_H
    *why_not = "built without valgrind's client-request headers";
    return false;
#endif
    if (!under_valgrind()) {
        *why_not = "not running under valgrind --tool=callgrind";
        return false;
    }

    /* A region of known work: collection must be on inside the regions and
     * off outside them; no dump at all means another valgrind tool */
    zero();
    region_enter();
    for (unsigned i = 0; i < spin_iters; ++i) {
        spin = spin + 1;
    }
    region_leave();
    *why_not = dump_and_parse(dump_dir, "check: known work", &costs);
    if (!why_not->empty()) {
        *why_not += " (another valgrind tool than callgrind? -C names the "
                    "directory callgrind writes its dumps to)";
        return false;
    }
    if (costs.summary < spin_iters) {
        *why_not = "callgrind collects outside the measured calls: run it "
                   "with --collect-atstart=no";
        return false;
    }

    active = true;
    return true;
}

bool enabled()
{
    return active;
}

void phase_begin()
{
    if (active) {
        zero();
    }
}

bool phase_end(const std::string &name, const std::string &dump_dir,
               dump_costs *costs, std::string *why_not)
{
    if (!active) {
        *why_not = "instruction counting is off";
        return false;
    }
    *why_not = dump_and_parse(dump_dir, name, costs);
    return why_not->empty();
}

} // namespace instr

} // namespace bench
