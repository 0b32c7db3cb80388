/*
 * ucx_emu: parsing and printing the words of a command line (emu_args.h).
 */
#include "emu_args.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <cstring>


namespace ucx_emu {

namespace {

int hex_digit(char c)
{
    if ((c >= '0') && (c <= '9')) {
        return c - '0';
    }
    c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    return ((c >= 'a') && (c <= 'f')) ? (c - 'a' + 10) : -1;
}

bool all_digits(const std::string &text)
{
    if (text.empty()) {
        return false;
    }
    for (char c : text) {
        if (!isdigit(static_cast<unsigned char>(c))) {
            return false;
        }
    }
    return true;
}

} // namespace

bool parse_mac(const std::string &text, uct_ib_emu_mac_t *mac_p,
               std::string *error_p)
{
    uct_ib_emu_mac_t mac;

    /* exactly 17 characters: six pairs of hex digits and five colons */
    bool ok = (text.size() == 17);
    for (size_t i = 0; ok && (i < 6); ++i) {
        int hi = hex_digit(text[3 * i]);
        int lo = hex_digit(text[3 * i + 1]);

        ok = (hi >= 0) && (lo >= 0) && ((i == 5) || (text[3 * i + 2] == ':'));
        mac[i] = static_cast<uint8_t>((hi << 4) | lo);
    }

    if (!ok) {
        *error_p = "'" + text + "' is not a MAC address (aa:bb:cc:dd:ee:ff)";
        return false;
    }
    *mac_p = mac;
    return true;
}

bool parse_gid(const std::string &text, union ibv_gid *gid_p,
               std::string *error_p)
{
    union ibv_gid gid;
    struct in_addr v4;

    memset(&gid, 0, sizeof(gid));
    if (inet_pton(AF_INET6, text.c_str(), gid.raw) == 1) {
        *gid_p = gid;
        return true;
    }

    if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
        /* the IPv4-mapped address, as RoCE GIDs of an IPv4 interface are */
        gid.raw[10] = 0xff;
        gid.raw[11] = 0xff;
        memcpy(&gid.raw[12], &v4.s_addr, 4);
        *gid_p = gid;
        return true;
    }

    *error_p = "'" + text + "' is not a GID (IPv6 text like fe80::1, or IPv4 "
               "like 198.18.0.1 for ::ffff:198.18.0.1)";
    return false;
}

bool parse_dev_port(const std::string &text, std::string *dev_p,
                    uint8_t *port_p, std::string *error_p)
{
    size_t colon    = text.find(':');
    std::string dev = text.substr(0, colon);
    unsigned port   = 1;

    if (dev.empty()) {
        *error_p = "'" + text + "' is not a port (DEVICE or DEVICE:PORT, "
                   "like mlx5_0:1)";
        return false;
    }
    if ((colon != std::string::npos) &&
        !parse_uint(text.substr(colon + 1), 1, 255, &port, error_p)) {
        *error_p = "'" + text + "' is not a port (DEVICE or DEVICE:PORT, "
                   "with PORT 1..255)";
        return false;
    }

    *dev_p  = dev;
    *port_p = static_cast<uint8_t>(port);
    return true;
}

bool parse_uint(const std::string &text, unsigned min, unsigned max,
                unsigned *value_p, std::string *error_p)
{
    unsigned long value;

    if (!all_digits(text) || (text.size() > 9) ||
        ((value = strtoul(text.c_str(), nullptr, 10)) < min) ||
        (value > max)) {
        *error_p = "'" + text + "' is not a number in " + std::to_string(min)
                   + ".." + std::to_string(max);
        return false;
    }
    *value_p = static_cast<unsigned>(value);
    return true;
}

bool parse_switch(const std::string &text, const char *yes, const char *no,
                  const char *what, bool *value_p, std::string *error_p)
{
    if ((text != yes) && (text != no)) {
        *error_p = std::string(what) + " is '" + yes + "' or '" + no +
                   "', not '" + text + "'";
        return false;
    }
    *value_p = (text == yes);
    return true;
}

std::string mac_str(const uct_ib_emu_mac_t &mac)
{
    char buf[18];

    snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
             mac[2], mac[3], mac[4], mac[5]);
    return buf;
}

std::string gid_str(const uct_ib_emu_gid_t &gid)
{
    char buf[INET6_ADDRSTRLEN];

    if (inet_ntop(AF_INET6, gid.data(), buf, sizeof(buf)) == nullptr) {
        return "?";
    }
    return buf;
}

} // namespace ucx_emu
