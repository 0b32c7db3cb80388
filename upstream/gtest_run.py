#!/usr/bin/env python3
"""UCX's own gtest on the emulated device, stock and patched (issue 23).

  gtest_run.py --build stock=DIR --build patched=DIR --emu-prefix PREFIX
               --out OUTDIR [--suites rc_mlx5,ib,ud_mlx5,transient_ah,tag,dc_mlx5]

Each build's test/gtest/gtest runs through the drop-in preload library of
PREFIX (LD_PRELOAD), one process per test class ("chunk"; one per test for
our new tests), each process a host (host0) of a fabric of its own that is
destroyed after it. A process that dies leaves its running test "crashed"
and the rest of the chunk runs in a new process. Every process is bounded:
UCX's gtest watchdog (-t) and a timeout of its own, after which its whole
process group is killed.

Writes into OUTDIR:
  <build>/<suite>.tsv   one line per test: name, passed|failed|skipped|crashed,
                        milliseconds, the reason (UCX's skip reason, the
                        first line of the failure, how the process died)
  <build>/logs/         every process's output
  <build>/loaded.txt    the UCX libraries a run of that build loaded
                        (LD_DEBUG=files), all from that build's tree
  comparison.tsv        each test's stock and patched result
  differences.txt       the tests whose pass/fail differs (after a rerun of
                        each alone), or "none"
  not-passed.txt        every failed, crashed or skipped test, its reason and
                        its class (not-passed-classes.tsv beside this script:
                        ucx, hardware, emulator or bug)
  classes.txt           how many results of each class did not pass
  summary.txt           per suite:
    <suite>: stock P passed F failed S skipped, patched P passed F failed S skipped
Exit status 0 if the pass sets are identical but for our new tests, our
new tests fail on stock and pass patched (where they are not skipped), and
every test that does not pass has a class.
"""

import argparse
import collections
import os
import re
import signal
import subprocess
import sys
import time

SUITES = collections.OrderedDict([
    ("rc_mlx5", "rc_mlx5/*-rc_mlx5/test_rc_mlx5_transient_ah.*"),
    ("ib", "ib/*:test_uct_ib_utils.*:test_uct_ib_sl_utils.*:"
           "rc_verbs/test_devx.*:ud_verbs/test_devx.*"),
    ("ud_mlx5", "ud_mlx5/*"),
    ("transient_ah", "rc_mlx5/test_rc_mlx5_transient_ah.*"),
    ("tag", "rc_mlx5/test_tag*"),   # part of rc_mlx5, on its own for speed
    ("dc_mlx5", "dc_mlx5/*"),       # DC, which the emulated device has too
])
# run only when asked: tag is part of rc_mlx5, dc_mlx5 takes long
ON_REQUEST = ("tag", "dc_mlx5")
NEW_SUITE = "transient_ah"

RUN_RE = re.compile(r"^\[ RUN      \] (\S+)")
OK_RE = re.compile(r"^\[       OK \] (\S+) \((\d+) ms\)")
FAILED_RE = re.compile(r"^\[  FAILED  \] ([^,\s]+)(?:, where .*?)? \((\d+) ms\)")
SKIP_RE = re.compile(r"^\[     SKIP \] \((.*)\)\s*$")


CLASSES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "not-passed-classes.tsv")


def load_classes():
    """(regex, class, why) rows of not-passed-classes.tsv, in order"""
    rows = []
    with open(CLASSES_FILE) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            pattern, cls, why = line.rstrip("\n").split("\t", 2)
            rows.append((re.compile(pattern), cls, why))
    return rows


def classify(rows, build, test, status, reason):
    """The class of a test that did not pass, and why; matched against
    "<build> <status> <test> <reason>" """
    key = "%s %s %s %s" % (build, status, test, reason)
    for pattern, cls, why in rows:
        if pattern.search(key):
            return cls, why
    return "unclassified", ""


def log(msg):
    print("[gtest %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


class Runner:
    def __init__(self, args, name, build):
        self.args = args
        self.name = name
        self.build = build
        self.gtest = os.path.join(build, "test/gtest/gtest")
        self.out = os.path.join(args.out, name)
        self.logs = os.path.join(self.out, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.seq = 0
        self.uid = os.getuid()
        self.emu = os.path.join(args.emu_prefix, "bin/ucx_emu")

    def env(self, fabric, extra=None):
        env = dict(os.environ)
        for k in list(env):
            if k.startswith(("UCX_", "GTEST_")):
                del env[k]
        env.update({
            "LD_PRELOAD": os.path.join(self.args.emu_prefix,
                                       "lib/libucx_mlx5_emu_preload.so"),
            "UCX_IB_EMU_FABRIC": fabric,
            "UCX_IB_EMU_HOST": "host0",
            "UCX_EMU_TOOL": self.emu,
            "UCX_WARN_UNUSED_ENV_VARS": "n",
            "UCX_HANDLE_ERRORS": "bt",   # never "freeze" (the Makefile's)
            "UCX_LOG_LEVEL": "warn",
            "UCX_LOG_PRINT_ENABLE": "y",
        })
        env.update(extra or {})
        return env

    def fabric_path(self, fabric):
        return "/dev/shm/ucx-emu.%d.%s" % (self.uid, fabric)

    def reap_fabric(self, fabric):
        if os.path.exists(self.fabric_path(fabric)):
            subprocess.run(["timeout", "30", self.emu, "-f", fabric, "destroy",
                            "--force"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if os.path.exists(self.fabric_path(fabric)):
            try:
                os.unlink(self.fabric_path(fabric))
            except OSError as e:
                log("cannot remove %s: %s" % (self.fabric_path(fabric), e))

    def run(self, argv, limit, extra_env=None, tag="run"):
        """Run the gtest binary with argv in a fabric of its own, bounded;
        (exit status or -signal or 'timeout', output)"""
        self.seq += 1
        fabric = "upstream-gt-%d-%s-%d" % (os.getpid(), self.name, self.seq)
        logfile = os.path.join(self.logs, "%s-%04d.log" % (tag, self.seq))
        cmd = [self.gtest] + argv
        with open(logfile, "w") as f:
            f.write("# %s\n# fabric %s\n" % (" ".join(cmd), fabric))
            f.flush()
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL,
                                 env=self.env(fabric, extra_env),
                                 cwd=self.out, start_new_session=True)
            try:
                status = p.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                status = "timeout"
            finally:
                # the whole group: the gtest process and whatever it started
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    try:
                        os.killpg(p.pid, sig)
                    except ProcessLookupError:
                        break
                    time.sleep(0.5 if sig == signal.SIGTERM else 0)
                p.wait()
        self.reap_fabric(fabric)
        with open(logfile, errors="replace") as f:
            return status, f.read(), logfile

    def list_tests(self, pattern):
        status, output, logfile = self.run(["--gtest_list_tests",
                                            "--gtest_filter=" + pattern], 300,
                                           tag="list")
        if status != 0:
            raise RuntimeError("%s: --gtest_list_tests --gtest_filter=%s "
                               "failed (%s), see %s" %
                               (self.name, pattern, status, logfile))
        tests, group = [], None
        for line in output.splitlines():
            if line.startswith("#") or line.startswith("["):
                continue
            if not line.startswith(" "):
                group = line.split()[0] if line.strip() else None
            elif group is not None:
                tests.append(group + line.split()[0])
        return tests

    def run_chunk(self, tests, results, extra_env=None):
        """Run tests in processes until each has a result"""
        todo = list(tests)
        while todo:
            argv = ["-t", str(self.args.watchdog),
                    "--gtest_filter=" + ":".join(todo)]
            limit = self.args.watchdog * 2 + 60 + 30 * len(todo)
            status, output, logfile = self.run(argv, limit, extra_env)
            current, skip_reason, failure, seen = None, None, [], set()
            for line in output.splitlines():
                m = RUN_RE.match(line)
                if m:
                    current, skip_reason, failure = m.group(1), None, []
                    continue
                m = SKIP_RE.match(line)
                if m and current:
                    skip_reason = m.group(1)
                    continue
                m = OK_RE.match(line)
                if m and m.group(1) == current:
                    results[current] = (
                        ("skipped", skip_reason) if skip_reason is not None
                        else ("passed", ""), int(m.group(2)))
                    seen.add(current)
                    current = None
                    continue
                m = FAILED_RE.match(line)
                if m and m.group(1) == current:
                    reason = next((l.strip() for l in failure
                                   if l.strip() and "Failure" not in l),
                                  "failed")
                    results[current] = (("failed", reason[:300]),
                                        int(m.group(2)))
                    seen.add(current)
                    current = None
                    continue
                if current:
                    failure.append(line)
            if current is not None:
                # the process died in this test: what it said before the
                # backtrace (UCX's handler prints it after "Caught signal")
                said = [l.strip() for l in failure if l.strip() and
                        not re.match(r"^\s*\d+\s+(0x|/|\?\?|\S+\()", l) and
                        not l.lstrip().startswith("=====")]
                key = [l for l in said if re.search(
                    r"Caught signal|[Aa]ssert|Fatal|rror|Failure|[Tt]ime(d)? ?out|"
                    r"abort|failed", l)]
                last = (key[:2] + key[-1:]) if key else said[-3:]
                how = ("timed out after %d s" % limit if status == "timeout"
                       else "exit %s" % status if isinstance(status, int) and status >= 0
                       else "killed by signal %d" % -status)
                results[current] = (("crashed", "%s; %s" % (
                    how, " | ".join(l.strip() for l in last)[:300])), 0)
                seen.add(current)
            elif status != 0 and not seen.issuperset(todo):
                # died between tests: the rest cannot be told apart
                pass
            rest = [t for t in todo if t not in seen and t not in results]
            if rest and len(rest) == len(todo):
                for t in rest:
                    results[t] = (("crashed", "the process (%s) ran none of "
                                   "it, see %s" % (status, logfile)), 0)
                rest = []
            todo = rest

    def chunks(self, suite, tests):
        if suite == NEW_SUITE:
            return [[t] for t in tests]
        by_class = collections.OrderedDict()
        for t in tests:
            by_class.setdefault(t.split(".")[0], []).append(t)
        return list(by_class.values())

    def write_suite(self, suite, tests, results):
        with open(os.path.join(self.out, suite + ".tsv"), "w") as f:
            for t in tests:
                (status, reason), ms = results.get(t, (("crashed", "no result"), 0))
                f.write("%s\t%s\t%d\t%s\n" % (t, status, ms, reason))
        return collections.OrderedDict(
            (t, results.get(t, (("crashed", "no result"), 0))) for t in tests)


    def loaded_libraries(self):
        """The UCX libraries (and modules) one process of this build loads,
        from LD_DEBUG=files: (UCX's, the emulator's, UCX's from elsewhere)"""
        status, output, logfile = self.run(
            ["--gtest_filter=ib/test_ib_md.aligned/0"], 300,
            {"LD_DEBUG": "files"}, tag="ld-debug")
        lib = r"(/\S*/lib(?:ucs|uct|ucp|ucm|ucx)\S*\.so[.0-9]*)"
        libs = sorted(set(re.findall(r"calling init: " + lib, output) +
                          re.findall(r"file=" + lib + r"\s+\[\d+\];", output)))
        emu = os.path.realpath(self.args.emu_prefix) + "/"
        build = os.path.realpath(self.build) + "/"
        ours = [l for l in libs if os.path.realpath(l).startswith(emu)]
        ucx = [l for l in libs if os.path.realpath(l).startswith(build)]
        other = [l for l in libs if l not in ours and l not in ucx]
        with open(os.path.join(self.out, "loaded.txt"), "w") as f:
            f.write("# %s, LD_DEBUG=files (%s)\n" % (self.name, logfile))
            for l in ucx:
                f.write("ucx      %s\n" % l)
            for l in ours:
                f.write("emulator %s\n" % l)
            for l in other:
                f.write("ELSEWHERE %s\n" % l)
        return ucx, ours, other


def run_suite(runners, suite, pattern):
    """Each chunk on every build in turn (stock, then patched), so that both
    builds run each test under the same load; each build's results"""
    tests = [r.list_tests(pattern) for r in runners]
    results = [collections.OrderedDict() for r in runners]
    times = [0.0 for r in runners]
    chunks = [r.chunks(suite, t) for r, t in zip(runners, tests)]
    for i in range(max(len(c) for c in chunks)):
        for k, r in enumerate(runners):
            if i < len(chunks[k]):
                t0 = time.time()
                r.run_chunk(chunks[k][i], results[k])
                times[k] += time.time() - t0
        for k, r in enumerate(runners):
            r.write_suite(suite, tests[k], results[k])  # as it goes
    for k, r in enumerate(runners):
        log("%s %s: %d tests in %d processes, %.0f s" %
            (r.name, suite, len(tests[k]), len(chunks[k]), times[k]))
    return [r.write_suite(suite, tests[k], results[k])
            for k, r in enumerate(runners)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", action="append", required=True,
                   help="NAME=BUILD_DIR (stock first, then patched)")
    p.add_argument("--emu-prefix", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--suites", default=",".join(s for s in SUITES
                                               if s not in ON_REQUEST))
    p.add_argument("--watchdog", type=int, default=120)
    args = p.parse_args()

    builds = [b.split("=", 1) for b in args.build]
    suites = [s for s in args.suites.split(",") if s]
    for s in suites:
        if s not in SUITES:
            print("gtest_run.py: unknown suite '%s' (known: %s)" %
                  (s, ", ".join(SUITES)), file=sys.stderr)
            return 1
    os.makedirs(args.out, exist_ok=True)
    runners = [Runner(args, name, build) for name, build in builds]
    ok = True

    for r in runners:
        ucx, ours, other = r.loaded_libraries()
        log("%s loads %d UCX libraries and modules from %s, and the "
            "emulator's %s" % (r.name, len(ucx), r.build,
                               ", ".join(os.path.basename(l) for l in ours)))
        if len(ucx) < 5 or other:
            print("gtest_run.py: %s: UCX libraries loaded from outside its "
                  "build tree: %s (and %d from it; see %s/loaded.txt)" %
                  (r.name, ", ".join(other) or "none", len(ucx), r.out),
                  file=sys.stderr)
            ok = False

    res = {}
    for s in suites:
        try:
            for r, v in zip(runners, run_suite(runners, s, SUITES[s])):
                res[(r.name, s)] = v
        except RuntimeError as e:
            print("gtest_run.py: %s" % e, file=sys.stderr)
            for r in runners:
                res[(r.name, s)] = collections.OrderedDict()
            ok = False

    stock, patched = runners[0], runners[-1]
    passed = lambda v: v[0][0] == "passed"
    classes = load_classes()
    class_counts = collections.Counter()
    diffs, summary, not_passed = [], [], []
    with open(os.path.join(args.out, "comparison.tsv"), "w") as cmp_f:
        cmp_f.write("suite\ttest\t%s\t%s\n" % (stock.name, patched.name))
        for s in suites:
            a, b = res[(stock.name, s)], res[(patched.name, s)]
            names = list(a) + [t for t in b if t not in a]
            for t in names:
                va = a.get(t, (("missing", ""), 0))
                vb = b.get(t, (("missing", ""), 0))
                if s != NEW_SUITE and passed(va) != passed(vb):
                    # once more, each alone, to tell a load-dependent result
                    # from a difference the patch makes
                    ra, rb = {}, {}
                    stock.run_chunk([t], ra)
                    patched.run_chunk([t], rb)
                    va2, vb2 = ra.get(t, va), rb.get(t, vb)
                    note = "rerun alone: %s %s, %s %s" % (
                        stock.name, va2[0][0], patched.name, vb2[0][0])
                    # a difference the patch makes holds on the rerun; a
                    # result that flips is the load's
                    fixed = (passed(vb) and classify(
                        classes, stock.name, t, va[0][0], va[0][1])[0] ==
                        "bug")
                    if ((passed(va2) != passed(vb2)) and
                            (passed(va2) == passed(va)) and
                            (passed(vb2) == passed(vb))):
                        diffs.append("%s\t%s\t%s\t%s\t%s%s" % (
                            s, t, va[0][0], vb[0][0], note,
                            " (fixed by the series)" if fixed else ""))
                    else:
                        diffs.append("%s\t%s\t%s\t%s\t%s (load-dependent, "
                                     "not the patch)" % (
                                         s, t, va[0][0], vb[0][0], note))
                cmp_f.write("%s\t%s\t%s\t%s\n" % (s, t, va[0][0], vb[0][0]))
                for name, v in ((stock.name, va), (patched.name, vb)):
                    if v[0][0] != "passed":
                        cls, why = classify(classes, name, t, v[0][0],
                                            v[0][1])
                        class_counts[cls] += 1
                        not_passed.append("%s\t%s\t%s\t%s\t%s\t%s\t%s" % (
                            s, name, t, v[0][0], v[0][1], cls, why))
            counts = []
            for name, r in ((stock.name, a), (patched.name, b)):
                c = collections.Counter(v[0][0] for v in r.values())
                counts.append("%s %d passed %d failed %d skipped" % (
                    name, c["passed"], c["failed"] + c["crashed"],
                    c["skipped"]))
                if c["crashed"]:
                    counts[-1] += " (%d of the failed crashed)" % c["crashed"]
            summary.append("%s: %s" % (s, ", ".join(counts)))
            if s == NEW_SUITE:
                for t in names:
                    sa = a.get(t, (("missing", ""), 0))[0][0]
                    sb = b.get(t, (("missing", ""), 0))[0][0]
                    if sb == "skipped" and sa == "skipped":
                        continue
                    if not (sa in ("failed", "crashed") and sb == "passed"):
                        print("gtest_run.py: %s: %s %s, %s %s (expected: fails "
                              "on stock, passes patched)" % (
                                  t, stock.name, sa, patched.name, sb),
                              file=sys.stderr)
                        ok = False

    # a difference the series is for (the stock result's class is "bug")
    # is what the comparison shows, not a failure of it
    real_diffs = [d for d in diffs if "load-dependent" not in d and
                  "fixed by the series" not in d]
    with open(os.path.join(args.out, "differences.txt"), "w") as f:
        f.write("\n".join(diffs) + "\n" if diffs else "none\n")
    with open(os.path.join(args.out, "not-passed.txt"), "w") as f:
        f.write("suite\tbuild\ttest\tstatus\treason\tclass\twhy\n")
        f.write("\n".join(not_passed) + ("\n" if not_passed else ""))
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write("\n".join(summary) + "\n")
    by_class = "not passed, by class (results of both builds): %s" % (
        ", ".join("%s %d" % kv for kv in sorted(class_counts.items())) or
        "none")
    with open(os.path.join(args.out, "classes.txt"), "w") as f:
        f.write(by_class + "\n")
    log(by_class)
    if class_counts["unclassified"]:
        print("gtest_run.py: %d results of tests that did not pass have no "
              "class in %s (see the 'unclassified' rows of %s)" % (
                  class_counts["unclassified"], CLASSES_FILE,
                  os.path.join(args.out, "not-passed.txt")), file=sys.stderr)
        ok = False
    if real_diffs:
        print("gtest_run.py: %d tests pass on one build only (%s)" %
              (len(real_diffs), os.path.join(args.out, "differences.txt")),
              file=sys.stderr)
        ok = False

    # nothing left behind
    left = [n for n in os.listdir("/dev/shm")
            if n.startswith("ucx-emu.%d.upstream-gt-%d-" % (os.getuid(),
                                                            os.getpid()))]
    if left:
        print("gtest_run.py: fabrics left in /dev/shm: %s" % ", ".join(left),
              file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
