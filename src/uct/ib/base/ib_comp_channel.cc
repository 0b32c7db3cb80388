/*
 * The completion channel (ib_comp_channel.h), through the glue. ib/base
 * may include the glue and ucs/ only.
 */
#include "ib_comp_channel.h"

#include <ucs/debug/log_def.h>

#include <cerrno>
#include <fcntl.h>
#include <new>
#include <string>

ucs_status_t uct_ib_comp_channel::create(const uct_ib_device &dev,
                                         uint8_t port_num,
                                         uct_ib_comp_channel **channel_p)
{
    uct_ib_comp_channel *ch;
    int                 flags;

    ch = new (std::nothrow) uct_ib_comp_channel(dev, port_num);
    if (ch == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    ch->m_channel = uct_ib_glue->create_comp_channel(dev.context());
    if (ch->m_channel == nullptr) {
        const int         err  = errno; /* before the name is built */
        const std::string name = dev.port_name(port_num);

        errno = err;
        ucs_error("create_comp_channel(%s) failed: %m", name.c_str());
        delete ch;
        return (err == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    flags = fcntl(ch->fd(), F_GETFL);
    if ((flags < 0) || (fcntl(ch->fd(), F_SETFL, flags | O_NONBLOCK) < 0)) {
        const int         err  = errno; /* before the name is built */
        const std::string name = dev.port_name(port_num);

        errno = err;
        ucs_error("fcntl(%s, completion channel fd %d, O_NONBLOCK) failed: %m",
                  name.c_str(), ch->fd());
        delete ch;
        return UCS_ERR_IO_ERROR;
    }

    *channel_p = ch;
    return UCS_OK;
}

uct_ib_comp_channel::~uct_ib_comp_channel()
{
    int ret;

    if (m_channel == nullptr) {
        return;
    }

    ret = uct_ib_glue->destroy_comp_channel(m_channel);
    if (ret != 0) {
        errno = ret;
        ucs_warn("destroy_comp_channel(%s) failed: %m",
                 m_dev.port_name(m_port_num).c_str());
    }
}

struct ibv_cq *uct_ib_comp_channel::get_event() const
{
    struct ibv_cq *cq;
    void          *context;

    if (uct_ib_glue->get_cq_event(m_channel, &cq, &context) != 0) {
        const int err = errno;

        if ((err != EAGAIN) && (err != EWOULDBLOCK)) {
            const std::string name = m_dev.port_name(m_port_num);

            errno = err;
            ucs_error("get_cq_event(%s, fd %d) failed: %m", name.c_str(), fd());
        }
        return nullptr;
    }

    uct_ib_glue->ack_cq_events(cq, 1);
    return cq;
}
