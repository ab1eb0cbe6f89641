# Shared by run.sh and ab.sh (sourced after Benchmarks/load/common.sh, with PAYSTORM the build that measures the
# ceiling and RUN_SECONDS the length of each run): starts nginx, writes the null-target profile, makes a PKI,
# measures the minting ceiling and sets PROFILE, VARS, BENCH, CEILING, MINT_CPU and SCALE (the --rate-scale at 1x).
# nginx gets the last core; paystorm (world, minting, engine) the machine as it would in a real run.
start_nginx "$(( $(nproc) - 1 ))"
PROFILE="$WORK/ceiling.json5"
# CONNECTIONS=N sets target.connections (default 32), to tell the pool's limit from the CPU's.
sed -e "s/seconds: 15 }/seconds: $RUN_SECONDS }/" \
    -e "s/requestTimeoutSeconds: 10,/requestTimeoutSeconds: 10, connections: ${CONNECTIONS:-32},/" \
    Benchmarks/ceiling/null-target.json5 >"$PROFILE"
VARS=(--set "TARGET=http://127.0.0.1:$NGINX_PORT")
# The null target trusts anything; a run against an external target still needs the PKI it would trust.
"$PAYSTORM" pki init "$WORK/pki" >/dev/null

echo "# $(uname -srm), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $PAYSTORM bench ceiling Benchmarks/ceiling/null-target.json5 --rate-scale 8 --seconds 5"
# Signs the profile's stream for 5 s (or to its end); counts what its whole schedule intends without signing. At
# --rate-scale 1 a quiet machine signs the whole stream in under a second, so the bench signs the same schedule
# eight times as dense (the same mix of deliveries); the --rate-scale it prints is for the profile as written.
BENCH=$("$PAYSTORM" bench ceiling "$PROFILE" "${VARS[@]}" --rate-scale 8 --seconds 5)
echo "$BENCH"
CEILING=$(awk '/^ceiling:/ {print $2}' <<<"$BENCH")
# The CPU minting spends per delivery, measured (user + system), which other work on the machine does not change.
MINT_CPU=$(awk '/^minting CPU:/ {print $3}' <<<"$BENCH")
SCALE=$(awk '/meets the ceiling/ {for (i = 1; i < NF; i++) if ($i == "--rate-scale") s = $(i + 1); print s}' <<<"$BENCH")

