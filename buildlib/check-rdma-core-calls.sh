#!/bin/sh
#
# Fails if any rdma-core function (ibv_*() or mlx5dv_*()) is called in src/
# outside the glue table (src/uct/ib/glue/) and the emulated device
# (src/emu/): everything else must go through uct_ib_glue.
#
# Comments and string/character literals are ignored, and so are member
# calls such as uct_ib_glue->mlx5dv_init_obj(). There are no exceptions:
# not even rdma-core's pure string helpers (ibv_wc_status_str, ...).
#
# Usage: check-rdma-core-calls.sh [source root, default: the repository]
#
set -eu

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}

if [ ! -d "$root/src" ]; then
    echo "check-rdma-core-calls: no src/ directory under $root" >&2
    exit 2
fi

files=$(cd "$root" && find src -type f \
            \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' \
               -o -name '*.hpp' -o -name '*.inl' \) \
            -not -path 'src/uct/ib/glue/*' \
            -not -path 'src/emu/*' | sort)

if [ -z "$files" ]; then
    echo "check-rdma-core-calls: OK (no source files outside the glue)"
    exit 0
fi

cd "$root"
# shellcheck disable=SC2086
echo $files | tr ' ' '\n' | perl -e '
    use strict;
    use warnings;

    my ($nfiles, $offenders) = (0, 0);

    while (my $file = <STDIN>) {
        chomp $file;
        open(my $fh, "<", $file) or die "cannot read $file: $!\n";
        my $text = do { local $/; <$fh> };
        close($fh);
        my @lines = split(/\n/, $text, -1);
        $nfiles++;

        # Blank out comments and literals, keeping every newline so that
        # offsets still map to the original line numbers.
        $text =~ s{ (/\*.*?\*/) | (//[^\n]*) | ("(?:\\.|[^"\\\n])*")
                  | (\x27(?:\\.|[^\x27\\\n])*\x27) }
                  { my $m = $&; $m =~ s/[^\n]/ /g; $m }gsex;

        while ($text =~ m{(->|\.)?\s*\b((?:ibv|mlx5dv)_\w+)\s*\(}g) {
            my ($member, $name, $pos) = ($1, $2, $-[2]);
            next if defined($member);
            my $line = substr($text, 0, $pos) =~ tr/\n//;
            my $src  = $lines[$line];
            $src =~ s/^\s+//;
            print "$file:", $line + 1, ": $name() called outside the glue: $src\n";
            $offenders++;
        }
    }

    if ($offenders) {
        print "check-rdma-core-calls: FAILED: $offenders rdma-core call(s) " .
              "outside src/uct/ib/glue and src/emu; " .
              "call them through uct_ib_glue\n";
        exit 1;
    }
    print "check-rdma-core-calls: OK ($nfiles files outside the glue, " .
          "no direct rdma-core calls)\n";
'
