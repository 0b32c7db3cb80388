#!/bin/sh
# Write the CMake package files of an installation from their templates.
#
#   gen-package.sh TEMPLATE_DIR OUT_DIR NAME=VALUE...
#
# NAME=VALUE: package, version, prefix, libdir, includedir, moduledir,
# cmakedir (the installed directory of the files, without DESTDIR),
# ucs_la, uct_la (the built libtool archives, for the file names and
# SONAMEs), sizeof_void_p. A directory under the prefix is written relative
# to the package files, so the installed tree can be moved as a whole.
set -eu

templates=$1 out=$2
shift 2
for arg in "$@"; do
    case $arg in
    package=*|version=*|prefix=*|libdir=*|includedir=*|moduledir=*|cmakedir=*|\
    ucs_la=*|uct_la=*|sizeof_void_p=*)
        eval "${arg%%=*}=\${arg#*=}" ;;
    *)
        echo "$0: unknown argument $arg" >&2
        exit 1 ;;
    esac
done

# la_field LA NAME: a field of a libtool archive, without its quotes
la_field() {
    sed -n "s/^$2='\\(.*\\)'\$/\\1/p" "$1"
}

# real_name LA: the file the link name points to (first of library_names)
real_name() {
    set -- $(la_field "$1" library_names)
    echo "$1"
}

# under_prefix DIR: DIR as seen from the package files
under_prefix() {
    case $1 in
    "$prefix")   echo '${_ucx_prefix}' ;;
    "$prefix"/*) echo "\${_ucx_prefix}/${1#"$prefix"/}" ;;
    *)           echo "$1" ;;
    esac
}

# The prefix as seen from the package files: the way up from cmakedir, or
# the prefix itself if cmakedir is elsewhere
case $cmakedir in
"$prefix"/*)
    up=$(echo "${cmakedir#"$prefix"/}" | sed 's|[^/][^/]*|..|g')
    prefix_expr="\${CMAKE_CURRENT_LIST_DIR}/$up" ;;
*)
    prefix_expr=$prefix ;;
esac

for name in ucx-config ucx-config-version ucx-targets; do
    sed -e "s|@PACKAGE@|$package|g" \
        -e "s|@VERSION@|$version|g" \
        -e "s|@PREFIX@|$prefix_expr|g" \
        -e "s|@LIBDIR@|$(under_prefix "$libdir")|g" \
        -e "s|@INCLUDEDIR@|$(under_prefix "$includedir")|g" \
        -e "s|@MODULEDIR@|$(under_prefix "$moduledir")|g" \
        -e "s|@UCS_LIBRARY@|$(real_name "$ucs_la")|g" \
        -e "s|@UCS_SONAME@|$(la_field "$ucs_la" dlname)|g" \
        -e "s|@UCT_LIBRARY@|$(real_name "$uct_la")|g" \
        -e "s|@UCT_SONAME@|$(la_field "$uct_la" dlname)|g" \
        -e "s|@SIZEOF_VOID_P@|$sizeof_void_p|g" \
        "$templates/$name.cmake.in" >"$out/$name.cmake"
    if grep -n '@[A-Z_]*@' "$out/$name.cmake" >&2; then
        echo "$0: $out/$name.cmake: placeholder left" >&2
        exit 1
    fi
done
