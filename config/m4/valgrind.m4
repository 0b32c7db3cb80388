# UCX_CHECK_VALGRIND: valgrind's client-request header, used to scale test
# deadlines when running under valgrind. Optional.
AC_DEFUN([UCX_CHECK_VALGRIND], [
    AC_CHECK_HEADER([valgrind/valgrind.h],
        [ucx_have_valgrind=yes
         AC_DEFINE([HAVE_VALGRIND_H], [1], [valgrind/valgrind.h is available])],
        [ucx_have_valgrind=no])
])
