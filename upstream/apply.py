#!/usr/bin/env python3
"""Apply our change to a UCX 1.13.1 tree by program (issue 23).

Our repository holds our code (upstream/ucx/...) and the anchors this tool
looks for in UCX's sources: function names, the calls the fix replaces,
Makefile.am entries. UCX's own lines are read from the tree being changed,
never stored here.

  apply.py --tree DIR --ours UPSTREAM_DIR --part tests
      our gtest cases (upstream/ucx/test/gtest/...) into the tree, and their
      entry in test/gtest/Makefile.am, after the DevX test's entry
  apply.py --tree DIR --ours UPSTREAM_DIR --part fix
      in src/uct/ib/rc/accel/rc_mlx5_devx.c: our helper (upstream/ucx/
      rc_mlx5_devx_connect_av.c) before uct_rc_mlx5_iface_common_devx_connect_qp(),
      whose RoCE branch then takes its address vector from the helper
      instead of uct_ib_iface_create_ah() and uct_ib_mlx5_get_av()
  apply.py --tree DIR --ours UPSTREAM_DIR --part fix-ud
      the second patch of the series, the same for the UD address vector: in
      src/uct/ib/ud/accel/ud_mlx5_common.c, our helper (upstream/ucx/
      ud_mlx5_transient_av.c) before uct_ud_mlx5_iface_get_av(), whose
      cached AH and uct_ib_mlx5_get_av() become a call of it (a transient
      AH on RoCE, the cache on InfiniBand)
  apply.py --tree DIR --ours UPSTREAM_DIR --part fix-tm
      the third: in src/uct/ib/rc/accel/rc_mlx5_common.c,
      uct_rc_mlx5_devx_create_cmd_qp() fills the tag-matching command QP's
      address with uct_ib_iface_fill_ah_attr_from_gid_lid() (the iface's
      GID index, on RoCEv2 a UDP source port) instead of field by field
  apply.py --tree DIR --ours UPSTREAM_DIR --part trim-gtest
      (a build-time change, never part of the patch) test/gtest/Makefile.am
      builds only the gtest sources the uct suites need: common/, uct/ and
      uct/ib/; the ucp/, ucs/, ucm/ and tcp tests are left out
  apply.py --rename-build DIR --from OLD --to NEW
      every text file under DIR that names OLD names NEW instead (and every
      symbolic link), modification times kept, and every linked file
      (library, program, .la) removed: a copied build tree then builds as
      its own, compiling only what changed and linking everything again

Every failure prints what was looked for, where, and exits 1.
"""

import argparse
import os
import re
import shutil
import stat
import sys


class ApplyError(Exception):
    pass


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def skip_literal(text, i):
    """If text[i] opens a comment or a string/char literal, return the index
    after it, else i"""
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        if end < 0:
            raise ApplyError("unterminated comment at offset %d" % i)
        return end + 2
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text[i] in "\"'":
        quote, j = text[i], i + 1
        while j < len(text) and text[j] != quote:
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return i


def match_close(text, i, open_ch, close_ch):
    """text[i] is open_ch: the index of its matching close_ch"""
    depth = 0
    while i < len(text):
        j = skip_literal(text, i)
        if j != i:
            i = j
            continue
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ApplyError("no matching '%s'" % close_ch)


def split_args(text):
    """Top-level comma-separated arguments of a call's argument text"""
    args, depth, start, i = [], 0, 0, 0
    while i < len(text):
        j = skip_literal(text, i)
        if j != i:
            i = j
            continue
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
        elif text[i] == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
        i += 1
    args.append(text[start:].strip())
    return args


class Function:
    """A C function definition located by name: the offsets of its head
    (the return type's first line), its body's braces"""

    def __init__(self, text, name, path):
        m = re.search(r"^%s\(" % re.escape(name), text, re.M)
        if m is None:
            raise ApplyError("%s: no definition of %s() (a line starting "
                             "with '%s(')" % (path, name, name))
        params_open = m.end() - 1
        params_close = match_close(text, params_open, "(", ")")
        rest = text[params_close + 1:]
        body = re.match(r"\s*\{", rest)
        if body is None:
            raise ApplyError("%s: %s(...) is not followed by a body" %
                             (path, name))
        self.body_open = params_close + 1 + body.end() - 1
        self.body_close = match_close(text, self.body_open, "{", "}")
        # the head: back over the return type's lines, up to a blank line
        head = m.start()
        while head > 0:
            prev = text.rfind("\n", 0, head - 1) + 1
            line = text[prev:head - 1]
            if (line.strip() == "" or line.rstrip().endswith(("}", ";", "*/"))
                    or line.startswith("#")):
                break
            head = prev
        self.head = head


def find_call(text, start, end, callee, path, where):
    """The statement calling callee in text[start:end]: (stmt_start,
    stmt_end, args, indent), stmt_start at its line's start, stmt_end after
    its ';' and newline"""
    m = re.compile(r"\b%s\s*\(" % re.escape(callee)).search(text, start, end)
    if m is None:
        raise ApplyError("%s: no call of %s() in %s" % (path, callee, where))
    open_paren = m.end() - 1
    close_paren = match_close(text, open_paren, "(", ")")
    semi = text.index(";", close_paren)
    if text[close_paren + 1:semi].strip():
        raise ApplyError("%s: the call of %s() in %s is not a statement of "
                         "its own" % (path, callee, where))
    line_start = text.rfind("\n", 0, m.start()) + 1
    indent = re.match(r"[ \t]*", text[line_start:]).group(0)
    stmt_end = text.index("\n", semi) + 1
    args = split_args(text[open_paren + 1:close_paren])
    return line_start, stmt_end, args, text[line_start:m.start()].strip(), indent


def format_call(indent, lhs, callee, args, width=80):
    """A call statement in UCX's style: the continuation lines aligned after
    the opening parenthesis or, where an argument would not fit there, all
    arguments on lines of their own indented 8 more"""
    first = "%s%s%s(" % (indent, (lhs + " ") if lhs else "", callee)

    def pack(head, cont):
        lines, cur = [], head
        for i, arg in enumerate(args):
            piece = arg + (", " if i < len(args) - 1 else ");")
            if len(cur) + len(piece.rstrip()) > width and cur != head:
                lines.append(cur.rstrip())
                cur = cont + piece
            else:
                cur += piece
        lines.append(cur.rstrip())
        return lines

    lines = pack(first, " " * len(first))
    if any(len(line) > width for line in lines):
        lines = [first.rstrip()] + pack(indent + " " * 8, indent + " " * 8)
    return "\n".join(lines) + "\n"


CACHED_AH = "uct_ib_iface_create_ah"
GET_AV = "uct_ib_mlx5_get_av"


class Fix:
    """One fix: in FILE's FUNCTION, the cached AH's create and its get_av
    become one call of our HELPER (from HELPER_FILE, put before FUNCTION),
    which takes the create's first KEEP_ARGS arguments and the AV"""

    def __init__(self, file, function, helper_file, helper, keep_args):
        self.file, self.function = file, function
        self.helper_file, self.helper = helper_file, helper
        self.keep_args = keep_args


# 1: the RC DEVX connect (the RC endpoint and the tag-matching command QP)
FIX_RC = Fix("src/uct/ib/rc/accel/rc_mlx5_devx.c",
             "uct_rc_mlx5_iface_common_devx_connect_qp",
             "ucx/rc_mlx5_devx_connect_av.c", "uct_rc_mlx5_devx_connect_av", 2)
# 2: the UD address vector (the UD endpoint's, UCP's wireup over UD)
FIX_UD = Fix("src/uct/ib/ud/accel/ud_mlx5_common.c",
             "uct_ud_mlx5_iface_get_av",
             "ucx/ud_mlx5_transient_av.c", "uct_ud_mlx5_iface_av", 3)


def apply_fix(tree, ours, fix):
    path = os.path.join(tree, fix.file)
    text = read(path)
    if fix.helper in text:
        raise ApplyError("%s: already has %s()" % (path, fix.helper))
    fn = Function(text, fix.function, path)
    where = "%s()" % fix.function

    # status = uct_ib_iface_create_ah(iface, ah_attr, usage, &ah);
    c_start, c_end, c_args, c_lhs, c_indent = find_call(
        text, fn.body_open, fn.body_close, CACHED_AH, path, where)
    if len(c_args) != 4 or not c_args[3].startswith("&"):
        raise ApplyError("%s: %s(%s) in %s: expected 4 arguments, the last "
                         "&AH" % (path, CACHED_AH, ", ".join(c_args), where))
    ah_var = c_args[3][1:]
    # uct_ib_mlx5_get_av(ah, &av);
    g_start, g_end, g_args, g_lhs, _ = find_call(
        text, c_end, fn.body_close, GET_AV, path, where)
    if len(g_args) != 2 or g_args[0] != ah_var or g_lhs:
        raise ApplyError("%s: %s(%s) in %s: expected (%s, &AV)" %
                         (path, GET_AV, ", ".join(g_args), where, ah_var))
    av_arg = g_args[1]
    # a blank line on each side of it: one of them goes too
    if text[g_end:g_end + 1] == "\n" and text[g_start - 2:g_start] == "\n\n":
        g_end += 1

    call = format_call(c_indent, c_lhs, fix.helper,
                       c_args[:fix.keep_args] + [av_arg])
    # the get_av statement goes
    new_body = (text[fn.body_open:c_start] + call +
                text[c_end:g_start] + text[g_end:fn.body_close + 1])

    # the AH variable, if nothing else uses it now, is no longer declared
    decl = re.compile(r"^[ \t]*struct ibv_ah\s*\*\s*%s;\n" % re.escape(ah_var),
                      re.M)
    without_decl = decl.sub("", new_body, count=1)
    if ((len(decl.findall(new_body)) == 1) and
            re.search(r"\b%s\b" % re.escape(ah_var), without_decl) is None):
        new_body = without_decl

    helper = read(os.path.join(ours, fix.helper_file))
    text = (text[:fn.head] + helper + "\n" + text[fn.head:fn.body_open] +
            new_body + text[fn.body_close + 1:])
    write(path, text)


# 3: the tag-matching command QP's own address. UCX 1.13.1 fills its
# ah_attr field by field (global, the iface's GID, the port's LID, the
# port); on RoCE that is a LID of 0 where RoCEv2 wants a UDP source port
# (the connect asserts it in a build with assertions) and GID index 0, a
# RoCEv1 GID. The fields become one call of UCX's own
# uct_ib_iface_fill_ah_attr_from_gid_lid() with the iface's GID index.
TM_CMD_QP_FILE = "src/uct/ib/rc/accel/rc_mlx5_common.c"
TM_CMD_QP_FUNCTION = "uct_rc_mlx5_devx_create_cmd_qp"
TM_CMD_QP_FIELDS = ("is_global", "grh.dgid", "dlid", "port_num")
FILL_AH_ATTR = "uct_ib_iface_fill_ah_attr_from_gid_lid"
GID_SUFFIX = ".gid_info.gid"


def apply_fix_tm(tree):
    path = os.path.join(tree, TM_CMD_QP_FILE)
    text = read(path)
    fn = Function(text, TM_CMD_QP_FUNCTION, path)
    where = "%s()" % TM_CMD_QP_FUNCTION
    body = text[fn.body_open:fn.body_close]
    if FILL_AH_ATTR in body:
        raise ApplyError("%s: %s already calls %s()" % (path, where,
                                                        FILL_AH_ATTR))

    # the run of "ah_attr.FIELD = VALUE;" statements, each field once
    stmt = r"([ \t]*)(\w+)\.(%s)\s*=\s*([^;]+);\n" % "|".join(
        re.escape(f) for f in TM_CMD_QP_FIELDS)
    run = re.search(r"(?:^%s){%d}" % (stmt, len(TM_CMD_QP_FIELDS)), body,
                    re.M)
    if run is None:
        raise ApplyError("%s: no run of the %d statements setting %s in %s" %
                         (path, len(TM_CMD_QP_FIELDS),
                          ", ".join(TM_CMD_QP_FIELDS), where))
    values, var, indent = {}, None, None
    for m in re.finditer(stmt, run.group(0)):
        indent = indent if indent is not None else m.group(1)
        if var not in (None, m.group(2)):
            raise ApplyError("%s: the statements in %s set two variables "
                             "(%s, %s)" % (path, where, var, m.group(2)))
        var = m.group(2)
        values[m.group(3)] = " ".join(m.group(4).split())
    if sorted(values) != sorted(TM_CMD_QP_FIELDS):
        raise ApplyError("%s: %s sets %s, expected each of %s once" %
                         (path, where, ", ".join(sorted(values)),
                          ", ".join(TM_CMD_QP_FIELDS)))
    gid = values["grh.dgid"]
    if not gid.endswith(GID_SUFFIX):
        raise ApplyError("%s: %s: the GID is %s, expected an iface's %s" %
                         (path, where, gid, GID_SUFFIX))
    ib_iface = gid[:-len(GID_SUFFIX)]

    call = (indent + "/* the iface's own address, as a peer's would be "
            "filled: on RoCE its\n" +
            indent + " * GID index and a RoCEv2 UDP source port */\n" +
            format_call(indent, "", FILL_AH_ATTR,
                        ["&" + ib_iface, values["dlid"], "&" + gid,
                         ib_iface + ".gid_info.gid_index", "0",
                         "&" + var]))
    start = fn.body_open + run.start()
    end = fn.body_open + run.end()
    write(path, text[:start] + call + text[end:])


GTEST_MAKEFILE = "test/gtest/Makefile.am"
GTEST_ANCHOR = "uct/ib/test_devx.cc"  # our tests are DevX tests too
OUR_TESTS = ["uct/ib/test_rc_mlx5_transient_ah.cc"]


def sources_block(text, var, path):
    """The lines of the first 'VAR = \\' ... assignment: (start, end)"""
    m = re.search(r"^%s\s*\+?=[^\n]*\n" % re.escape(var), text, re.M)
    if m is None:
        raise ApplyError("%s: no %s assignment" % (path, var))
    end = m.start()
    while True:
        nl = text.index("\n", end)
        line = text[end:nl]
        end = nl + 1
        if not line.rstrip().endswith("\\"):
            return m.start(), end


def apply_tests(tree, ours):
    for rel in OUR_TESTS:
        src = os.path.join(ours, "ucx/test/gtest", rel)
        dst = os.path.join(tree, "test/gtest", rel)
        if os.path.exists(dst):
            raise ApplyError("%s exists already" % dst)
        shutil.copyfile(src, dst)

    path = os.path.join(tree, GTEST_MAKEFILE)
    text = read(path)
    anchor = re.compile(r"^(\t%s)\n" % re.escape(GTEST_ANCHOR), re.M)
    found = anchor.findall(text)
    if len(found) != 1:
        raise ApplyError("%s: expected one line '\\t%s' ending a list, found "
                         "%d" % (path, GTEST_ANCHOR, len(found)))
    entries = "".join(" \\\n\t%s" % rel for rel in OUR_TESTS)
    text = anchor.sub(lambda m: m.group(1) + entries + "\n", text, count=1)
    write(path, text)


TRIM_KEEP = re.compile(r"^(common|uct)/")
TRIM_DROP = re.compile(r"^uct/tcp/")


def apply_trim_gtest(tree):
    path = os.path.join(tree, GTEST_MAKEFILE)
    text = read(path)
    start, end = sources_block(text, "gtest_SOURCES", path)
    block = text[start:end]
    entries = [e for e in block.replace("\\\n", " ").split()[2:]]
    kept = [e for e in entries if TRIM_KEEP.match(e) and not TRIM_DROP.match(e)]
    if not any(e.startswith("uct/") for e in kept):
        raise ApplyError("%s: gtest_SOURCES has no uct/ entry" % path)
    new_block = "gtest_SOURCES = \\\n" + " \\\n".join(
        "\t" + e for e in kept) + "\n"
    write(path, text[:start] + new_block + text[end:])


def is_linked_elf(data):
    """An ELF executable or shared object (not an object file: ET_REL)"""
    return (data[:4] == b"\x7fELF" and len(data) > 18 and
            int.from_bytes(data[16:18], "little") in (2, 3))


def rename_build(top, old, new):
    """Linked files (libraries, programs, and their .la) are removed, so
    make links them again in the new tree: their RUNPATHs name the old one"""
    old_b, new_b = old.encode(), new.encode()
    changed = removed = 0
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                if old in target:
                    os.unlink(path)
                    os.symlink(target.replace(old, new), path)
                    changed += 1
                continue
            if not stat.S_ISREG(st.st_mode) or name.endswith(".o"):
                continue
            with open(path, "rb") as f:
                data = f.read()
            if name.endswith((".la", ".lai")) or is_linked_elf(data):
                os.unlink(path)
                removed += 1
                continue
            if old_b not in data or b"\0" in data:
                continue  # binaries keep their debug paths
            with open(path, "wb") as f:
                f.write(data.replace(old_b, new_b))
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            changed += 1
    print("rename-build: %d files and links under %s now name %s; %d linked "
          "files removed, to be linked again" % (changed, top, new, removed))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tree")
    p.add_argument("--ours")
    p.add_argument("--part", choices=["fix", "fix-ud", "fix-tm", "tests",
                                      "trim-gtest"])
    p.add_argument("--rename-build")
    p.add_argument("--from", dest="old")
    p.add_argument("--to", dest="new")
    a = p.parse_args()
    try:
        if a.rename_build:
            if not (a.old and a.new):
                raise ApplyError("--rename-build needs --from and --to")
            rename_build(a.rename_build, a.old, a.new)
        elif a.part == "fix":
            apply_fix(a.tree, a.ours, FIX_RC)
        elif a.part == "fix-ud":
            apply_fix(a.tree, a.ours, FIX_UD)
        elif a.part == "fix-tm":
            apply_fix_tm(a.tree)
        elif a.part == "tests":
            apply_tests(a.tree, a.ours)
        elif a.part == "trim-gtest":
            apply_trim_gtest(a.tree)
        else:
            raise ApplyError("nothing to do: give --part or --rename-build")
    except (ApplyError, OSError, ValueError) as e:
        print("apply.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
