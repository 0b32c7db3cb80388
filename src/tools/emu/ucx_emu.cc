/*
 * ucx_emu: create, show, change and destroy a cross-process emulated fabric
 * (docs/architecture.md, section 8) from outside, through the admin API of
 * the emulated device (emu/api/fabric_ctl.h). The tool never joins the
 * fabric: it works on the registry while its members run.
 *
 * Exit status: 0 done, 1 the operation failed (one error line on stderr),
 * 2 bad usage (one error line on stderr).
 */
#include "emu_args.h"
#include "emu_show.h"

#include <emu/api/fabric_ctl.h>
#include <ucs/debug/log_def.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace ucx_emu;

namespace {

constexpr int EXIT_USAGE = 2;

void usage(FILE *stream)
{
    fprintf(stream,
"NAME\n"
"    ucx_emu - operate a cross-process emulated mlx5 fabric\n"
"\n"
"SYNOPSIS\n"
"    ucx_emu [-f FABRIC] COMMAND [ARGUMENTS]\n"
"    ucx_emu -h\n"
"\n"
"DESCRIPTION\n"
"    Processes started with UCX_IB_GLUE=emulated join a fabric, a virtual\n"
"    cluster in shared memory, each as one host with its own mlx5_0..mlx5_3\n"
"    (two Ethernet ports, two InfiniBand ports). ucx_emu works on a fabric\n"
"    from outside, while its members run; it never joins it.\n"
"\n"
"OPTIONS\n"
"    -f FABRIC  the fabric (default: $UCX_IB_EMU_FABRIC, else \"default\");\n"
"               fabrics are per user: /dev/shm/ucx-emu.<uid>.<FABRIC>\n"
"    -h         print this help\n"
"\n"
"COMMANDS\n"
"    create [-n HOSTS]\n"
"        make the fabric with HOSTS hosts (1..16, default 4), kept until\n"
"        destroyed even when no process is joined\n"
"    show [-a]\n"
"        hosts (alive with pid, or dead; isolated), ports (link layer,\n"
"        state, MTU, LID or MAC, the RoCE versions dropped, GIDs), QPs\n"
"        alive, packet counters, drops by reason, and the stale entries of\n"
"        the neighbour tables (-a: every entry)\n"
"    qps [HOST]\n"
"        the latest connections of every host (or of HOST), also after its\n"
"        process left: each QP that reached RTR, its peer QP, the\n"
"        destination its INIT2RTR programmed (GID and MAC, or LID) and\n"
"        whether that MAC is still the peer port's (STALE when it moved)\n"
"    destroy [--force]\n"
"        remove the fabric; --force even while processes are joined\n"
"    mac HOST DEV[:PORT] MAC [--no-arp] [--force]\n"
"        move a port's MAC; every host's neighbour table follows, as after\n"
"        a gratuitous ARP, unless --no-arp (the old entries go stale); a MAC\n"
"        another port of the L2 segment has is refused unless --force\n"
"    roce HOST DEV[:PORT] v1|v2 drop|accept\n"
"        make an Ethernet port drop (or accept again) one RoCE version\n"
"    port HOST DEV[:PORT] up|down\n"
"        bring a port down (state DOWN) or up (ACTIVE)\n"
"    neigh HOST GID MAC\n"
"        make HOST resolve GID to MAC (a stale ARP entry, by hand)\n"
"    isolate HOST on|off\n"
"        kill (on) or restore (off) the traffic of a host to the others\n"
"\n"
"ARGUMENTS\n"
"    HOST  a host's name (host0, host1, ...) or index (0, 1, ...)\n"
"    DEV   a device of the host (mlx5_0); PORT is 1, the default\n"
"    MAC   aa:bb:cc:dd:ee:ff, unicast and not zero\n"
"    GID   IPv6 text (fe80::c9:ff:fe00:1), or IPv4 (198.18.0.1 meaning\n"
"          ::ffff:198.18.0.1)\n"
"\n"
"EXIT STATUS\n"
"    0 done; 1 the operation failed; 2 bad usage. Errors go to stderr.\n"
"\n"
"EXAMPLES\n"
"    ucx_emu -f lab create -n 2\n"
"    UCX_IB_GLUE=emulated UCX_IB_EMU_FABRIC=lab UCX_IB_EMU_HOST=host0 server\n"
"    ucx_emu -f lab mac host0 mlx5_0 02:c9:00:00:aa:01\n"
"    ucx_emu -f lab show\n"
"    ucx_emu -f lab destroy\n");
}

/* A command's words: positional arguments and its own options */
struct command_line {
    std::string                        fabric;
    std::string                        name;
    std::vector<std::string>           args;
    std::map<std::string, std::string> opts;
};

/* A usage error: one line, exit status 2 */
int bad_usage(const std::string &what)
{
    fprintf(stderr, "ucx_emu: %s; see ucx_emu -h\n", what.c_str());
    return EXIT_USAGE;
}

/* A command's usage error, named after the command */
int bad_usage(const command_line &cl, const std::string &what)
{
    return bad_usage(what.compare(0, cl.name.size() + 1, cl.name + ":") ?
                     cl.name + ": " + what : what);
}

/* What the library logs goes to stderr as the tool's own lines */
bool g_error_logged = false;

ucs_log_func_rc_t log_to_stderr(const char *, unsigned, const char *,
                                ucs_log_level_t level, const char *message,
                                void *)
{
    if (level > UCS_LOG_LEVEL_WARN) {
        return UCS_LOG_FUNC_RC_CONTINUE;
    }
    if (!strncmp(message, "emu: ", 5)) {
        message += 5;
    }
    fprintf(stderr, "ucx_emu: %s%s\n",
            (level == UCS_LOG_LEVEL_WARN) ? "warning: " : "", message);
    g_error_logged |= (level < UCS_LOG_LEVEL_WARN);
    return UCS_LOG_FUNC_RC_STOP;
}

/* The exit status of an operation; a failure the library did not explain
 * gets a line of its own */
int done(ucs_status_t status, const std::string &what)
{
    if (status == UCS_OK) {
        return EXIT_SUCCESS;
    }
    if (!g_error_logged) {
        fprintf(stderr, "ucx_emu: %s failed: %s\n", what.c_str(),
                ucs_status_string(status));
    }
    return EXIT_FAILURE;
}


/* Split a command's words; options it does not know are usage errors.
 * @a with_value: options that take the next word */
bool split_words(const std::vector<std::string> &words,
                 const std::set<std::string> &flags,
                 const std::set<std::string> &with_value, command_line *cl,
                 std::string *error_p)
{
    for (size_t i = 0; i < words.size(); ++i) {
        const std::string &w = words[i];

        if ((w.size() < 2) || (w[0] != '-')) {
            cl->args.push_back(w);
        } else if (flags.count(w)) {
            cl->opts[w] = "";
        } else if (with_value.count(w) && (i + 1 < words.size())) {
            cl->opts[w] = words[++i];
        } else if (with_value.count(w)) {
            *error_p = cl->name + ": option " + w + " needs a value";
            return false;
        } else {
            *error_p = cl->name + ": unknown option " + w;
            return false;
        }
    }
    return true;
}

bool arg_count(const command_line &cl, size_t count, const char *synopsis,
               std::string *error_p)
{
    if (cl.args.size() != count) {
        *error_p = cl.name + ": " +
                   ((cl.args.size() < count) ? "missing arguments" :
                                               "too many arguments") +
                   ", usage: " + cl.name + " " + synopsis;
        return false;
    }
    return true;
}


/* The commands; each returns the exit status */

int cmd_create(const command_line &cl)
{
    unsigned hosts = 4;
    std::string error;

    if (!arg_count(cl, 0, "[-n HOSTS]", &error) ||
        (cl.opts.count("-n") &&
         !parse_uint(cl.opts.at("-n"), 1, 16, &hosts, &error))) {
        return bad_usage(cl, cl.args.empty() ? "-n: " + error : error);
    }

    /* one that exists without live members is made anew */
    bool existed        = uct_ib_emu_fabric_exists(cl.fabric);
    ucs_status_t status = uct_ib_emu_fabric_create(cl.fabric, hosts);
    if (status == UCS_OK) {
        printf("fabric %s %s with %u host%s\n", cl.fabric.c_str(),
               existed ? "made anew (no process was joined to it)" : "created",
               hosts, (hosts == 1) ? "" : "s");
    }
    return done(status, "create fabric " + cl.fabric);
}

int cmd_show(const command_line &cl)
{
    uct_ib_emu_fabric_info_t info;
    std::string error;

    if (!arg_count(cl, 0, "[-a]", &error)) {
        return bad_usage(error);
    }

    ucs_status_t status = uct_ib_emu_fabric_info(cl.fabric, &info);
    if (status == UCS_OK) {
        print_fabric(stdout, info, cl.opts.count("-a") > 0);
    }
    return done(status, "show fabric " + cl.fabric);
}

int cmd_qps(const command_line &cl)
{
    uct_ib_emu_fabric_info_t info;
    std::string error, host;

    if (!arg_count(cl, 0, "[HOST]", &error) &&
        !arg_count(cl, 1, "[HOST]", &error)) {
        return bad_usage(error);
    }

    ucs_status_t status = uct_ib_emu_fabric_info(cl.fabric, &info);
    if ((status == UCS_OK) && !cl.args.empty()) {
        for (size_t h = 0; h < info.hosts.size(); ++h) {
            if ((cl.args[0] == info.hosts[h].name) ||
                (cl.args[0] == std::to_string(h))) {
                host = info.hosts[h].name;
            }
        }
        if (host.empty()) {
            fprintf(stderr, "ucx_emu: qps: fabric %s has no host '%s'\n",
                    cl.fabric.c_str(), cl.args[0].c_str());
            return 1;
        }
    }
    if (status == UCS_OK) {
        print_connections(stdout, info, host);
    }
    return done(status, "qps of fabric " + cl.fabric);
}

int cmd_destroy(const command_line &cl)
{
    std::string error;

    if (!arg_count(cl, 0, "[--force]", &error)) {
        return bad_usage(error);
    }

    ucs_status_t status = uct_ib_emu_fabric_destroy(cl.fabric,
                                                    cl.opts.count("--force"));
    if (status == UCS_OK) {
        printf("fabric %s destroyed\n", cl.fabric.c_str());
    }
    return done(status, "destroy fabric " + cl.fabric);
}

int cmd_mac(const command_line &cl)
{
    std::string error, dev;
    uct_ib_emu_mac_t mac;
    uint8_t port;

    if (!arg_count(cl, 3, "HOST DEV[:PORT] MAC [--no-arp] [--force]", &error) ||
        !parse_dev_port(cl.args[1], &dev, &port, &error) ||
        !parse_mac(cl.args[2], &mac, &error)) {
        return bad_usage(cl, error);
    }

    bool arp = !cl.opts.count("--no-arp");
    ucs_status_t status = uct_ib_emu_fabric_set_mac(cl.fabric, cl.args[0], dev,
                                                    port, mac, arp,
                                                    cl.opts.count("--force"));
    if (status == UCS_OK) {
        printf("%s %s:%u: MAC %s%s\n", cl.args[0].c_str(), dev.c_str(), port,
               mac_str(mac).c_str(),
               arp ? ", every neighbour table updated" :
                     ", neighbour tables left as they were");
    }
    return done(status, "mac");
}

/* The current port record, for the flag a command leaves as it is */
ucs_status_t find_port(const std::string &fabric, const std::string &host,
                       const std::string &dev, uint8_t port,
                       uct_ib_emu_fabric_port_t *port_p)
{
    uct_ib_emu_fabric_info_t info;
    ucs_status_t status = uct_ib_emu_fabric_info(fabric, &info);

    if (status != UCS_OK) {
        return status;
    }

    for (size_t h = 0; h < info.hosts.size(); ++h) {
        if ((info.hosts[h].name != host) && (std::to_string(h) != host)) {
            continue;
        }
        for (const auto &p : info.hosts[h].ports) {
            if ((p.device == dev) && (p.port == port)) {
                *port_p = p;
                return UCS_OK;
            }
        }
        ucs_error("emu: fabric %s: host %s has no port %s:%u", fabric.c_str(),
                  host.c_str(), dev.c_str(), port);
        return UCS_ERR_NO_ELEM;
    }

    ucs_error("emu: fabric %s has no host '%s'", fabric.c_str(), host.c_str());
    return UCS_ERR_NO_ELEM;
}

int cmd_roce(const command_line &cl)
{
    std::string error, dev;
    bool v1, drop;
    uint8_t port;
    uct_ib_emu_fabric_port_t cur;

    if (!arg_count(cl, 4, "HOST DEV[:PORT] v1|v2 drop|accept", &error) ||
        !parse_dev_port(cl.args[1], &dev, &port, &error) ||
        !parse_switch(cl.args[2], "v1", "v2", "the RoCE version", &v1,
                      &error) ||
        !parse_switch(cl.args[3], "drop", "accept", "the action", &drop,
                      &error)) {
        return bad_usage(cl, error);
    }

    /* the other version keeps its flag (a concurrent change to it between
     * the two calls would be lost: an operator's race, not a member's) */
    ucs_status_t status = find_port(cl.fabric, cl.args[0], dev, port, &cur);
    if (status == UCS_OK) {
        status = uct_ib_emu_fabric_set_drop(cl.fabric, cl.args[0], dev, port,
                                            v1 ? drop : cur.drop_roce_v1,
                                            v1 ? cur.drop_roce_v2 : drop);
    }
    if (status == UCS_OK) {
        printf("%s %s:%u: RoCE %s packets %s\n", cl.args[0].c_str(),
               dev.c_str(), port, cl.args[2].c_str(),
               drop ? "dropped" : "accepted");
    }
    return done(status, "roce");
}

int cmd_port(const command_line &cl)
{
    std::string error, dev;
    uint8_t port;
    bool up;

    if (!arg_count(cl, 3, "HOST DEV[:PORT] up|down", &error) ||
        !parse_dev_port(cl.args[1], &dev, &port, &error) ||
        !parse_switch(cl.args[2], "up", "down", "the port state", &up,
                      &error)) {
        return bad_usage(cl, error);
    }

    ucs_status_t status = uct_ib_emu_fabric_set_port_up(cl.fabric, cl.args[0],
                                                        dev, port, up);
    if (status == UCS_OK) {
        printf("%s %s:%u: %s\n", cl.args[0].c_str(), dev.c_str(), port,
               up ? "ACTIVE" : "DOWN");
    }
    return done(status, "port");
}

int cmd_neigh(const command_line &cl)
{
    std::string error;
    union ibv_gid gid;
    uct_ib_emu_mac_t mac;

    if (!arg_count(cl, 3, "HOST GID MAC", &error) ||
        !parse_gid(cl.args[1], &gid, &error) ||
        !parse_mac(cl.args[2], &mac, &error)) {
        return bad_usage(cl, error);
    }

    ucs_status_t status = uct_ib_emu_fabric_neigh_set(cl.fabric, cl.args[0],
                                                      gid, mac);
    if (status == UCS_OK) {
        uct_ib_emu_gid_t g;

        std::copy(gid.raw, gid.raw + 16, g.begin());
        printf("%s resolves %s to %s\n", cl.args[0].c_str(),
               gid_str(g).c_str(), mac_str(mac).c_str());
    }
    return done(status, "neigh");
}

int cmd_isolate(const command_line &cl)
{
    std::string error;
    bool on;

    if (!arg_count(cl, 2, "HOST on|off", &error) ||
        !parse_switch(cl.args[1], "on", "off", "isolation", &on, &error)) {
        return bad_usage(cl, error);
    }

    ucs_status_t status = uct_ib_emu_fabric_isolate(cl.fabric, cl.args[0], on);
    if (status == UCS_OK) {
        printf("%s: traffic to other hosts %s\n", cl.args[0].c_str(),
               on ? "killed" : "restored");
    }
    return done(status, "isolate");
}

struct command {
    std::function<int(const command_line&)> run;
    std::set<std::string>                   flags;
    std::set<std::string>                   with_value;
};

const std::map<std::string, command> &commands()
{
    static const std::map<std::string, command> table = {
        {"create",  {cmd_create, {}, {"-n"}}},
        {"show",    {cmd_show, {"-a"}, {}}},
        {"qps",     {cmd_qps, {}, {}}},
        {"destroy", {cmd_destroy, {"--force"}, {}}},
        {"mac",     {cmd_mac, {"--no-arp", "--force"}, {}}},
        {"roce",    {cmd_roce, {}, {}}},
        {"port",    {cmd_port, {}, {}}},
        {"neigh",   {cmd_neigh, {}, {}}},
        {"isolate", {cmd_isolate, {}, {}}},
    };
    return table;
}

std::string default_fabric()
{
    const char *env = getenv("UCX_IB_EMU_FABRIC");

    return ((env != nullptr) && (*env != '\0')) ? env : "default";
}

} // namespace

int main(int argc, char **argv)
{
    command_line cl;
    std::string error;
    int c;

    cl.fabric = default_fabric();
    opterr    = 0;
    while ((c = getopt(argc, argv, "+f:h")) != -1) {
        switch (c) {
        case 'f':
            cl.fabric = optarg;
            break;
        case 'h':
            usage(stdout);
            return EXIT_SUCCESS;
        case ':':
        case '?':
        default:
            return bad_usage((optopt == 'f') ? "option -f needs a fabric name" :
                             std::string("unknown option -") +
                             static_cast<char>(optopt));
        }
    }

    if (optind >= argc) {
        return bad_usage("no command (create, show, destroy, mac, roce, port, "
                         "neigh or isolate)");
    }

    cl.name = argv[optind];
    if ((cl.name == "help") || (cl.name == "--help")) {
        usage(stdout);
        return EXIT_SUCCESS;
    }

    auto it = commands().find(cl.name);
    if (it == commands().end()) {
        return bad_usage("unknown command '" + cl.name + "' (create, show, "
                         "destroy, mac, roce, port, neigh or isolate)");
    }

    if (cl.fabric == "none") {
        return bad_usage("fabric \"none\" means process-private devices, not "
                         "a fabric: name one with -f");
    }

    if (!split_words(std::vector<std::string>(argv + optind + 1, argv + argc),
                     it->second.flags, it->second.with_value, &cl, &error)) {
        return bad_usage(error);
    }

    ucs_log_push_handler(log_to_stderr, nullptr);
    int ret = it->second.run(cl);
    ucs_log_pop_handler();
    return ret;
}
