/*
 * The C API boundary: no exception leaves a public entry point. A public
 * function runs its body through one of these guards; std::bad_alloc becomes
 * UCS_ERR_NO_MEMORY, anything else (a bug) an error status, each logged once.
 */
#ifndef UCT_BASE_GUARD_H_
#define UCT_BASE_GUARD_H_

#include <ucs/debug/log_def.h>
#include <ucs/type/status.h>

#include <exception>
#include <new>

namespace uct {

template <typename Func>
ucs_status_t status_guard(const char *func_name, Func &&func) noexcept
{
    try {
        return func();
    } catch (const std::bad_alloc&) {
        ucs_error("%s: out of memory", func_name);
        return UCS_ERR_NO_MEMORY;
    } catch (const std::exception &e) {
        ucs_error("%s: unexpected exception: %s", func_name, e.what());
        return UCS_ERR_IO_ERROR;
    } catch (...) {
        ucs_error("%s: unexpected exception", func_name);
        return UCS_ERR_IO_ERROR;
    }
}

/** For functions without a status: @a fallback is returned on exception. */
template <typename Result, typename Func>
Result value_guard(const char *func_name, Result fallback, Func &&func) noexcept
{
    Result result = fallback;

    (void)status_guard(func_name, [&]() {
        result = func();
        return UCS_OK;
    });
    return result;
}

template <typename Func>
void void_guard(const char *func_name, Func &&func) noexcept
{
    (void)status_guard(func_name, [&]() {
        func();
        return UCS_OK;
    });
}

} // namespace uct

#endif
