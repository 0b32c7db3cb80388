# UCX_CHECK_GTEST: googletest for "make check" (Debian: googletest, libgtest-dev).
AC_DEFUN([UCX_CHECK_GTEST], [
    PKG_CHECK_MODULES([GTEST], [gtest],
        [ucx_have_gtest=yes],
        [AC_LANG_PUSH([C++])
         AC_CHECK_HEADER([gtest/gtest.h],
             [ucx_have_gtest=yes
              GTEST_LIBS="-lgtest -lpthread"],
             [ucx_have_gtest=no])
         AC_LANG_POP([C++])])
    AS_IF([test "x$ucx_have_gtest" != xyes],
          [AC_MSG_WARN([googletest not found: "make check" cannot build the tests (apt-get install googletest libgtest-dev)])])
    AM_CONDITIONAL([HAVE_GTEST], [test "x$ucx_have_gtest" = xyes])
])
