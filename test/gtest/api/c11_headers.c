/*
 * The public headers compile as strict C11 and link against the libraries:
 * built by "make check"; a C user sees exactly this.
 */
#include <ucs/config/parser.h>
#include <ucs/config/types.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/module.h>
#include <ucs/time/time.h>
#include <ucs/type/status.h>

#include <stdio.h>

int main(void)
{
    ucs_time_t start = ucs_get_time();

    ucs_assert_always(ucs_status_string(UCS_ERR_NO_MEMORY) != NULL);
    printf("%s, %d\n", ucs_status_string(UCS_OK), ucs_get_time() >= start);
    return 0;
}
