#!/usr/bin/env bash
# Checks PayStorm's documentation in two steps; the first is fast and can run alone.
#
# 1. The manual's text (README.md, CONTRIBUTING.md, Benchmarks/README.md, docs/*.md), with perl alone:
#    - Links: every relative link, inline `[text](target)` or a definition `[id]: target`, must name a file or
#      folder that exists, relative to the page; `#anchor` on a Markdown page must be one of its headings
#      (GitHub's slugs). Links with a scheme (https:, mailto:) are not followed.
#    - History (README.md and docs/*.md only): no ISO date (YYYY-MM-DD) and no "seed N" phrase, that is the
#      word seed or seeds followed by a number (`seed 7`, `seeds 44`, `seed: 7`, `seed=7`, `--seed 7`), case
#      insensitive. A run's date and seed are history: they go to commit messages and test names, and measured
#      figures with their dates to Benchmarks/README.md, which is not checked for history.
#    Text inside code (fenced blocks and `inline code`) is exempt from both rules: an example command such as
#    `paystorm replay --seed 7` or a row label that the program prints is written as code. Each finding is
#    one line, FILE:LINE: what, and the step exits 1.
# 2. The DocC documentation of every Swift library module, which fails on any DocC warning (a broken
#    ``symbol`` link, a documented parameter that does not exist, ...). Modules with a Docs.docc catalog
#    are converted with it, the others from their symbol graphs alone. Uses only the toolchain's `docc`.
#
# Usage: scripts/check-docs.sh [--links-only] [swift package options]
#   --links-only  step 1 only (no build, about a second).
#   The options (for example `-Xswiftc -warnings-as-errors`) must match the last build's, so that
#   `swift package dump-symbol-graph` reuses it instead of building again.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

# Step 1: links and wording of the Markdown manual.
check_manual() {
    local pages=(README.md CONTRIBUTING.md Benchmarks/README.md)
    local page
    for page in docs/*.md; do [[ -e "$page" ]] && pages+=("$page"); done
    perl -e "$manual_checker" "${pages[@]}"
}

manual_checker='
use strict; use warnings;
my %slugs;      # page path => { slug => 1 }
my $failed = 0;
sub fail { my ($file, $line, $what) = @_; print STDERR "$file:$line: $what\n"; $failed = 1; }
# The page with code taken out: fenced blocks become empty lines, code spans spaces (so columns stay put).
sub prose_lines {
    my ($file) = @_;
    open(my $fh, "<:encoding(UTF-8)", $file) or do { fail($file, 0, "cannot read: $!"); return (); };
    my @out; my $fence = "";
    while (my $line = <$fh>) {
        chomp $line;
        if ($fence eq "" && $line =~ /^ {0,3}(`{3,}|~{3,})/) { $fence = $1; push @out, ""; next; }
        if ($fence ne "") {
            my $f = substr($fence, 0, 1);
            $fence = "" if $line =~ /^ {0,3}\Q$f\E{${\ length $fence},}\s*$/;
            push @out, ""; next;
        }
        $line =~ s/(`+)(.+?)(?<!`)\1(?!`)/" " x length($&)/ge;
        push @out, $line;
    }
    close $fh;
    return @out;
}
sub slugs_of {
    my ($file) = @_;
    return $slugs{$file} if $slugs{$file};
    my %seen; my %set;
    open(my $fh, "<:encoding(UTF-8)", $file) or return {};
    my $fence = 0;
    while (my $line = <$fh>) {
        $fence = !$fence if $line =~ /^ {0,3}(```|~~~)/;
        next if $fence;
        next unless $line =~ /^#{1,6}\s+(.*?)\s*#*\s*$/;
        my $slug = lc $1;
        $slug =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;
        $slug =~ s/[^\w\- ]//g;
        $slug =~ s/ /-/g;
        my $n = $seen{$slug}++;
        $set{$n ? "$slug-$n" : $slug} = 1;
    }
    close $fh;
    return $slugs{$file} = \%set;
}
sub check_target {
    my ($file, $line, $target) = @_;
    $target =~ s/^<(.*)>$/$1/;
    return if $target =~ m{^[A-Za-z][A-Za-z0-9+.-]*:};
    my ($path, $anchor) = split /#/, $target, 2;
    $path =~ s/\?.*//;
    (my $dir = $file) =~ s{[^/]*$}{};
    my $resolved = $path eq "" ? $file : "$dir$path";
    if ($path ne "" && !-e $resolved) { fail($file, $line, "broken link: $target ($resolved does not exist)"); return; }
    return unless defined $anchor && $anchor ne "" && $resolved =~ /\.md$/ && -f $resolved;
    fail($file, $line, "broken link: $target (no heading #$anchor in $resolved)") unless slugs_of($resolved)->{$anchor};
}
for my $file (@ARGV) {
    my $history = ($file eq "README.md" || $file =~ m{^docs/});
    my @lines = prose_lines($file);
    for my $i (0 .. $#lines) {
        my $text = $lines[$i]; my $n = $i + 1;
        while ($text =~ /\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)/g) { check_target($file, $n, $1); }
        check_target($file, $n, $1) if $text =~ /^ {0,3}\[[^\]]+\]:\s+(\S+)/;
        next unless $history;
        while ($text =~ /\b(\d{4}-\d{2}-\d{2})\b/g) {
            fail($file, $n, "ISO date \"$1\": history goes to commit messages, figures to Benchmarks/README.md");
        }
        while ($text =~ /\b(seeds?\s*[:=#]?\s*\d+)/gi) {
            fail($file, $n, "\"$1\" names a past run'"'"'s seed: say what is true now, or write the command as code");
        }
    }
}
exit $failed;
'

links_only=false
if [[ "${1:-}" == "--links-only" ]]; then
    links_only=true
    shift
fi
check_manual || { echo "check-docs.sh: the manual has broken links or dated text (above)" >&2; exit 1; }
echo "-- manual: links and wording ok"
$links_only && exit 0

# Step 2: DocC.
graphs="$(swift package "$@" dump-symbol-graph | sed -n 's/^Files written to //p')"
[[ -d "$graphs" ]] || { echo "check-docs.sh: swift package dump-symbol-graph wrote no symbol graphs" >&2; exit 70; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=()
for source in Sources/*; do
    module="$(basename "$source")"
    # Library modules only: the C targets and the executable have no symbol graph of their own here.
    [[ -f "$graphs/$module.symbols.json" ]] || continue
    # A module may keep its sources in subfolders (PayStorm does), so look below the top level too.
    [[ -n "$(find "$source" -name '*.swift' -print -quit)" ]] || continue
    mkdir -p "$work/$module/graphs"
    # One module per conversion: its own graph and its extensions of other modules' types.
    cp "$graphs/$module.symbols.json" "$work/$module/graphs/"
    cp "$graphs/$module"@*.symbols.json "$work/$module/graphs/" 2>/dev/null || true
    catalog=()
    [[ -d "$source/Docs.docc" ]] && catalog=("$root/$source/Docs.docc")
    echo "-- $module${catalog:+ (Docs.docc)}"
    # From the scratch directory: without a catalog argument docc looks for one in the working directory.
    if ! (cd "$work/$module" && docc convert "${catalog[@]}" --additional-symbol-graph-dir graphs \
        --output-dir out --fallback-display-name "$module" --fallback-bundle-identifier "paystorm.$module" \
        --warnings-as-errors 2>&1 | sed '/^$/d'); then
        failed+=("$module")
    fi
done
if (( ${#failed[@]} )); then
    echo "DocC warnings in: ${failed[*]}" >&2
    exit 1
fi
