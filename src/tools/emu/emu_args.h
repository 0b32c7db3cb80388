/*
 * ucx_emu: the words of a command line (MACs, GIDs, ports, switches), each
 * parsed strictly. A parser returns false and sets *error_p to one line
 * naming what was wrong; its output argument is written only on success.
 */
#ifndef UCX_EMU_ARGS_H_
#define UCX_EMU_ARGS_H_

#include <emu/api/emu.h>

#include <string>


namespace ucx_emu {

/* "aa:bb:cc:dd:ee:ff" (hex digits, either case, two per byte) */
bool parse_mac(const std::string &text, uct_ib_emu_mac_t *mac_p,
               std::string *error_p);

/* IPv6 text, or IPv4 dotted text meaning ::ffff:a.b.c.d */
bool parse_gid(const std::string &text, union ibv_gid *gid_p,
               std::string *error_p);

/* "mlx5_0" (port 1) or "mlx5_0:N" with N in 1..255 */
bool parse_dev_port(const std::string &text, std::string *dev_p,
                    uint8_t *port_p, std::string *error_p);

/* A decimal number in [min, max] */
bool parse_uint(const std::string &text, unsigned min, unsigned max,
                unsigned *value_p, std::string *error_p);

/* One of two words: *value_p is true for @a yes, false for @a no */
bool parse_switch(const std::string &text, const char *yes, const char *no,
                  const char *what, bool *value_p, std::string *error_p);

/* Text forms for the table */
std::string mac_str(const uct_ib_emu_mac_t &mac);
std::string gid_str(const uct_ib_emu_gid_t &gid);

} // namespace ucx_emu

#endif
