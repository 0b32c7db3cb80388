/*
 * What the emulator's own tests do to a fabric's registry beyond operating
 * it (fabric_ctl.h): the states a crashed, foreign or hand-written member
 * leaves behind, made on purpose. Tools never call these. Each logs one
 * error naming what was wrong and returns its status.
 */
#ifndef UCT_IB_EMU_API_FABRIC_TEST_H_
#define UCT_IB_EMU_API_FABRIC_TEST_H_

#include <emu/api/fabric_ctl.h>

#include <string>


/* Hold host number @a host of @a fabric as a live member holds it (its
 * socket name bound): the fd, which the caller closes to let the host go,
 * or -1 with errno */
int uct_ib_emu_fabric_test_hold_host(const std::string &fabric, unsigned host);

/* A segment with the fabric's magic but layout version @a version where
 * the fabric's segment would be (it must not exist yet) */
ucs_status_t uct_ib_emu_fabric_test_plant_version(const std::string &fabric,
                                                  uint32_t version);

/* Host @a host as a member that died without leaving it: joined by a pid
 * that is not alive, with the first port of its first device on @a mac */
ucs_status_t uct_ib_emu_fabric_test_dead_member(const std::string &fabric,
                                                const std::string &host,
                                                const uct_ib_emu_mac_t &mac);

/* Record @a conn (its seq is ignored) in the registry of @a host, as the
 * host's engine records a QP's INIT2RTR */
ucs_status_t uct_ib_emu_fabric_test_record_conn(
        const std::string &fabric, const std::string &host,
        const uct_ib_emu_fabric_conn_t &conn);

#endif
