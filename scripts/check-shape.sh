#!/usr/bin/env bash
# Checks the shape of PayStorm's Swift sources, as CONTRIBUTING.md states it:
#   - no file under Sources/ over 400 lines;
#   - no function, initializer or subscript over 60 lines (from its first line to its closing brace), except
#     text templates: a function whose body is mostly one multi-line string literal (an HTML page, a JUnit
#     document) reads best whole, and is marked with a `// shape: template` comment on the line above it;
#   - no shell suite under Tests/ runs `swift build` itself: it takes scripts/paystorm-binary.sh's binary, built
#     with CI's flags, so a suite run alone neither lets a warning pass nor rebuilds everything with other flags.
# Each finding is one line, FILE:LINE: what; the script exits 1 if there is any. Uses perl alone.
# Usage: scripts/check-shape.sh [folder ...]   (default: Sources)
set -euo pipefail
cd "$(dirname "$0")/.."
folders=("$@")
[[ ${#folders[@]} -eq 0 ]] && folders=(Sources)
mapfile -t files < <(find "${folders[@]}" -name '*.swift' | sort)
failed=0
perl -e '
use strict; use warnings;
my ($max_file, $max_func) = (400, 60);
my $failed = 0;
for my $file (@ARGV) {
    open my $in, "<", $file or die "$file: $!";
    my @lines = <$in>;
    close $in;
    if (@lines > $max_file) {
        print "$file:1: ", scalar(@lines), " lines (at most $max_file)\n";
        $failed = 1;
    }
    # Braces counted outside string literals and comments; multi-line string literals ("""...""") skipped.
    my @code;
    my $in_multiline = 0;
    for my $line (@lines) {
        my $text = $line;
        if ($in_multiline) {
            if ($text =~ s/^.*?"""//) { $in_multiline = 0 } else { push @code, ""; next }
        }
        $text =~ s/"(?:\\.|[^"\\])*"//g;
        if ($text =~ s/""".*$//) { $in_multiline = 1 }
        $text =~ s{//.*$}{};
        push @code, $text;
    }
    my $head = qr/^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|private|fileprivate|internal|static|class|final|override|mutating|nonmutating|nonisolated|convenience|required|borrowing|consuming)\s+|(?:private|fileprivate)\(set\)\s+)*(func\s+[^\s(<]+|init[?!]?|deinit|subscript)\b/;
    for my $i (0 .. $#code) {
        next unless $code[$i] =~ $head;
        my $name = $1;
        next if $i > 0 && $lines[$i - 1] =~ m{//\s*shape:\s*template};
        my ($depth, $started) = (0, 0);
        my $j = $i;
        for (; $j <= $#code; $j++) {
            my $opens = () = $code[$j] =~ /\{/g;
            my $closes = () = $code[$j] =~ /\}/g;
            $depth += $opens - $closes;
            $started = 1 if $opens;
            last if $started && $depth <= 0;
            last if !$started && $j > $i + 20;   # a requirement in a protocol, no body
        }
        next unless $started;
        my $length = $j - $i + 1;
        if ($length > $max_func) {
            print "$file:", $i + 1, ": $name is $length lines (at most $max_func)\n";
            $failed = 1;
        }
    }
}
exit $failed;
' "${files[@]}" || failed=1
while IFS= read -r found; do
    echo "$found: builds paystorm itself; use PAYSTORM=\"\$(scripts/paystorm-binary.sh)\""
    failed=1
done < <(grep -rnE --include='*.sh' '(^[[:space:]]*|\$\()swift build' Tests || true)
exit "$failed"
