#!/usr/bin/env bash
# Kills the example backend started by start.sh with SIGKILL, master and workers at once (its process group),
# as a crash or an OOM kill would: nothing gets to flush or answer.
#
# Usage: kill.sh DB      (the same DB as start.sh; its pid file is DB.pid)
set -euo pipefail
if (( $# != 1 )); then
    echo "usage: kill.sh DB" >&2
    exit 64
fi
pidfile="$1.pid"
[[ -s "$pidfile" ]] || exit 0
pid="$(cat "$pidfile")"
# gunicorn --daemon forks, calls setsid and forks again: the master and its workers share the process group
# of that (exited) session leader, which no other process is in.
pgid="$(ps -o pgid= -p "$pid" | tr -d ' ')"
if [[ -n "$pgid" ]]; then
    kill -KILL -- "-$pgid" 2>/dev/null || true
fi
# Dead once gone or a zombie: a container's init may reap orphans late (here about a second), and waiting for
# that would lengthen every planned outage.
for _ in $(seq 1 50); do
    state="$(ps -o stat= -p "$pid" 2>/dev/null || true)"
    [[ -z "$state" || "$state" == Z* ]] && break
    sleep 0.1
done
rm -f "$pidfile"
