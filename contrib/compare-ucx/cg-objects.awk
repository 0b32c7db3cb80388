# Reads callgrind output files (--dump-instr=no, one event: Ir) and prints
#   total N             the files' totals lines, summed
#   object PATH N       instructions executed in each object's own code
#   calls PATH FN N     calls from the object EXE (-v exe=PATH) into FN of
#                       object PATH
#   inline PATH N       instructions of EXE's own code whose source is the
#                       file PATH (for code a library's header inlined into
#                       the program; needs the program's debug information)
# A cost line right after calls= is the call's inclusive cost, which is the
# callee's and already counted there, so it is skipped.

function ident(kind, spec,    id, name) {
    # "(12) name" defines id 12; "(12)" refers back to it
    if (match(spec, /^\([0-9]+\)/)) {
        id = substr(spec, 2, RLENGTH - 2)
        name = substr(spec, RLENGTH + 1)
        sub(/^ /, "", name)
        if (name != "") {
            names[kind, id] = name
        }
        return names[kind, id]
    }
    return spec
}

FNR == 1 { ob = ""; cob = ""; skip = 0; fl = ""; file = "" }

/^ob=/  { ob = ident("ob", substr($0, 4)); cob = ""; next }
/^cob=/ { cob = ident("ob", substr($0, 5)); next }
/^fl=/  { fl = ident("fl", substr($0, 4)); file = fl; next }
/^f[ie]=/ { file = ident("fl", substr($0, 4)); next }
/^cf[il]=/ { ident("fl", substr($0, 5)); next }  # a callee's file: its name
/^fn=/  { fn = ident("fn", substr($0, 4)); cob = ""; file = fl; next }
/^cfn=/ { cfn = ident("fn", substr($0, 5)); next }
/^calls=/ {
    split(substr($0, 7), c, " ")
    callee = (cob != "") ? cob : ob
    key = (ob == exe) ? callee SUBSEP cfn : ""
    if (key != "") {
        ncalls[key] += c[1]
    }
    cob = ""
    skip = 1
    next
}
/^totals:/ { total += $2; next }
/^([0-9+*-])/ {
    if (skip) {
        skip = 0
    } else {
        self[ob] += $2
        if (ob == exe) {
            infile[file] += $2
        }
    }
    next
}

END {
    printf "total %.0f\n", total
    for (o in self) {
        printf "object %s %.0f\n", o, self[o]
    }
    for (f in infile) {
        printf "inline %s %.0f\n", f, infile[f]
    }
    for (k in ncalls) {
        split(k, p, SUBSEP)
        printf "calls %s %s %.0f\n", p[1], p[2], ncalls[k]
    }
}
