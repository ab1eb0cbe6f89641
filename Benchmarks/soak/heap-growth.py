#!/usr/bin/env python3
"""Live heap by call site at chosen moments of a heaptrack recording: what grew between them.

heaptrack reports peaks and leaks at exit; a soak's question is what is live at minute 20 that was not at
minute 2. This replays the recording's allocations and frees, snapshots the live bytes of every allocation
site at each moment, and prints the sites whose live bytes grew most between the first and the last moment,
named by their first frames inside the traced binary (demangled when `swift demangle` is on the PATH).
Every minute it also prints the live heap beside the process's RSS as heaptrack sampled it.

Usage (a release build; heaptrack slows the run a little):
    heaptrack -o /tmp/soak .build/release/paystorm run PROFILE --seed 42 --reports /tmp/soak-reports --quiet
    zstdcat /tmp/soak.zst | Benchmarks/soak/heap-growth.py 120 1200 [MORE SECONDS...] [--depth 3] [--top 40]
"""
import argparse
import collections
import re
import shutil
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("seconds", nargs="+", type=float, help="moments to snapshot, seconds into the recording")
    parser.add_argument("--depth", type=int, default=3, help="frames of the binary naming a site")
    parser.add_argument("--top", type=int, default=40, help="sites printed")
    args = parser.parse_args()
    moments = sorted(int(s * 1000) for s in args.seconds)

    strings = [""]  # heaptrack's string table is 1-based
    ips = [None]  # instruction pointers, 1-based: (module string, [function strings])
    traces = [(0, 0)]  # 1-based: (ip index, parent trace)
    sizes, trace_of, live = [], [], []
    snapshots, next_moment, now, minute = [], 0, 0, 0
    for line in sys.stdin:
        kind = line[0]
        if kind == "+":
            live[int(line[2:], 16)] += 1
        elif kind == "-":
            live[int(line[2:], 16)] -= 1
        elif kind == "a":
            _, size, trace = line.split()
            sizes.append(int(size, 16))
            trace_of.append(int(trace, 16))
            live.append(0)
        elif kind == "t":
            _, ip, parent = line.split()
            traces.append((int(ip, 16), int(parent, 16)))
        elif kind == "i":
            fields = line.split()
            frames = [int(fields[i], 16) for i in range(3, len(fields) - 2, 3)]
            ips.append((int(fields[2], 16), frames))
        elif kind == "s":
            parts = line.rstrip("\n").split(" ", 2)
            strings.append(parts[2] if len(parts) > 2 else "")
        elif kind == "c":
            now = int(line[2:], 16)
            while next_moment < len(moments) and now >= moments[next_moment]:
                snapshots.append((now, list(live)))
                next_moment += 1
        elif kind == "R" and now >= minute * 60_000:
            heap = sum(n * s for n, s in zip(live, sizes))
            print(f"t={now / 1000:7.0f} s  live heap {heap:>11,} B  rss {int(line[2:], 16) * 4096:>11,} B")
            minute += 1
    if len(snapshots) < 2:
        sys.exit(f"heap-growth: the recording ends at {now / 1000:.0f} s, before the second moment")

    def site(trace):
        """The allocating collection (a stdlib frame, for the type it holds) and the first frames of our code."""
        collection, names = None, []
        while trace and len(names) < args.depth:
            ip, parent = traces[trace]
            module, frames = ips[ip]
            if module == 1:  # the traced binary is the first string
                for name in [strings[f] for f in frames] or ["?"]:
                    if STDLIB.match(name):
                        collection = collection or name
                    elif len(names) < args.depth:
                        names.append(name)
            trace = parent
        return (collection, tuple(names))

    grown = collections.defaultdict(lambda: [0] * len(snapshots))
    for index, size in enumerate(sizes):
        key = site(trace_of[index])
        for column, (_, counts) in enumerate(snapshots):
            grown[key][column] += (counts[index] if index < len(counts) else 0) * size
    rows = sorted(grown.items(), key=lambda kv: kv[1][0] - kv[1][-1])[: args.top]
    readable = demangled({name for (collection, names), _ in rows for name in (collection, *names) if name})
    totals = [sum(n * s for n, s in zip(counts, sizes)) for _, counts in snapshots]
    header = "  ".join(f"{'at ' + str(ms // 1000) + ' s':>11}" for ms, _ in snapshots)
    print(f"\n{header}  {'growth':>11}  site (allocating collection: first frames of the run's own code)")
    print("  ".join(f"{t:>11,}" for t in totals) + f"  {totals[-1] - totals[0]:>11,}  (all live heap)")
    for (collection, names), values in rows:
        where = " <- ".join(readable.get(name, name) for name in names) or "(outside the binary)"
        what = readable.get(collection, collection) + ": " if collection else ""
        print("  ".join(f"{v:>11,}" for v in values) + f"  {values[-1] - values[0]:>11,}  {what}{where}")


# Mangled names of the standard library's own (specialized) functions: Swift.Array, Dictionary, String...
STDLIB = re.compile(r"^\$s(s|S[a-zA-Z])")


def demangled(names):
    """Short readable names: `Array._createNewBuffer<Checking.OracleTransaction>`, `Checker.dispatch`."""
    names = sorted(names)
    if not names or not shutil.which("swift"):
        return {}
    text = subprocess.run(["swift", "demangle"], input="\n".join(names), capture_output=True, text=True).stdout
    short = {}
    for name, line in zip(names, text.splitlines()):
        line = re.sub(r"^.*? -> ", "", line) if line.startswith("{") else line
        specialized = re.match(r"^(?:generic |function signature )?specialization <(.*?)> of (.*)$", line)
        types, line = (specialized.group(1), specialized.group(2)) if specialized else (None, line)
        line = re.sub(r"\(([\w.]+) in _[0-9A-F]+\)", r"\1", line)  # a private function's discriminator
        line = re.sub(r"\(.*$", "", line).replace("Swift.", "").replace("static ", "")
        short[name] = f"{line}<{types.replace('Swift.', '')}>" if types and "<" not in line else line
    return short


if __name__ == "__main__":
    main()
