/*
 * What ucx_connect_bench observes of the library, without any help from it:
 *
 *  - a counting glue table: installed in front of the glue table the library
 *    selected (rdma-core or emulated) before any device is opened; it counts
 *    address handles and DevX commands by opcode, and forwards every call.
 *    It works the same on hardware and on the emulated device.
 *
 *  - an instruction probe for callgrind: measured regions (one library
 *    call each) are bracketed with CALLGRIND_TOGGLE_COLLECT, and so is every
 *    call the counting glue forwards while a region is open, so the device
 *    behind the glue (the emulator, or rdma-core and the kernel) is not
 *    collected. Each phase ends with a callgrind dump named after it, which
 *    the probe reads back; it attributes the cost to objects, so that what
 *    the probe itself executes (this program's code) is left out and only
 *    the library's objects count (libuct_ib, libucs, and the libc and
 *    libstdc++ functions they call), and to functions, so that the one part
 *    of this program that stands for library code, the baseline's AH cache
 *    (baseline_ah_cache.h), can be counted with it. Run under
 *      valgrind --tool=callgrind --collect-atstart=no ucx_connect_bench ...
 */
#ifndef UCX_CONNECT_BENCH_PROBE_H_
#define UCX_CONNECT_BENCH_PROBE_H_

#include <uct/api/tools/ib_glue.h>

#include <cstdint>
#include <map>
#include <string>

namespace bench {

/* What went through the counting glue table so far */
struct glue_counts {
    static constexpr unsigned max_opcode = 0x1000;

    uint64_t ah_created    = 0;
    uint64_t ah_destroyed  = 0;
    uint64_t devx_cmds     = 0;  /* every DevX command, object destroys too */
    uint64_t obj_destroyed = 0;  /* devx_obj_destroy: the opcode is implicit */
    uint64_t by_opcode[max_opcode] = {};

    /* this - before, field by field */
    glue_counts operator-(const glue_counts &before) const;
};

/*
 * Put the counting table in front of the table in use (uct_ib_glue). Call
 * after the library selected its table (the first uct_component_query() of
 * the ib component applies UCX_IB_GLUE) and before any device is opened.
 */
ucs_status_t glue_install_counting();

/* The table the counting one forwards to (NULL before the install) */
const uct_ib_glue_ops_t *glue_inner();

const glue_counts &glue_counted();

/* The name of a DevX opcode, or NULL if the bench does not know it */
const char *devx_opcode_name(unsigned opcode);


/* ------------------------------------------------------------------------
 * Instruction probe (callgrind)
 */
namespace instr {

/* What a callgrind dump holds: its total, and the self cost of each
 * function (by its name) and of the functions of each object (executable or
 * library path), in instructions */
struct dump_costs {
    uint64_t                        summary = 0;
    std::map<std::string, uint64_t> by_object;
    std::map<std::string, uint64_t> by_function;
};

/* Whether @a object is this program (ucx_connect_bench, or whichever
 * program runs the probe): the probe's own code (region toggles, the
 * counting glue's forwarders) is there, and is not the library's */
bool is_probe_object(const std::string &object);

/*
 * Turn the probe on if the program runs under callgrind with collection off
 * outside the measured regions (--collect-atstart=no), which it checks with
 * a region of known work (its dump goes to @a dump_dir). If not, false and
 * the reason in @a why_not.
 */
bool start(const std::string &dump_dir, std::string *why_not);

/* Whether the program runs under any valgrind tool */
bool under_valgrind();

/* Whether start() turned the probe on */
bool enabled();

/* Start of a phase: zero callgrind's counters */
void phase_begin();

/* Region around one library call: everything in it is collected except
 * what the counting glue forwards to the device */
void region_enter();
void region_leave();

/*
 * End of a phase: dump callgrind's counters as "ucx_connect_bench <pid>
 * <name>", find the dump in @a dump_dir and read its costs back. False, with
 * the reason in @a why_not, if the probe is off or the dump cannot be read.
 */
bool phase_end(const std::string &name, const std::string &dump_dir,
               dump_costs *costs, std::string *why_not);

} // namespace instr

} // namespace bench

#endif
