/*
 * A completion channel: the fd on which armed CQs report completions.
 * Plain verbs, for any transport that sleeps on its CQs. ib/base may
 * include the glue and ucs/ only.
 */
#ifndef UCT_IB_COMP_CHANNEL_H_
#define UCT_IB_COMP_CHANNEL_H_

#include "ib_device.h"

/* Non-blocking, so draining it never waits. */
class uct_ib_comp_channel {
public:
    static ucs_status_t create(const uct_ib_device &dev, uint8_t port_num,
                               uct_ib_comp_channel **channel_p);
    ~uct_ib_comp_channel();

    uct_ib_comp_channel(const uct_ib_comp_channel&)            = delete;
    uct_ib_comp_channel &operator=(const uct_ib_comp_channel&) = delete;

    struct ibv_comp_channel *channel() const { return m_channel; }
    int                     fd() const { return m_channel->fd; }

    /**
     * Take one event without waiting and acknowledge it: the CQ it came
     * from, or NULL when none is queued.
     */
    struct ibv_cq *get_event() const;

private:
    uct_ib_comp_channel(const uct_ib_device &dev, uint8_t port_num) :
        m_dev(dev), m_port_num(port_num)
    {
    }

    const uct_ib_device     &m_dev;
    const uint8_t           m_port_num;
    struct ibv_comp_channel *m_channel = nullptr;
};

#endif
