#!/usr/bin/env bash
# snapshot-latency.sh: write latency of a 3-member Paddock ensemble holding
# many znodes, with snapshots (snapCount=SNAP) and without
# (snapCount=100000000), run A B A so that drift on a shared machine hits
# both. For each run it starts a fresh ensemble on loopback, fills it with
# ZNODES znodes (paddock bench --workload populate), runs the set workload
# for DURATION against all three members and prints paddock bench's JSON
# with the run's label, the snapshots the members saved during the measured
# run, the load average and "windows": the percentiles of the writes due
# while some member was writing a snapshot and of the others, split also by
# how many members were writing one, and how many of the run's slowest
# writes (p99 and above) were in flight during a member's slow WAL fsync
# (over FSYNC_WARN_MS, default 20, the members' fsync.warningthresholdms) or
# a snapshot (scripts/snapwindows, from bench --samples and the members'
# logs); then it stops the members (by pid) and removes the data.
#
#   ZNODES=1000000 DURATION=20s scripts/snapshot-latency.sh
#
# PADDOCK=/path/to/paddock runs that binary instead of building one;
# RUNS="A1 B1 A2 B2" picks the runs (A: snapshots on, B: off); RATE=20000
# issues the writes on a fixed schedule of that many a second (paddock bench
# --rate: an open loop, latency counted from each write's due time) instead
# of keeping 16 x 16 in flight.
set -euo pipefail
ZNODES=${ZNODES:-1000000}
DURATION=${DURATION:-20s}
SNAP=${SNAP:-100000}
TICK=${TICK:-2000}
FSYNC_WARN_MS=${FSYNC_WARN_MS:-20}
RATE=${RATE:-0}
cd "$(dirname "$0")/.."
if [ -z "${PADDOCK:-}" ]; then # PADDOCK=path runs that binary instead of building one
	go build -o bin/paddock ./cmd/paddock
	PADDOCK=$PWD/bin/paddock
fi
TMP=$(mktemp -d /tmp/snapshot-latency.XXXXXX)
go build -o "$TMP/snapwindows" ./scripts/snapwindows
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

run() { # label snapCount
	local label=$1 snap=$2 dir=$TMP/$1 servers="" clients=() i
	local peer=() elect=()
	for i in 1 2 3; do peer[$i]=$(freeport); elect[$i]=$(freeport); clients[$i]=$(freeport); done
	for i in 1 2 3; do
		mkdir -p "$dir/$i"
		echo "$i" > "$dir/$i/myid"
		{
			echo "tickTime=$TICK"; echo "dataDir=$dir/$i"; echo "clientPort=${clients[$i]}"
			echo "clientPortAddress=127.0.0.1"; echo "maxClientCnxns=0"; echo "snapCount=$snap"
			echo "4lw.commands.whitelist=*"; echo "fsync.warningthresholdms=$FSYNC_WARN_MS"
			for j in 1 2 3; do echo "server.$j=127.0.0.1:${peer[$j]}:${elect[$j]}"; done
		} > "$dir/$i/zoo.cfg"
		"$PADDOCK" server --config "$dir/$i/zoo.cfg" > "$dir/$i/server.log" 2>&1 &
		PIDS+=($!)
		servers+="${servers:+,}127.0.0.1:${clients[$i]}"
	done
	for i in 1 2 3; do
		for _ in $(seq 1 200); do
			if printf srvr | timeout 1 python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); s.sendall(b"srvr"); d=s.recv(4096); sys.exit(0 if b"Mode:" in d else 1)' "${clients[$i]}" 2>/dev/null; then break; fi
			sleep 0.1
		done
	done
	"$PADDOCK" bench --servers "$servers" --workload populate --znodes "$ZNODES" --sessions 16 --inflight 16 > /dev/null
	local out before after
	before=$(cat "$dir"/*/server.log | grep -c "snapshot saved" || true)
	out=$("$PADDOCK" bench --servers "$servers" --workload set --duration "$DURATION" --warmup 2s \
		--sessions 16 --inflight 16 --keys 100000 --rate "$RATE" --samples "$dir/samples.csv" --json | tail -1)
	after=$(cat "$dir"/*/server.log | grep -c "snapshot saved" || true)
	local windows
	windows=$("$TMP/snapwindows" -samples "$dir/samples.csv" "$dir"/*/server.log)
	echo "{\"label\":\"$label\",\"snapCount\":$snap,\"snapshots_during_run\":$((after - before)),\"load1\":$(cut -d' ' -f1 /proc/loadavg),\"windows\":$windows,\"result\":$out}"
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
	rm -rf "$dir"
}

# RUNS picks the runs: A (snapshots on) and B (off), numbered A1 B A2 by
# default.
for r in ${RUNS:-A1 B A2}; do
	case $r in
	A*) run "$r" "$SNAP" ;;
	B*) run "$r" 100000000 ;;
	esac
done
