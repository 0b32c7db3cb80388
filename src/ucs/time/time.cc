#include <ucs/time/time.h>

#include <ctime>

ucs_time_t ucs_get_time(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (ucs_time_t)ts.tv_sec * 1000000000ull + (ucs_time_t)ts.tv_nsec;
}
