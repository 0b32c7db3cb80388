#!/bin/bash
#
# Fails if an #include in src/ goes against the layering of the library,
# which runs downhill:
#
#   src/uct/ib/base/         ib/base and the glue only
#   src/uct/ib/mlx5/dv/      ib/base, the glue and dv/ only
#   src/uct/ib/mlx5/*.{h,inl,cc}  the mlx5 common layer: not uct/ib/rc/ nor
#                            an mlx5 transport (mlx5/rc, mlx5/gdaki, mlx5/gga)
#   src/uct/ib/rc/base/      not uct/ib/mlx5/ nor uct/ib/rc/verbs/
#   src/uct/ib/rc/verbs/     not an mlx5 transport (mlx5/rc, gdaki, gga)
#   src/uct/ib/mlx5/rc/      not uct/ib/rc/verbs/
#   src/uct/api/ (installed) uct/api/ and ucs/ only; api/tools/ is the
#                            library's declared interface for its tools
#
# and src/tools/ include only uct/api/, ucs/, the emulator's emu/api/ and
# their own headers. The emulator (src/emu/) has its own rules
# (check-emu-layers.sh).
#
# An include is resolved the way the build does: "x.h" next to the file
# first, then under src/ (the -I of every target); anything else is a
# system header. Each offending include is printed as file:line.
#
# Usage: check-layers.sh [source root, default: the repository]
#
set -eu

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}

if [ ! -d "$root/src" ]; then
    echo "check-layers: no src/ directory under $root" >&2
    exit 2
fi

cd "$root"
find src -type f \( -name '*.c' -o -name '*.cc' -o -name '*.h' -o \
                    -name '*.inl' \) -not -path 'src/emu/*' |
sort | perl -e '
    use strict;
    use warnings;
    use File::Basename qw(dirname);
    use File::Spec;

    # [files the rule applies to, what they must not include, why]
    my $mlx5_tl = qr{^src/uct/ib/mlx5/(rc|gdaki|gga)/};
    my @deny = (
        [qr{^src/uct/ib/base/}, qr{^src/uct/ib/(mlx5|rc)/},
         "ib/base is below every transport"],
        [qr{^src/uct/ib/mlx5/dv/}, qr{^src/uct/ib/(rc/|mlx5/[^/]+$|mlx5/(rc|gdaki|gga)/)},
         "mlx5/dv is below the mlx5 common layer and the transports"],
        [qr{^src/uct/ib/mlx5/[^/]+$}, qr{^src/uct/ib/rc/},
         "the mlx5 common layer must not include rc/"],
        [qr{^src/uct/ib/mlx5/[^/]+$}, $mlx5_tl,
         "the mlx5 common layer must not include an mlx5 transport"],
        [qr{^src/uct/ib/rc/base/}, qr{^src/uct/ib/mlx5/},
         "rc/base must not include mlx5/"],
        [qr{^src/uct/ib/rc/base/}, qr{^src/uct/ib/rc/verbs/},
         "rc/base must not include rc/verbs"],
        [qr{^src/uct/ib/rc/verbs/}, $mlx5_tl,
         "rc/verbs must not include mlx5/rc (or a transport built on it)"],
        [qr{^src/uct/ib/mlx5/rc/}, qr{^src/uct/ib/rc/verbs/},
         "mlx5/rc must not include rc/verbs"],
    );

    # what an installed API header and a tool may include
    my @allow = (
        [qr{^src/uct/api/(?!tools/)}, qr{^src/(uct/api|ucs)/},
         "an installed API header includes only uct/api/ and ucs/"],
        [qr{^src/tools/},
         qr{^src/(uct/api/|ucs/|emu/api/|tools/)},
         "tools include only uct/api/, ucs/ and emu/api/ (a declared " .
         "interface under src/uct/api/ for anything else)"],
    );

    my ($nfiles, $offenders) = (0, 0);

    # The file an include names, relative to the root, or undef for a
    # system header
    sub resolve {
        my ($file, $quoted, $name) = @_;

        if ($quoted) {
            my $local = File::Spec->canonpath(dirname($file) . "/" . $name);
            1 while $local =~ s{[^/]+/\.\./}{};
            return $local if -e $local;
        }
        return "src/$name" if -e "src/$name";
        return "src/$name" if $name =~ m{^(uct|ucs|tools|emu)/};
        return undef;
    }

    while (my $file = <STDIN>) {
        chomp $file;
        open(my $fh, "<", $file) or die "cannot read $file: $!\n";
        $nfiles++;
        while (my $line = <$fh>) {
            next unless $line =~ m{^\s*#\s*include\s*([<"])([^>"]+)[>"]};
            my ($quoted, $name) = ($1 eq q{"}, $2);
            my $target = resolve($file, $quoted, $name);
            next unless defined($target);

            for my $rule (@deny) {
                my ($from, $to, $why) = @$rule;
                if (($file =~ $from) && ($target =~ $to)) {
                    print "$file:$.: includes $name: $why\n";
                    $offenders++;
                }
            }
            for my $rule (@allow) {
                my ($from, $to, $why) = @$rule;
                if (($file =~ $from) && ($target !~ $to)) {
                    print "$file:$.: includes $name: $why\n";
                    $offenders++;
                }
            }
        }
        close($fh);
    }

    if ($offenders) {
        print "check-layers: FAILED: $offenders include(s) against the " .
              "layering\n";
        exit 1;
    }
    print "check-layers: OK ($nfiles files, the layers run downhill)\n";
'
