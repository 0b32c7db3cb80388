# UCX_CHECK_SANITIZERS: --enable-asan builds everything with AddressSanitizer
# (which includes LeakSanitizer); --enable-tsan with ThreadSanitizer. The two
# exclude each other.
AC_DEFUN([UCX_CHECK_SANITIZERS], [
    AC_ARG_ENABLE([asan],
        [AS_HELP_STRING([--enable-asan], [build with AddressSanitizer+LeakSanitizer])],
        [], [enable_asan=no])
    AS_IF([test "x$enable_asan" = xyes], [
        asan_flags="-fsanitize=address -fno-omit-frame-pointer"
        save_CXXFLAGS="$CXXFLAGS"
        save_LDFLAGS="$LDFLAGS"
        CXXFLAGS="$CXXFLAGS $asan_flags"
        LDFLAGS="$LDFLAGS -fsanitize=address"
        AC_MSG_CHECKING([whether $CXX supports $asan_flags])
        AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
            [AC_MSG_RESULT([yes])],
            [AC_MSG_RESULT([no])
             AC_MSG_ERROR([AddressSanitizer is not available (apt-get install libasan8)])])
        CFLAGS="$CFLAGS $asan_flags"
        AC_DEFINE([UCS_ENABLE_ASAN], [1], [built with AddressSanitizer])
    ])
    AM_CONDITIONAL([ENABLE_ASAN], [test "x$enable_asan" = xyes])

    AC_ARG_ENABLE([tsan],
        [AS_HELP_STRING([--enable-tsan], [build with ThreadSanitizer])],
        [], [enable_tsan=no])
    AS_IF([test "x$enable_tsan" = xyes], [
        AS_IF([test "x$enable_asan" = xyes],
              [AC_MSG_ERROR([--enable-tsan and --enable-asan exclude each other])])
        tsan_flags="-fsanitize=thread -fno-omit-frame-pointer"
        CXXFLAGS="$CXXFLAGS $tsan_flags"
        LDFLAGS="$LDFLAGS -fsanitize=thread"
        AC_MSG_CHECKING([whether $CXX supports $tsan_flags])
        AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
            [AC_MSG_RESULT([yes])],
            [AC_MSG_RESULT([no])
             AC_MSG_ERROR([ThreadSanitizer is not available (apt-get install libtsan2)])])
        CFLAGS="$CFLAGS $tsan_flags"
        AC_DEFINE([UCS_ENABLE_TSAN], [1], [built with ThreadSanitizer])
    ])
    AM_CONDITIONAL([ENABLE_TSAN], [test "x$enable_tsan" = xyes])
])
