#!/usr/bin/env bash
# memboard.sh BINARY [DB] — one `cardhour serve` under e2e/loadboard's load
# (10,000 cards at 1 Hz, one board client), its RSS sampled every 100 ms
# from /proc/PID/status. Prints idle (median) and peak VmRSS during the load
# (see the window below), VmHWM (the whole run), and the load average.
# Like a Prometheus, it scrapes /metrics (gzip) every SCRAPE_EVERY seconds
# from the start, so the window holds its scrapes as well as the minutes'
# rollup saves.
# DB: empty for SQLite in a temp dir; `mariadb` for a fresh database on the
# MariaDB of `scripts/testenv.sh` (run it as `scripts/testenv.sh
# scripts/memboard.sh BINARY mariadb`); or a mysql://… DSN of an empty
# database. Env: CARDS (10000), PER_HOST (8 cards a push), SECONDS_LOAD (180),
# SCRAPE_EVERY (15; 0 for no scrapes), SETTLE (35s), LOADBOARD (a built
# e2e/loadboard; built into the temp dir when unset).
#
# Setup first (-settle 35s: the cards are in the server's inventory before
# they report; SETTLE=0s has the new cards' first pushes find the inventory
# to be loaded), then the load.
set -euo pipefail
bin=${1:?binary}; db=${2:-}
cards=${CARDS:-10000}; perhost=${PER_HOST:-8}; secs=${SECONDS_LOAD:-180}; every=${SCRAPE_EVERY:-15}; settle=${SETTLE:-35s}
dir=$(mktemp -d /tmp/memboard.XXXXXX)
port=$(( 20000 + RANDOM % 20000 ))
export CARDHOUR_DATA=$dir CARDHOUR_ADDR=127.0.0.1:$port CARDHOUR_SIMULATOR=false CARDHOUR_DEMO=false \
	CARDHOUR_ADMIN_PASSWORD=memboard-pw-123456
if [[ $db == mariadb ]]; then
	name=memboard_$$_$RANDOM
	mariadb --no-defaults -h127.0.0.1 -P"${CARDHOUR_TEST_MARIADB_PORT:?run under scripts/testenv.sh}" -ucardhour -pcardhour \
		-e "CREATE DATABASE $name CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
	db="mysql://cardhour:cardhour@tcp(127.0.0.1:$CARDHOUR_TEST_MARIADB_PORT)/$name"
fi
[[ -n $db ]] && export CARDHOUR_DB=$db
"$bin" serve >"$dir/serve.log" 2>&1 &
pid=$!
scraper=
trap 'kill $pid ${scraper} 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
token=$("$bin" token --user admin)
( while kill -0 $pid 2>/dev/null; do
	printf '%s %s %s\n' "$(date +%s.%N)" "$(awk '/^VmRSS/{print $2}' /proc/$pid/status)" "$(awk '/^VmHWM/{print $2}' /proc/$pid/status)"
	sleep 0.1
  done ) >"$dir/rss" 2>/dev/null &
if (( every > 0 )); then
	# One line a scrape: when it began, seconds it took, bytes (gzip) it got.
	( while kill -0 $pid 2>/dev/null; do
		printf '%s %s\n' "$(date +%s.%N)" "$(curl -s -o /dev/null -H 'Accept-Encoding: gzip' -w '%{time_total} %{size_download}' "http://127.0.0.1:$port/metrics")"
		sleep "$every"
	  done ) >"$dir/scrapes" 2>/dev/null &
	scraper=$!
fi
go_load=${LOADBOARD:-}
if [[ -z $go_load ]]; then
	go_load=$dir/loadboard
	go build -o "$go_load" ./e2e/loadboard
fi
"$go_load" -server "http://127.0.0.1:$port" -token "$token" -cards "$cards" -per-host "$perhost" -clients 1 -settle "$settle" -warmup 5s -duration "${secs}s" \
	2> >(while read -r l; do echo "$(date +%s.%N) $l"; done >"$dir/loadboard.err") >"$dir/loadboard.out" || true
sleep 0.3
# The window: from 20 s after the cards start reporting (the first board
# snapshot, and loadboard's first scrape of /metrics, which with 10,000
# cards' series is a spike of its own) to the end of the measured load,
# before loadboard's last scrape and the shutdown's final save. The
# SCRAPE_EVERY scrapes in it are counted, with the longest.
start=$(awk '/connecting/{print $1; exit}' "$dir/loadboard.err")
awk -v s="$start" -v e="$secs" '$1 >= s+20 && $1 <= s+e {print $2}' "$dir/rss" | sort -n >"$dir/rss.load"
n=$(wc -l <"$dir/rss.load")
med=$(sed -n "$(( (n+1)/2 ))p" "$dir/rss.load"); peak=$(tail -1 "$dir/rss.load")
hwm=$(tail -1 "$dir/rss" | awk '{print $3}')
# Loads of the inventory in the whole run (a binary that counts them).
loads=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^cardhour_board_loads_total[{]what="inventory"[}]/{print $2}')
scrapes=$(awk -v s="$start" -v e="$secs" '$1 >= s+20 && $1 <= s+e {n++; if ($2 > m) m = $2} END {printf "%d (longest %.1f s)", n, m}' "$dir/scrapes" 2>/dev/null || echo 0)
printf 'memboard: db=%s cards=%d per-host=%d samples=%d idle(median)=%.0f MiB peak=%.0f MiB VmHWM=%.0f MiB scrapes=%s inventory-loads=%s load=%s\n' \
	"$([[ -n $db ]] && echo mysql || echo sqlite)" "$cards" "$perhost" "$n" "$(echo "$med/1024" | bc -l)" "$(echo "$peak/1024" | bc -l)" "$(echo "$hwm/1024" | bc -l)" "$scrapes" "${loads:--}" "$(cut -d' ' -f1-3 /proc/loadavg)"
grep -E 'samples in|push p99' "$dir/loadboard.out" || cat "$dir/loadboard.err" | tail -3
rm -rf "$dir"/cardhour.db* "$dir/objects" "$dir/loadboard"
echo "memboard: samples and logs in $dir"
