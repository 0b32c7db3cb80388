# UCX_CHECK_DEBUG: --enable-debug turns on ucs_assert() and drops optimisation.
AC_DEFUN([UCX_CHECK_DEBUG], [
    AC_ARG_ENABLE([debug],
        [AS_HELP_STRING([--enable-debug], [enable assertions and debug info])],
        [], [enable_debug=no])
    AS_IF([test "x$enable_debug" = xyes],
          [AC_DEFINE([UCS_ENABLE_ASSERT], [1], [ucs_assert() is checked])
           CFLAGS="$CFLAGS -O0 -g"
           CXXFLAGS="$CXXFLAGS -O0 -g"])
    AM_CONDITIONAL([ENABLE_DEBUG], [test "x$enable_debug" = xyes])
])
