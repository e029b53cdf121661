#!/usr/bin/perl
# Run by `make distdir` (and so `make dist`, `make disttest`) with the directory being packed:
# puts the licence files (the crate's MIT OR Apache-2.0) and the Rust core's sources in the
# distribution, listed in its MANIFEST, so that the dist's Makefile.PL can build the core with
# cargo where no libmcpool is installed. From the repository, the core is the git-tracked
# files under the paths of scripts/core-files.txt (shared with the Python sdist); from an
# unpacked dist, MANIFEST already lists them and manicopy has copied them.
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Path qw(make_path);
use ExtUtils::Manifest qw(maniread);

my $dist = shift or die "usage: dist-bundle.pl DISTDIR\n";
my $manifest = maniread("$dist/MANIFEST");
if ($manifest->{'mcpool-core/Cargo.toml'}) {
    print "dist-bundle: $dist already carries the Rust core\n";
    exit 0;
}
my $repo = abs_path(dirname(abs_path(__FILE__)) . '/../..');
die "dist-bundle: $repo is not the mcpool repository\n" unless -e "$repo/capi/src/lib.rs";

open my $list, '<', "$repo/scripts/core-files.txt" or die "dist-bundle: scripts/core-files.txt: $!\n";
my @paths = grep { length && !/^#/ } map { s/\s+$//r } <$list>;
close $list;
my @core = grep { length } split /\n/, `git -C '$repo' ls-files -- @paths`;
die "dist-bundle: git ls-files in $repo failed\n" if $? || !grep { $_ eq 'Cargo.toml' } @core;
my %add;
for my $f (@core) {
    my $to = "mcpool-core/$f";
    make_path(dirname("$dist/$to"));
    copy("$repo/$f", "$dist/$to") or die "dist-bundle: copy $f: $!\n";
    $add{$to} = 'Rust core';
}
# The bundled Cargo.toml is the workspace's root, so the core builds on its own wherever the
# dist is unpacked (never as a member of an enclosing workspace).
for my $f ('LICENSE-MIT', 'LICENSE-APACHE') {
    copy("$repo/$f", "$dist/$f") or die "dist-bundle: copy $f: $!\n";
    $add{$f} = 'licence (MIT OR Apache-2.0, as the crate)';
}
copy("$repo/THIRD-PARTY-NOTICES", "$dist/THIRD-PARTY-NOTICES")
    or die "dist-bundle: copy THIRD-PARTY-NOTICES: $!\n";
$add{'THIRD-PARTY-NOTICES'} = 'the licences of the crates compiled into the core';
open my $m, '>>', "$dist/MANIFEST" or die "dist-bundle: $!\n";
print $m map { sprintf "%-40s %s\n", $_, $add{$_} } sort keys %add;
close $m;
printf "dist-bundle: added the licences and the Rust core (%d files) to %s\n", scalar(@core), $dist;
