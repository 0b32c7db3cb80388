/*
 * A socket address with its length, as the client-server parts of the API
 * pass it around.
 */
#ifndef UCS_SYS_SOCK_ADDR_H_
#define UCS_SYS_SOCK_ADDR_H_

#include <ucs/sys/compiler_def.h>
#include <sys/socket.h>

BEGIN_C_DECLS

typedef struct ucs_sock_addr {
    const struct sockaddr *addr;    /**< points to a sockaddr_in/in6/... */
    socklen_t             addrlen;  /**< size of what @a addr points to */
} ucs_sock_addr_t;

END_C_DECLS

#endif
