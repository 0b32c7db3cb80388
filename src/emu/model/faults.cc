/*
 * Fault injection (api/emu.h): a glue slot failing with an errno in its
 * own convention, a firmware command failing with a status and syndrome,
 * a work request completing with an error status; armed by tests, taken
 * by the front-ends, the firmware and the UMR send path.
 */
#include <emu/model/model.h>

#include <ucs/config/parser.h>

#include <cstdio>
#include <sstream>


namespace uct_ib_emu {

namespace {

#define UCT_IB_EMU_OP_CONV(_name, _conv, _ret, _args) UCT_IB_GLUE_CONV_##_conv,
#define UCT_IB_EMU_OP_NAME(_name, _conv, _ret, _args) #_name,

constexpr uct_ib_glue_conv_t op_conv[] = {
    UCT_IB_GLUE_FOREACH_OP(UCT_IB_EMU_OP_CONV)
};

constexpr const char *op_name[] = {
    UCT_IB_GLUE_FOREACH_OP(UCT_IB_EMU_OP_NAME)
};

#undef UCT_IB_EMU_OP_CONV
#undef UCT_IB_EMU_OP_NAME

static_assert(sizeof(op_conv) / sizeof(op_conv[0]) == UCT_IB_GLUE_OP_LAST,
              "one convention per glue slot");

ucs_status_t fail_op_locked(emu_state &s, uct_ib_glue_op_t op, unsigned count,
                            int err)
{
    if ((op < 0) || (op >= UCT_IB_GLUE_OP_LAST) ||
        (op_conv[op] == UCT_IB_GLUE_CONV_VOID) ||
        (op_conv[op] == UCT_IB_GLUE_CONV_NAME) ||
        ((count > 0) && (err <= 0))) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((s.op_faults[op].count == 0) && (count > 0)) {
        s.op_faults_armed.fetch_add(1, std::memory_order_release);
    } else if ((s.op_faults[op].count > 0) && (count == 0)) {
        s.op_faults_armed.fetch_sub(1, std::memory_order_release);
    }
    s.op_faults[op] = fault{count, err};
    return UCS_OK;
}

int op_by_name(const std::string &name)
{
    for (int op = 0; op < UCT_IB_GLUE_OP_LAST; ++op) {
        if (name == op_name[op]) {
            return op;
        }
    }
    return -1;
}

/* An errno by number or by its name ("EIO"); 0 if neither */
int errno_by_name(const std::string &text)
{
    unsigned long value;
    char *end;

    value = strtoul(text.c_str(), &end, 10);
    if (!text.empty() && (*end == '\0')) {
        return (value < 4096) ? static_cast<int>(value) : 0;
    }

    for (int err = 1; err < 4096; ++err) {
        const char *name = strerrorname_np(err);
        if ((name != nullptr) && (text == name)) {
            return err;
        }
    }
    return 0;
}

/* UCX_IB_EMU_FAIL_OP: the faults a process arms when its model starts, for
 * programs that cannot call the API (those on the drop-in front-end) */
struct fault_config {
    char *fail_op;
};

ucs_config_field_t fault_config_table[] = {
    {"IB_EMU_FAIL_OP", "",
     "Glue operations that fail from the start of the process, as if\n"
     "uct_ib_emu_fail_op() had been called: OP:COUNT:ERRNO[,OP:COUNT:ERRNO...],\n"
     "OP a glue operation (destroy_ah, create_ah, ...), ERRNO a number or a\n"
     "name (EIO); for example destroy_ah:1:EIO fails the next\n"
     "ibv_destroy_ah() with EIO.",
     offsetof(fault_config, fail_op), UCS_CONFIG_TYPE_STRING},

    UCS_CONFIG_EMPTY_FIELD
};

} // namespace

UCS_CONFIG_REGISTER_TABLE(fault_config_table, "emulated device faults", "",
                          fault_config)

ucs_status_t fail_ops_locked(emu_state &s, const std::string &spec,
                             std::string *error)
{
    std::vector<std::pair<uct_ib_glue_op_t, fault>> faults;
    std::istringstream entries(spec);
    std::string entry;

    while (std::getline(entries, entry, ',')) {
        size_t c1 = entry.find(':');
        size_t c2 = (c1 == std::string::npos) ? c1 : entry.find(':', c1 + 1);
        int op, err;
        unsigned long count;
        char *end;

        if (c2 == std::string::npos) {
            *error = "'" + entry + "' is not OP:COUNT:ERRNO";
            return UCS_ERR_INVALID_PARAM;
        }

        op = op_by_name(entry.substr(0, c1));
        if ((op < 0) || (op_conv[op] == UCT_IB_GLUE_CONV_VOID) ||
            (op_conv[op] == UCT_IB_GLUE_CONV_NAME)) {
            *error = "'" + entry.substr(0, c1) + "' is no glue operation "
                     "that can fail";
            return UCS_ERR_INVALID_PARAM;
        }

        std::string count_str = entry.substr(c1 + 1, c2 - c1 - 1);
        count = strtoul(count_str.c_str(), &end, 10);
        if (count_str.empty() || (*end != '\0') || (count == 0) ||
            (count > UINT32_MAX)) {
            *error = "'" + count_str + "' is no count of calls (1 or more)";
            return UCS_ERR_INVALID_PARAM;
        }

        err = errno_by_name(entry.substr(c2 + 1));
        if (err <= 0) {
            *error = "'" + entry.substr(c2 + 1) + "' is no errno";
            return UCS_ERR_INVALID_PARAM;
        }

        faults.emplace_back(static_cast<uct_ib_glue_op_t>(op),
                            fault{static_cast<unsigned>(count), err});
    }

    if (faults.empty()) {
        *error = "no OP:COUNT:ERRNO";
        return UCS_ERR_INVALID_PARAM;
    }

    /* all or nothing */
    for (const auto &f : faults) {
        fail_op_locked(s, f.first, f.second.count, f.second.err);
    }
    return UCS_OK;
}

void arm_faults_from_env(emu_state &s)
{
    fault_config config = {};
    std::string error;

    if (ucs_config_parser_fill_opts(&config, fault_config_table,
                                    UCS_DEFAULT_ENV_PREFIX, "") != UCS_OK) {
        return;
    }

    if ((config.fail_op != nullptr) && (config.fail_op[0] != '\0')) {
        guard g(s.lock);
        if (fail_ops_locked(s, config.fail_op, &error) != UCS_OK) {
            ucs_error("emu: UCX_IB_EMU_FAIL_OP=%s: %s; no fault armed",
                      config.fail_op, error.c_str());
        } else {
            uct_ib_emu_debug("UCX_IB_EMU_FAIL_OP=%s armed", config.fail_op);
        }
    }
    ucs_config_parser_release_opts(&config, fault_config_table);
}


uct_ib_glue_conv_t glue_op_conv(uct_ib_glue_op_t op)
{
    return op_conv[op];
}

bool take_op_fault(uct_ib_glue_op_t op, int *err)
{
    emu_state &s = state();

    /* every glue call asks: without a fault armed, it costs no lock */
    if (s.op_faults_armed.load(std::memory_order_acquire) == 0) {
        return false;
    }

    guard g(s.lock);
    fault &f = s.op_faults[op];

    if (f.count == 0) {
        return false;
    }

    if (--f.count == 0) {
        s.op_faults_armed.fetch_sub(1, std::memory_order_release);
    }
    *err = f.err;
    uct_ib_emu_debug("%s: injected failure, errno %d", op_name[op], f.err);
    return true;
}

bool take_wr_fault(emu_state &s, wr_fault *f)
{
    if (s.wr_faults.count == 0) {
        return false;
    }

    --s.wr_faults.count;
    *f = s.wr_faults;
    uct_ib_emu_debug("work request: injected completion status %d, vendor "
                     "syndrome 0x%x", f->status, f->vendor_err);
    return true;
}

void clear_faults_locked(emu_state &s)
{
    for (fault &f : s.op_faults) {
        f = fault();
    }
    s.op_faults_armed.store(0, std::memory_order_release);
    s.cmd_faults.clear();
    s.wr_faults = wr_fault();
}

} // namespace uct_ib_emu


using namespace uct_ib_emu;

ucs_status_t uct_ib_emu_fail_op(uct_ib_glue_op_t op, unsigned count, int err)
{
    emu_state &s = state();
    guard g(s.lock);

    return fail_op_locked(s, op, count, err);
}

ucs_status_t uct_ib_emu_fail_op(const std::string &op_name_str,
                                unsigned count, int err)
{
    int op = op_by_name(op_name_str);

    return (op < 0) ? UCS_ERR_INVALID_PARAM :
           uct_ib_emu_fail_op(static_cast<uct_ib_glue_op_t>(op), count, err);
}

ucs_status_t uct_ib_emu_fail_ops(const std::string &spec, std::string *error)
{
    emu_state &s = state();
    guard g(s.lock);
    std::string dummy;

    return fail_ops_locked(s, spec, (error != nullptr) ? error : &dummy);
}

extern "C" ucs_status_t uct_ib_emu_fail_ops_c(const char *spec)
{
    std::string error;
    ucs_status_t status;

    status = uct_ib_emu_fail_ops((spec != nullptr) ? spec : "", &error);
    if (status != UCS_OK) {
        ucs_error("emu: fault text '%s': %s; no fault armed",
                  (spec != nullptr) ? spec : "(null)", error.c_str());
    }
    return status;
}

ucs_status_t uct_ib_emu_fail_cmd(uint16_t opcode, unsigned count,
                                 uint8_t status, uint32_t syndrome,
                                 unsigned skip)
{
    emu_state &s = state();
    guard g(s.lock);

    if ((count > 0) && (status == UCT_IB_EMU_FW_OK)) {
        return UCS_ERR_INVALID_PARAM;
    }

    s.cmd_faults[opcode] = cmd_fault{skip, count, status, syndrome};
    return UCS_OK;
}

ucs_status_t uct_ib_emu_fail_wr(unsigned count, enum ibv_wc_status status,
                                uint32_t vendor_err)
{
    emu_state &s = state();
    guard g(s.lock);

    if ((count > 0) && (status == IBV_WC_SUCCESS)) {
        return UCS_ERR_INVALID_PARAM;
    }

    s.wr_faults = wr_fault{count, status, vendor_err};
    return UCS_OK;
}

void uct_ib_emu_clear_faults()
{
    emu_state &s = state();
    guard g(s.lock);

    clear_faults_locked(s);
}

unsigned uct_ib_emu_pending_faults()
{
    emu_state &s = state();
    guard g(s.lock);
    unsigned pending = 0;

    for (const fault &f : s.op_faults) {
        pending += f.count;
    }
    for (const auto &entry : s.cmd_faults) {
        pending += entry.second.count;
    }
    return pending + s.wr_faults.count;
}
