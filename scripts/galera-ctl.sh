#!/usr/bin/env bash
# A throwaway three-node MariaDB Galera cluster on 127.0.0.1 for the
# multi-primary tests (scripts/testenv.sh start_galera):
#
#   CARDHOUR_TEST_GALERA_DIR=/tmp/x scripts/galera-ctl.sh init    # node 1's datadir
#   CARDHOUR_TEST_GALERA_DIR=/tmp/x scripts/galera-ctl.sh start   # returns once all three are Synced
#   CARDHOUR_TEST_GALERA_DIR=/tmp/x scripts/galera-ctl.sh stop    # 3, 2, then 1
#   CARDHOUR_TEST_GALERA_DIR=/tmp/x scripts/galera-ctl.sh status
#
# Node N lives in $CARDHOUR_TEST_GALERA_DIR/nodeN (data/, socket, pid file,
# log, ports). Node 1 bootstraps the cluster (--wsrep-new-cluster); nodes 2
# and 3 join it and receive its state by rsync SST. The SST scripts run as
# the server's user and rsync refuses to serve a datadir as root, so under
# root every node runs as `mysql` and the directory is handed to it.
# `stop` stops node 1 last, so it is the one safe to bootstrap again.
set -euo pipefail

ctl_prefix=galera-ctl
# shellcheck source=scripts/ctl-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ctl-lib.sh"
ctl_path_sbin

base="$(ctl_need_dir CARDHOUR_TEST_GALERA_DIR)"
provider=/usr/lib/galera/libgalera_smm.so
# Bounded: a node that is not Synced by then is a failure, not something to wait for.
start_timeout_s="${CARDHOUR_TEST_GALERA_START_TIMEOUT:-90}"

run_user=()
owner=""
if [[ "$(id -u)" == 0 ]]; then
	id mysql >/dev/null 2>&1 || die "user mysql is missing (it comes with mariadb-server)"
	run_user=(--user=mysql)
	owner=mysql
fi

node_dir() { echo "$base/node$1"; }
node_pid() {
	ctl_current_pid "$(node_dir "$1")/mariadbd.pid"
}

# ports N: "mysql galera ist sst", chosen once and kept across restarts.
ports() {
	local f
	f="$(node_dir "$1")/ports"
	if [[ ! -s "$f" ]]; then
		# The other nodes' ports count as taken: a node's listeners open
		# only when it starts.
		local picked=() n
		for n in 1 2 3 4; do
			# shellcheck disable=SC2046 # a word a port
			picked+=("$(ctl_free_port $(cat "$base"/node*/ports 2>/dev/null) "${picked[@]}")")
		done
		echo "${picked[*]}" >"$f"
	fi
	cat "$f"
}

sql() {
	mariadb --no-defaults --protocol=socket --socket="$(node_dir "$1")/mysqld.sock" -uroot -N -B -e "$2"
}

cmd_init() {
	[[ -x "$provider" ]] || [[ -r "$provider" ]] || die "$provider missing (apt-get install galera-4)"
	command -v rsync >/dev/null 2>&1 || die "rsync missing (apt-get install rsync)"
	[[ ! -e "$base/node1/data" ]] || die "$base/node1/data already exists"
	mkdir -p "$base/node1/data" "$base/node2/data" "$base/node3/data"
	if [[ -n "$owner" ]]; then
		chown -R "$owner:" "$base"
	fi
	# Only node 1 is installed; the others get its state by SST when they join.
	if ! mariadb-install-db --no-defaults "${run_user[@]}" \
		--datadir="$base/node1/data" \
		--auth-root-authentication-method=normal \
		--skip-test-db >"$base/node1/install.log" 2>&1; then
		ctl_log_tail "$base/node1/install.log"
		die "mariadb-install-db failed"
	fi
	# Every node's ports now, so each knows the others' Galera addresses.
	local n
	for n in 1 2 3; do
		ports "$n" >/dev/null
	done
	if [[ -n "$owner" ]]; then
		chown -R "$owner:" "$base"
	fi
}

# cluster_address N: gcomm:// (node 1 bootstrapping) or the other nodes' Galera ports.
cluster_address() {
	local n="$1" bootstrap="$2" m addrs=() g
	if [[ "$bootstrap" == 1 ]]; then
		echo "gcomm://"
		return
	fi
	for m in 1 2 3; do
		[[ "$m" != "$n" ]] || continue
		read -r _ g _ _ <<<"$(ports "$m")"
		addrs+=("127.0.0.1:$g")
	done
	local IFS=,
	echo "gcomm://${addrs[*]}"
}

launch() {
	local n="$1" bootstrap="$2" dir port gport iport sport
	dir="$(node_dir "$n")"
	read -r port gport iport sport <<<"$(ports "$n")"
	rm -f "$dir/mariadbd.pid"
	local extra=()
	[[ "$bootstrap" != 1 ]] || extra=(--wsrep-new-cluster)
	# Galera needs row events, InnoDB and interleaved auto-increment locks
	# (mode 2: a multi-row insert's ids need not be consecutive). The
	# durability settings are the single server's: the data is thrown away.
	setsid mariadbd --no-defaults "${run_user[@]}" \
		--datadir="$dir/data" \
		--socket="$dir/mysqld.sock" \
		--pid-file="$dir/mariadbd.pid" \
		--port="$port" \
		--bind-address=127.0.0.1 \
		--skip-name-resolve \
		--character-set-server=utf8mb4 \
		--collation-server=utf8mb4_unicode_ci \
		--default-time-zone=+08:00 \
		--max-connections=300 \
		--innodb-buffer-pool-size=64M \
		--innodb-log-file-size=32M \
		--innodb-flush-log-at-trx-commit=0 \
		--innodb-doublewrite=0 \
		--innodb-autoinc-lock-mode=2 \
		--binlog-format=ROW \
		--default-storage-engine=InnoDB \
		--wsrep-on=ON \
		--wsrep-provider="$provider" \
		--wsrep-cluster-name=cardhour-test \
		--wsrep-cluster-address="$(cluster_address "$n" "$bootstrap")" \
		--wsrep-node-name="node$n" \
		--wsrep-node-address="127.0.0.1:$gport" \
		--wsrep-node-incoming-address="127.0.0.1:$port" \
		--wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$gport;ist.recv_addr=127.0.0.1:$iport;gcache.size=32M;pc.wait_prim_timeout=PT30S" \
		--wsrep-sst-method=rsync \
		--wsrep-sst-receive-address="127.0.0.1:$sport" \
		--wsrep-slave-threads=2 \
		--log-error="$dir/mariadbd.log" \
		"${extra[@]}" \
		</dev/null >>"$dir/mariadbd.log" 2>&1 &
	echo $! >"$dir/launched"
}

# wait_synced N: until the node answers and says Synced, within the deadline.
wait_synced() {
	local n="$1" deadline="$2" dir state launched
	dir="$(node_dir "$n")"
	launched="$(cat "$dir/launched")"
	while :; do
		state="$(sql "$n" "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | awk '{print $2}' || true)"
		[[ "$state" != Synced ]] || return 0
		if ! ctl_alive "$launched" && ! ctl_alive "$(node_pid "$n" || true)"; then
			ctl_log_tail "$dir/mariadbd.log"
			die "node $n exited during start-up"
		fi
		if ((SECONDS >= deadline)); then
			ctl_log_tail "$dir/mariadbd.log"
			die "node $n not Synced within ${start_timeout_s} s (state: ${state:-no answer})"
		fi
		sleep 0.3
	done
}

cmd_start() {
	local deadline=$((SECONDS + start_timeout_s)) n
	if ctl_alive "$(node_pid 1 || true)"; then
		echo "galera-ctl: node 1 already running"
	else
		launch 1 1
		wait_synced 1 "$deadline"
	fi
	# One joiner at a time: both asking node 1 for SST at once would make
	# it a donor twice over, and the second would wait anyway.
	for n in 2 3; do
		if ctl_alive "$(node_pid "$n" || true)"; then
			continue
		fi
		launch "$n" 0
		wait_synced "$n" "$deadline"
	done
	local size
	size="$(sql 1 "SHOW STATUS LIKE 'wsrep_cluster_size'" | awk '{print $2}')"
	[[ "$size" == 3 ]] || die "cluster size $size, want 3"
	echo "galera-ctl: 3 nodes Synced on 127.0.0.1 ports $(for n in 1 2 3; do read -r p _ <<<"$(ports "$n")"; printf '%s ' "$p"; done)"
}

stop_node() {
	local n="$1" pid
	pid="$(node_pid "$n" || true)"
	ctl_alive "$pid" || return 0
	ctl_terminate "$pid" 60 "node $n (pid $pid)"
	rm -f "$(node_dir "$n")/mariadbd.pid"
}

cmd_stop() {
	local n
	for n in 3 2 1; do
		stop_node "$n"
	done
	echo "galera-ctl: stopped"
}

cmd_status() {
	local n rc=0
	for n in 1 2 3; do
		if ctl_alive "$(node_pid "$n" || true)"; then
			echo "node $n: $(sql "$n" "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | awk '{print $2}')"
		else
			echo "node $n: not running"
			rc=1
		fi
	done
	return "$rc"
}

# The first port of each node, for the DSNs.
cmd_ports() {
	local n p
	for n in 1 2 3; do
		read -r p _ <<<"$(ports "$n")"
		echo "$p"
	done
}

case "${1:-}" in
init) cmd_init ;;
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
ports) cmd_ports ;;
sql) sql "$2" "$3" ;;
*)
	echo "usage: $0 init|start|stop|status|ports|sql N STATEMENT" >&2
	exit 2
	;;
esac
