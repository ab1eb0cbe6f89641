#!/usr/bin/env bash
# Starts the example backend the way a deployment's start script does: gunicorn daemonizes (--daemon) and this
# script returns once the port answers, leaving the daemon behind.
#
# Usage: start.sh PORT DB TRUST_DER [BUGS]
#   PORT       loopback port to bind (127.0.0.1)
#   DB         SQLite file (created on first start; kept across restarts)
#   TRUST_DER  the root certificate the verifier trusts (`paystorm pki init DIR` writes DIR/root.der)
#   BUGS       comma-separated bugs to switch on (README.md); empty for the correct backend
# The pid file and log sit beside DB (DB.pid, DB.log). Needs the venv that run.sh creates (.venv here).
set -euo pipefail
if (( $# < 3 )); then
    echo "usage: start.sh PORT DB TRUST_DER [BUGS]" >&2
    exit 64
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="$1" db="$2" trust="$3"
export BUGS="${4:-}" EXAMPLE_DB="$db" EXAMPLE_TRUST="$trust"
python="${EXAMPLE_PYTHON:-$here/.venv/bin/python}"
# Import the app once in the foreground, so that a bad BUGS value fails here with its message, not in a daemon,
# and run its start-up step (which the dies-on-restart bug makes fail from the second restart on).
(cd "$here" && "$python" -c 'import app, os; app.start_up(os.environ["EXAMPLE_DB"])')
# Several workers with threads: concurrent duplicates really run in parallel, on different processes.
"$python" -m gunicorn --daemon --chdir "$here" --bind "127.0.0.1:$port" --workers 3 --threads 4 \
    --pid "$db.pid" --error-logfile "$db.log" --capture-output --graceful-timeout 2 \
    --no-control-socket 'app:create_app()'
for _ in $(seq 1 200); do
    if "$python" -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 0.2).close()" \
        "$port" 2>/dev/null; then
        exit 0
    fi
    sleep 0.1
done
echo "start.sh: the backend did not answer on 127.0.0.1:$port within 20 s (log: $db.log)" >&2
exit 69
