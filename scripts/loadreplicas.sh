#!/usr/bin/env bash
# Booking throughput of N `cardhour serve` replicas on one MariaDB (issue #14):
# a fresh database, N replicas started on it, e2e/loadbooking's closed loop
# (64 clients, 16 cards) spread over them, then one summary line with the
# CPU each booking cost the replicas and MariaDB, and the bookings per commit.
#
#   scripts/testenv.sh scripts/loadreplicas.sh 3              # one run, 3 replicas
#   PROCS=1 scripts/testenv.sh scripts/loadreplicas.sh 3 3    # three runs, GOMAXPROCS=1 each
#   GALERA=1 scripts/testenv.sh scripts/loadreplicas.sh 3     # replica i on Galera node i
#   CPU=0.5 scripts/testenv.sh scripts/loadreplicas.sh 3 3    # each replica limited to half a core
#
# Needs the environment of scripts/testenv.sh (CARDHOUR_TEST_MYSQL, the
# MariaDB pid). On a machine the replicas share, give each its CPU share
# (PROCS sets the replicas' GOMAXPROCS, not the load command's): Go would
# otherwise run as many threads per process as the machine has cores, and
# three processes on two cores spend their time switching. In containers Go
# reads the CPU limit by itself.
#
# The CPU per booking counts from the first request to the load command's
# exit, its read-back of every booking included. VERBOSE=1 prints the load
# command's own summary too.
#
# CPU=N starts each replica in a control group of its own limited to N
# cores (root; cgroup v1 or v2), as replicas run in production: each in a
# container or on a host with its own CPU, so that one replica's rate is
# what one replica can do, not what the whole machine can.
set -euo pipefail
n=${1:?usage: loadreplicas.sh REPLICAS [RUNS] [DURATION]}
runs=${2:-1}
duration=${3:-10s}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
(cd "$root" && go build -o "$work/cardhour" . && go build -o "$work/loadbooking" ./e2e/loadbooking)
port=$CARDHOUR_TEST_MARIADB_PORT
bases=("$CARDHOUR_TEST_MYSQL")
if [[ -n "${GALERA:-}" ]]; then
	IFS=, read -r -a bases <<<"${CARDHOUR_TEST_GALERA:?GALERA=1 needs the Galera cluster of scripts/testenv.sh}"
	port=$(sed -E 's/.*:([0-9]+)\).*/\1/' <<<"${bases[0]}")
fi
# cgroup DIR: a CPU control group for one replica, limited to $CPU cores.
cgroup() {
	local quota=$(awk -v c="$CPU" 'BEGIN{printf "%d", c * 100000}')
	if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
		echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
		mkdir -p "/sys/fs/cgroup/$1" && echo "$quota 100000" >"/sys/fs/cgroup/$1/cpu.max"
		echo "/sys/fs/cgroup/$1"
	else
		mkdir -p "/sys/fs/cgroup/cpu/$1" && echo 100000 >"/sys/fs/cgroup/cpu/$1/cpu.cfs_period_us" &&
			echo "$quota" >"/sys/fs/cgroup/cpu/$1/cpu.cfs_quota_us"
		echo "/sys/fs/cgroup/cpu/$1"
	fi
}
groups=()
trap 'kill ${pids[*]:-} 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; for g in ${groups[*]:-}; do rmdir "$g" 2>/dev/null || true; done' EXIT
sql() { mariadb -h127.0.0.1 -P"$port" -ucardhour -pcardhour -N -e "$1"; }
ticks() { local t=0 p f; for p in "$@"; do read -r -a f <"/proc/$p/stat"; t=$((t + f[13] + f[14])); done; echo "$t"; }
mpid=$(cat "$(dirname "$CARDHOUR_TEST_MARIADB_DIR")"/*.pid)
if [[ -n "${GALERA:-}" ]]; then
	mpid=$(find "$CARDHOUR_TEST_GALERA_DIR" -name '*.pid' -exec cat {} + | tr '\n' ' ')
fi
for run in $(seq 1 "$runs"); do
	db="loadrep_$$_$run"
	sql "CREATE DATABASE $db"
	pids=() urls=()
	for i in $(seq 1 "$n"); do
		dsn="mysql://${bases[$(((i - 1) % ${#bases[@]}))]}${db}?charset=utf8mb4&parseTime=true&loc=UTC"
		p=$((19300 + i)); d="$work/data$run.$i"; mkdir -p "$d"
		cmd=("$work/cardhour" serve)
		procs=${PROCS:-$(nproc)}
		if [[ -n "${CPU:-}" ]]; then
			g=$(cgroup "cardhour-load-$$-$i") || { echo "CPU=$CPU: cannot make a CPU control group (root, cgroup v1 or v2)" >&2; exit 1; }
			groups+=("$g")
			# The replica starts inside its group, so Go sizes GOMAXPROCS to the limit.
			cmd=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$g" "$work/cardhour" serve)
			procs=${PROCS:-} # Go reads the group's limit
		fi
		GOMAXPROCS=$procs CARDHOUR_DB="$dsn" CARDHOUR_ADDR=127.0.0.1:$p CARDHOUR_DATA="$d" CARDHOUR_ADMIN_PASSWORD=load-admin-pw \
			CARDHOUR_SIMULATOR=false CARDHOUR_LOG_LEVEL=warn "${cmd[@]}" >"$work/serve$run.$i.log" 2>&1 &
		pids+=($!) urls+=("http://127.0.0.1:$p")
		[[ $i == 1 ]] && sleep 3 # the first one migrates and creates the admin
	done
	for u in "${urls[@]}"; do for _ in $(seq 50); do curl -sf "$u/healthz" >/dev/null && break; sleep 0.2; done; done
	dsn="mysql://${bases[0]}${db}?charset=utf8mb4&parseTime=true&loc=UTC"
	tok=$(CARDHOUR_DB="$dsn" CARDHOUR_DATA="$work/data$run.1" "$work/cardhour" token --user admin 2>/dev/null | tail -1)
	load0=$(cut -d' ' -f1 /proc/loadavg)
	s0=$(ticks "${pids[@]}") m0=$(ticks $mpid) c0=$(sql "SHOW GLOBAL STATUS LIKE 'Com_commit'" | awk '{print $2}') q0=$(sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}')
	"$work/loadbooking" -server "$(IFS=,; echo "${urls[*]}")" -token "$tok" -clients 64 -cards 16 -duration "$duration" >"$work/out" 2>&1 || true
	s1=$(ticks "${pids[@]}") m1=$(ticks $mpid) c1=$(sql "SHOW GLOBAL STATUS LIKE 'Com_commit'" | awk '{print $2}') q1=$(sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}')
	booked=$(awk '/booked \(201\)/{print $3}' "$work/out")
	echo "run $run, $n replica(s), load $load0..$(cut -d' ' -f1 /proc/loadavg): $(awk '/booked \(201\)/{print $4}' "$work/out" | tr -d /s) bookings/s," \
		"$(grep -o 'p50 [0-9.]*' "$work/out") ms, $(grep -o 'p99 [0-9.]*' "$work/out") ms, busy $(awk '/^  busy/{print $2}' "$work/out")," \
		"$(grep -o '[0-9]* double bookings' "$work/out"); CPU per booking: replicas $(((s1 - s0) * 10000 / (booked + 1))) µs," \
		"MariaDB $(((m1 - m0) * 10000 / (booked + 1))) µs; $((booked / (c1 - c0 + 1))) bookings per commit," \
		"$(awk -v q=$((q1 - q0)) -v b="$booked" 'BEGIN{printf "%.2f", q / (b + 1)}') statements per booking"
	if [[ -n "${VERBOSE:-}" ]]; then
		cat "$work/out"
		for g in ${groups[*]:-}; do echo "$g: $(tr '\n' ' ' <"$g/cpu.stat")"; done # throttled periods
	fi
	grep -q "verify.*OK" "$work/out" || { cat "$work/out"; exit 1; }
	kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true
	sql "DROP DATABASE $db"
done
