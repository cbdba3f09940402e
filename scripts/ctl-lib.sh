# shellcheck shell=bash
# What the test-service control scripts (scripts/*-ctl.sh) have in common:
# finding, waiting for and stopping the one process of an instance, picking
# ports, building a pinned Go binary. Sourced, never run:
#
#   ctl_prefix=redis-ctl    # every message starts "redis-ctl: "
#   . "$(dirname "${BASH_SOURCE[0]}")/ctl-lib.sh"
#
# It sets no shell options and starts nothing; each script keeps its own
# set -euo pipefail, its paths and its commands.

: "${ctl_prefix:?set ctl_prefix before sourcing ctl-lib.sh}"

die() {
	echo "$ctl_prefix: $*" >&2
	exit 1
}

# ctl_say MSG...: a line on stdout with the script's prefix.
ctl_say() {
	echo "$ctl_prefix: $*"
}

# ctl_need_dir VAR: prints $VAR, the instance directory testenv.sh exports;
# dies when it is unset, as the scripts do outside testenv.sh.
ctl_need_dir() {
	[[ -n "${!1:-}" ]] || die "$1 is not set (run under scripts/testenv.sh)"
	printf '%s\n' "${!1}"
}

# slapd, mariadbd and friends live in /usr/sbin, which a non-root PATH may lack.
ctl_path_sbin() {
	case ":$PATH:" in
	*:/usr/sbin:*) ;;
	*) PATH="$PATH:/usr/sbin" ;;
	esac
}

# ctl_cache NAME: the per-machine build cache directory for NAME.
ctl_cache() {
	echo "${CARDHOUR_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cardhour}/$1"
}

# ctl_go_install BIN MODULE VERSION: go install MODULE@VERSION into BIN's
# directory unless BIN is there already, so only a machine's first run pays
# for the build.
ctl_go_install() {
	local bin="$1" module="$2" version="$3" cache
	cache="$(dirname "$bin")"
	if [[ -x "$bin" ]]; then
		return 0
	fi
	ctl_say "building $(basename "$bin") $version into $cache (first run on this machine)"
	mkdir -p "$cache"
	command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"
	# Outside any module, so this project's go.mod neither constrains nor
	# records the tool's dependencies.
	if ! (cd "$cache" && GOBIN="$cache" GOFLAGS=-buildvcs=false go install "$module@$version") >"$cache/build.log" 2>&1; then
		tail -n 30 "$cache/build.log" >&2
		die "go install $module@$version failed"
	fi
	[[ -x "$bin" ]] || die "go install left no binary at $bin"
}

# ctl_alive PID: the process runs. kill -0 is not enough: an exited server
# whose parent has not reaped it yet is a zombie that still "exists", and
# stop would then wait for nothing.
ctl_alive() {
	local pid="$1" state
	[[ -n "$pid" && -r "/proc/$pid/stat" ]] || return 1
	state="$(sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" || return 1
	[[ "$state" != Z && "$state" != X ]]
}

# ctl_current_pid PIDFILE: the pid recorded there; fails when there is none.
ctl_current_pid() {
	[[ -s "$1" ]] && cat "$1"
}

# ctl_listening PORT: something accepts connections on 127.0.0.1:PORT.
ctl_listening() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# ctl_all_listening PORT...: every PORT listens.
ctl_all_listening() {
	local p
	for p in "$@"; do
		ctl_listening "$p" || return 1
	done
}

# ctl_free_port [TAKEN...]: prints a port nobody listens on and that is none
# of TAKEN, from a random base so parallel runs rarely collide. Plain bash:
# ss when it is there, and a connect attempt either way.
# shellcheck disable=SC2120 # TAKEN is optional; most callers have none
ctl_free_port() {
	local i p
	for i in $(seq 0 299); do
		p=$((20000 + (RANDOM + i * 97) % 30000))
		if [[ " $* " == *" $p "* ]]; then
			continue
		fi
		# Captured, not piped into grep -q: with pipefail an early grep exit could read as "free".
		if command -v ss >/dev/null 2>&1 && [[ -n "$(ss -Htln "sport = :$p" 2>/dev/null)" ]]; then
			continue
		fi
		if ctl_listening "$p"; then
			continue
		fi
		echo "$p"
		return 0
	done
	die "no free port found"
}

# ctl_already_running PIDFILE: says so and succeeds when its process runs
# (start then has nothing to do).
ctl_already_running() {
	local pid
	pid="$(ctl_current_pid "$1" || true)"
	ctl_alive "$pid" || return 1
	ctl_say "already running (pid $pid)"
}

# ctl_launch PIDFILE LOG COMMAND...: starts COMMAND in the background and
# records its pid in PIDFILE and in ctl_launched (no subshell: the caller
# waits for that pid). setsid: a Ctrl-C aimed at the tests must not kill it
# before the trap stops it. All streams on the log, so no caller (one that
# captures this script's output) waits on its pipes.
ctl_launch() {
	local pidfile="$1" log="$2"
	shift 2
	setsid "$@" </dev/null >>"$log" 2>&1 &
	ctl_launched=$!
	echo "$ctl_launched" >"$pidfile"
}

# ctl_wait_started NAME PID LOG TIMEOUT PORT...: returns once every PORT
# listens on 127.0.0.1; dies with LOG's last lines when PID exits first or
# TIMEOUT seconds pass (then PID is sent SIGTERM).
ctl_wait_started() {
	local name="$1" pid="$2" log="$3" timeout="$4" i
	shift 4
	for i in $(seq 1 $((timeout * 10))); do
		if ctl_all_listening "$@"; then
			return 0
		fi
		if ! ctl_alive "$pid"; then
			tail -n 30 "$log" >&2 || true
			die "$name exited during start-up"
		fi
		sleep 0.1
	done
	local where="127.0.0.1:$1" p
	for p in "${@:2}"; do
		where+=" and :$p"
	done
	kill -TERM "$pid" 2>/dev/null || true
	tail -n 30 "$log" >&2 || true
	die "$name did not listen on $where within $timeout s"
}

# ctl_terminate PID TIMEOUT [WHO]: SIGTERM, then SIGKILL when PID still runs
# after TIMEOUT seconds (saying so on stderr when WHO names it); returns once
# it has exited.
ctl_terminate() {
	local pid="$1" timeout="$2" who="${3:-}" i
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 1 $((timeout * 10))); do
		ctl_alive "$pid" || return 0
		sleep 0.1
	done
	if [[ -n "$who" ]]; then
		echo "$ctl_prefix: $who ignored SIGTERM for $timeout s, killing" >&2
	fi
	kill -KILL "$pid" 2>/dev/null || true
	for i in 1 2 3 4 5; do
		ctl_alive "$pid" || return 0
		sleep 0.1
	done
}

# ctl_stop PIDFILE [TIMEOUT [loud]]: stops the process PIDFILE names (SIGKILL
# after TIMEOUT s, default 10; loud says so) and removes PIDFILE.
ctl_stop() {
	local pidfile="$1" timeout="${2:-10}" loud="${3:-}" pid
	pid="$(ctl_current_pid "$pidfile" || true)"
	if ! ctl_alive "$pid"; then
		ctl_say "not running"
		return 0
	fi
	ctl_terminate "$pid" "$timeout" "${loud:+pid $pid}"
	rm -f "$pidfile"
	ctl_say "stopped (pid $pid)"
}

# ctl_status PIDFILE DESCRIBE: "PREFIX: $(DESCRIBE) (pid N)" when the process
# runs; "not running" and status 1 otherwise. DESCRIBE is a function, called
# only when it runs (it may read files that a stopped instance lacks).
ctl_status() {
	local pid
	pid="$(ctl_current_pid "$1" || true)"
	if ctl_alive "$pid"; then
		ctl_say "$("$2") (pid $pid)"
	else
		ctl_say "not running"
		return 1
	fi
}

# ctl_main PIDFILE USAGE VERB: the verbs every single-process ctl has: start
# (the script's cmd_start), stop, status (with the script's describe);
# anything else prints the usage, "install|start|stop|status" say, and exits 2.
ctl_main() {
	case "$3" in
	start) cmd_start ;;
	stop) ctl_stop "$1" ;;
	status) ctl_status "$1" describe ;;
	*)
		echo "usage: $0 $2" >&2
		exit 2
		;;
	esac
}

# ctl_log_tail FILE: FILE's last lines on stderr, framed.
ctl_log_tail() {
	echo "---- last lines of $1 ----" >&2
	tail -n 40 "$1" >&2 2>/dev/null || true
	echo "----" >&2
}
