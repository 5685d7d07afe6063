#!/usr/bin/env bash
# bench-vs-zookeeper.sh: Paddock against Apache ZooKeeper 3.8, side by side,
# on this machine, with `paddock bench` as the client (docs/bench.md).
#
# It starts Apache ZooKeeper (Debian's zookeeper package, run as the tests
# run it with internal/zktest's ProductionJVM: only the JVM's own defaults for
# heap, GC and JIT) and Paddock, both with the same zoo.cfg settings: fsync
# on, tickTime=2000, maxClientCnxns=0, free loopback ports, data under a
# temporary directory. Each mode of MODES is measured in turn:
#
#   standalone  one server of each kind
#   ensemble    three members of each kind (server.1-3 lines on loopback with
#               distinct client, peer and election ports, a myid per data
#               directory), configured as internal/zktest's ensembles are
#
# Then, measuring each kind in turn (A B A B: machine drift hits both):
#
#   1. pre-warm   PREWARM of the mixed workload on each server, then
#                 PREWARM_EACH of every other workload of WORKLOADS, not
#                 recorded (ZooKeeper's JIT needs it: without the second
#                 part the first repetition of each workload was
#                 ZooKeeper's slowest, by up to half)
#   2. workloads  every workload of WORKLOADS, REPS times, with SESSIONS
#                 sessions x INFLIGHT calls in flight             series "workload"
#   3. latency    every workload of LATENCY_WORKLOADS on both kinds at the
#                 same offered load: LATENCY_LOAD (a fraction) of the
#                 median rate ZooKeeper reached in this mode's workloads
#                 phase (read from OUT), issued on a fixed schedule
#                 (paddock bench --rate: an open loop, latency counted
#                 from each call's due time), REPS times    series "latency"
#   4. clients    get and set with 1, 4, 16, 64, 256 sessions (CLIENT_COUNTS) of
#                 CLIENT_INFLIGHT call(s) in flight each           series "clients"
#   5. memory     fresh servers; RSS idle, then after populating MEM_ZNODES
#                 znodes, after MEM_SETTLE of quiet                series "memory"
#   6. restart    standalone only: fresh servers; populate ZNODES znodes,
#                 then REPS times: kill -9, start again, time until the
#                 server serves ("srvr" answers with its mode) and until a
#                 read answers (paddock bench --workload get --ops 1)
#                                                                  type "restart"
#   7. failover   ensemble only: REPS times per kind, scripts/failover keeps
#                 FAILOVER_WRITERS sessions writing, finds the leader with
#                 srvr, kills it with kill -9 and times until a new leader
#                 answers srvr, until the first write issued after the kill
#                 is acknowledged and until every writer has written again;
#                 then the killed member is started again and timed until
#                 it serves ("rejoin_s")                           type "failover"
#
# In ensemble mode paddock bench gets all three client addresses (each
# session picks one at random) and every member's pid: server CPU per op is
# the members' CPU summed, server RSS the members' RSS summed, and
# "server_procs" has each member's share.
#
# Every bench run passes --server-pid, so the server's CPU per op and RSS are
# recorded. Output: one JSON object per line in OUT; per mode a header
# ("type":"header": machine, versions, settings, the command, "mode" and
# "members"), then one per run: paddock bench's --json result plus "type",
# "series", "server", "rep", "mode" (and "load1", the 1-minute load average
# before the run). OUT is truncated first unless APPEND=1, which adds the
# run's records to those already there (say, an ensemble run to a standalone
# one: the report reads both).
# Turn it into docs/benchmarks.md's generated section and charts with
#
#   go run ./scripts/benchreport -in bench-results/results.jsonl -out docs
#
# Not measured: RSS per watch (paddock bench's watch-fanout gives each
# watcher session one watch, so RSS would measure sessions, not watches; see
# test/sidebyside's BenchmarkMemory), and the restart of an ensemble member
# holding ZNODES znodes (the restart phase runs standalone only).
#
# Environment (defaults in brackets; QUICK=1 changes the defaults to a
# smoke test that runs everything for a second or so):
#   DURATION [10s]  WARMUP [3s]  REPS [3]  SESSIONS [16]  INFLIGHT [16]
#   WORKLOADS [get exists children set create mixed multi ephemeral-churn sessions watch-fanout]
#   LATENCY_WORKLOADS [get set create mixed multi ephemeral-churn]  LATENCY_LOAD [0.5]
#   CLIENT_COUNTS [1 4 16 64 256]  CLIENT_INFLIGHT [1]  CLIENT_WORKLOADS [get set]
#   ZNODES [1000000] (restart)  MEM_ZNODES [100000]  MEM_SETTLE [3]
#   PREWARM [10s]  PREWARM_EACH [3s] (0s: none)  MODES [standalone] (or "ensemble", or "standalone ensemble")
#   OUT [bench-results/results.jsonl]  APPEND [0] (1: add to OUT, do not truncate it)
#   PHASES [workloads latency clients memory restart failover]   (a subset
#     runs only those; restart is skipped in ensemble mode, failover in
#     standalone mode; latency needs ZooKeeper's workloads results of the
#     same mode in OUT, from this run or, with APPEND=1, an earlier one)
#   FAILOVER_WRITERS [8]  FAILOVER_WARMUP [2s]
#   PADDOCK_BIN [bin/paddock, built here]  JAVA [java]  ZK_JVM_FLAGS []
#   TICK_TIME [2000]  KEEP_TMP [0] (keep the temporary directory and logs)

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# The knobs given in the environment, for the header's command line.
KNOBS=(QUICK DURATION WARMUP REPS SESSIONS INFLIGHT WORKLOADS LATENCY_WORKLOADS LATENCY_LOAD CLIENT_COUNTS CLIENT_INFLIGHT CLIENT_WORKLOADS
	ZNODES MEM_ZNODES MEM_SETTLE PREWARM PREWARM_EACH MODES PHASES ZK_JVM_FLAGS TICK_TIME FAILOVER_WRITERS FAILOVER_WARMUP APPEND)
declare -A ENV_GIVEN=()
for knob in "${KNOBS[@]}"; do
	if [[ -v $knob ]]; then ENV_GIVEN[$knob]=${!knob}; fi
done

if [[ "${QUICK:-0}" == 1 ]]; then
	: "${DURATION:=1s}" "${WARMUP:=0s}" "${REPS:=1}" "${PREWARM:=1s}" "${PREWARM_EACH:=0s}"
	: "${CLIENT_COUNTS:=1 16}" "${ZNODES:=5000}" "${MEM_ZNODES:=5000}" "${MEM_SETTLE:=1}"
fi
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
REPS=${REPS:-3}
SESSIONS=${SESSIONS:-16}
INFLIGHT=${INFLIGHT:-16}
WORKLOADS=${WORKLOADS:-get exists children set create mixed multi ephemeral-churn sessions watch-fanout}
LATENCY_WORKLOADS=${LATENCY_WORKLOADS:-get set create mixed multi ephemeral-churn}
LATENCY_LOAD=${LATENCY_LOAD:-0.5}
CLIENT_COUNTS=${CLIENT_COUNTS:-1 4 16 64 256}
CLIENT_INFLIGHT=${CLIENT_INFLIGHT:-1}
CLIENT_WORKLOADS=${CLIENT_WORKLOADS:-get set}
ZNODES=${ZNODES:-1000000}
MEM_ZNODES=${MEM_ZNODES:-100000}
MEM_SETTLE=${MEM_SETTLE:-3}
PREWARM=${PREWARM:-10s}
PREWARM_EACH=${PREWARM_EACH:-3s}
MODES=${MODES:-standalone}
OUT=${OUT:-bench-results/results.jsonl}
PHASES=${PHASES:-workloads latency clients memory restart failover}
APPEND=${APPEND:-0}
FAILOVER_WRITERS=${FAILOVER_WRITERS:-8}
FAILOVER_WARMUP=${FAILOVER_WARMUP:-2s}
JAVA=${JAVA:-java}
ZK_JVM_FLAGS=${ZK_JVM_FLAGS:-}
TICK_TIME=${TICK_TIME:-2000}
KEEP_TMP=${KEEP_TMP:-0}
ZK_CLASSPATH=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar
SERVERS=(zookeeper paddock) # the kinds, in the order of every A B pair
ENSEMBLE_MEMBERS=3

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

for mode in $MODES; do
	case $mode in
	standalone | ensemble) ;;
	*) die "MODES: unknown mode '$mode' (known: standalone, ensemble)" ;;
	esac
done
[[ "$FAILOVER_WRITERS" =~ ^[1-9][0-9]*$ ]] || die "FAILOVER_WRITERS must be a positive integer, not '$FAILOVER_WRITERS'"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer, not '$REPS'"
for z in "$ZNODES" "$MEM_ZNODES"; do
	[[ "$z" =~ ^[1-9][0-9]*$ ]] || die "ZNODES and MEM_ZNODES must be positive integers, not '$z'"
done
for p in $PHASES; do
	case $p in workloads | latency | clients | memory | restart | failover) ;; *) die "PHASES: unknown phase '$p'" ;; esac
done
[[ "$LATENCY_LOAD" =~ ^(0?\.[0-9]+|1(\.0*)?)$ && ! "$LATENCY_LOAD" =~ ^0?\.0*$ ]] ||
	die "LATENCY_LOAD must be a fraction in (0, 1], not '$LATENCY_LOAD'"
for w in $LATENCY_WORKLOADS; do
	case $w in sessions | watch-fanout | populate) die "LATENCY_WORKLOADS: $w runs closed loops only" ;; esac
done
for jar in ${ZK_CLASSPATH//:/ }; do
	[[ -f $jar ]] || die "$jar is missing: install Debian's zookeeper package (apt-get install zookeeper)"
done
command -v "$JAVA" >/dev/null || die "no java ('$JAVA'): install a JRE or set JAVA"
if [[ " $PHASES " == *" latency "* ]]; then
	command -v jq >/dev/null || die "the latency phase reads ZooKeeper's rates with jq: apt-get install jq"
fi

# --- processes ---------------------------------------------------------------

# A kind (zookeeper, paddock) runs as one member in standalone mode, keyed by
# its name, and as ENSEMBLE_MEMBERS members in ensemble mode, keyed
# "<kind>.<id>" (id = myid, 1-based). MODE is the mode being measured.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-vs-zookeeper.XXXXXX")
declare -A PID=() PORT=() PEER_PORT=() ELECTION_PORT=() DATA=() CFG=() LOGF=() USED_PORT=()
MODE=standalone

# members prints the keys of the named kind's members in the current mode.
members() {
	if [[ $MODE == ensemble ]]; then
		local i
		for i in $(seq "$ENSEMBLE_MEMBERS"); do printf '%s ' "$1.$i"; done
		echo
	else
		echo "$1"
	fi
}

# addrs prints the kind's connect string; pids its members' pids, comma-separated.
addrs() {
	local key out=""
	for key in $(members "$1"); do out+="${out:+,}127.0.0.1:${PORT[$key]}"; done
	echo "$out"
}
pids() {
	local key out=""
	for key in $(members "$1"); do out+="${out:+,}${PID[$key]}"; done
	echo "$out"
}

# running succeeds when every member of the kind has a process.
running() {
	local key
	for key in $(members "$1"); do [[ -n ${PID[$key]:-} ]] || return 1; done
}

# stop_server ends one member by its PID: SIGTERM, then SIGKILL after 20 s.
stop_server() {
	local key=$1 pid=${PID[$1]:-}
	[[ -n $pid ]] || return 0
	PID[$key]=
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# stop_kind stops every member of the kind.
stop_kind() {
	local key
	for key in $(members "$1"); do stop_server "$key"; done
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	for key in "${!PID[@]}"; do stop_server "$key"; done
	if [[ $KEEP_TMP == 1 || $rc != 0 ]]; then
		log "server logs and data kept in $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fourlw sends a four-letter word to 127.0.0.1:port and prints the answer.
fourlw() {
	timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf %s "$2" >&3 && cat <&3' _ "$1" "$2" 2>/dev/null || true
}

# serving: the server answers srvr with its mode (ZooKeeper says "not
# currently serving requests" until its database is loaded, and a member
# until it has joined a quorum).
serving() { fourlw "$1" srvr | grep -q '^Mode:'; }

# free_port prints a loopback port nobody listens on and that this script has
# not handed out yet, below the ephemeral range so that client sockets cannot
# take it.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 12000))
		if [[ -z ${USED_PORT[$p]:-} ]] && ! ss -Htln "sport = :$p" 2>/dev/null | grep -q . &&
			! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			USED_PORT[$p]=1
			echo "$p"
			return
		fi
	done
	die "no free port found"
}

# write_config writes the zoo.cfg both kinds read (Paddock reads zoo.cfg
# too, and ignores forceSync: it always fsyncs). An ensemble member's also
# lists every member (server.N=127.0.0.1:peerPort:electionPort), as
# internal/zktest's ensembles do; its id is in dataDir/myid.
write_config() {
	local key=$1 kind=${1%%.*} m i=0
	{
		cat <<-CFG
			tickTime=$TICK_TIME
			initLimit=10
			syncLimit=5
			dataDir=${DATA[$key]}
			clientPort=${PORT[$key]}
			clientPortAddress=127.0.0.1
			maxClientCnxns=0
			forceSync=yes
			4lw.commands.whitelist=*
			admin.enableServer=false
		CFG
		if [[ $MODE == ensemble ]]; then
			for m in $(members "$kind"); do
				i=$((i + 1))
				echo "server.$i=127.0.0.1:${PEER_PORT[$m]}:${ELECTION_PORT[$m]}"
			done
		fi
	} >"${CFG[$key]}"
}

# launch starts the member on its config and data dir, in the background;
# PID[key] is the server process itself (java or paddock).
launch() {
	local key=$1
	case ${key%%.*} in
	zookeeper)
		# shellcheck disable=SC2086 # ZK_JVM_FLAGS is a list of flags
		"$JAVA" -Djava.awt.headless=true -Dfile.encoding=UTF-8 $ZK_JVM_FLAGS \
			-Dlog4j.configuration="file:$TMP/log4j.properties" \
			-Dzookeeper.jmx.log4j.disable=true -Dzookeeper.admin.enableServer=false \
			-cp "$ZK_CLASSPATH" org.apache.zookeeper.server.quorum.QuorumPeerMain "${CFG[$key]}" \
			>>"${LOGF[$key]}" 2>&1 </dev/null &
		;;
	paddock)
		"$PADDOCK" server --config "${CFG[$key]}" >>"${LOGF[$key]}" 2>&1 </dev/null &
		;;
	esac
	PID[$key]=$!
}

# wait_serving waits until the member serves; it fails after 300 s or
# when the process exits.
wait_serving() {
	local key=$1 deadline=$((SECONDS + 300))
	until serving "${PORT[$key]}"; do
		if ! kill -0 "${PID[$key]}" 2>/dev/null; then
			tail -n 30 "${LOGF[$key]}" >&2 || true
			die "$key exited while starting (log above: ${LOGF[$key]})"
		fi
		((SECONDS < deadline)) || die "$key does not serve after 300 s (log: ${LOGF[$key]})"
		sleep 0.02
	done
}

# start_fresh starts the named kind with empty data directories: one server,
# or in ensemble mode every member at once (none serves until a quorum runs).
start_fresh() {
	local kind=$1 key dir i=0
	stop_kind "$kind"
	for key in $(members "$kind"); do
		i=$((i + 1))
		dir="$TMP/$key"
		rm -rf "$dir"
		mkdir -p "$dir/data"
		DATA[$key]=$dir/data CFG[$key]=$dir/zoo.cfg LOGF[$key]=$dir/server.log
		PORT[$key]=$(free_port)
		if [[ $MODE == ensemble ]]; then
			PEER_PORT[$key]=$(free_port) ELECTION_PORT[$key]=$(free_port)
			echo "$i" >"$dir/data/myid"
		fi
	done
	for key in $(members "$kind"); do write_config "$key"; done
	for key in $(members "$kind"); do launch "$key"; done
	for key in $(members "$kind"); do wait_serving "$key"; done
	log "$kind ($MODE) serving on $(addrs "$kind"), pid $(pids "$kind")"
}

rss_bytes() { awk '/^VmRSS:/ { printf "%.0f\n", $2 * 1024 }' "/proc/$1/status"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# rss_list prints a JSON array of the kind's members' RSS; rss_sum their sum.
rss_list() {
	local key out=""
	for key in $(members "$1"); do out+="${out:+,}$(rss_bytes "${PID[$key]}")"; done
	echo "[$out]"
}
rss_sum() {
	local key sum=0
	for key in $(members "$1"); do sum=$((sum + $(rss_bytes "${PID[$key]}"))); done
	echo "$sum"
}

# --- output ------------------------------------------------------------------

json_str() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\t'/ }
	s=${s//$'\n'/ }
	printf '"%s"' "$s"
}

# emit appends one record to OUT.
emit() { printf '%s\n' "$1" >>"$OUT"; }

# bench runs paddock bench against the named kind (every member's address
# and pid) with the given flags and records its JSON result with the fields
# "series", "server", "rep", "mode".
bench() {
	local series=$1 name=$2 rep=$3 mode=$4
	shift 4
	local l1 out rc=0 line
	l1=$(load1)
	out=$("$PADDOCK" bench --servers "$(addrs "$name")" --server-pid "$(pids "$name")" --json "$@" 2>"$TMP/bench.err") || rc=$?
	line=$(tail -n 1 <<<"$out")
	local extra
	extra="\"type\":\"bench\",\"series\":$(json_str "$series"),\"server\":\"$name\",\"rep\":$rep,\"mode\":\"$mode\",\"load1\":$l1"
	if [[ $line == "{"* ]]; then
		((rc == 0)) || extra+=",\"failed\":true"
		emit "{$extra,${line#\{}"
	else
		emit "{$extra,\"failed\":true,\"args\":$(json_str "$*"),\"error\":$(json_str "$(tail -n 5 "$TMP/bench.err")")}"
	fi
	if ((rc != 0)); then
		log "  $series $name rep $rep: paddock bench failed ($*): $(tail -n 3 "$TMP/bench.err")"
		local key
		for key in $(members "$name"); do
			kill -0 "${PID[$key]}" 2>/dev/null || die "$key is no longer running (log: ${LOGF[$key]})"
		done
		return 0
	fi
	log "  $series $name rep $rep $*: $(jq -r '"\(.ops_per_s|floor) ops/s, p99 \(.latency_us.p99) µs, CPU \(.server_cpu_us_per_op // 0 | .*10|floor/10) µs/op, client \(.client_cpu_us_per_op // 0 | .*10|floor/10) µs/op"' <<<"$line" 2>/dev/null || echo ok)"
}

header() {
	local zkv pdv rev dirty=false zk1 pd1 nmembers=1
	zk1=$(members zookeeper | cut -d' ' -f1) pd1=$(members paddock | cut -d' ' -f1)
	[[ $MODE == standalone ]] || nmembers=$ENSEMBLE_MEMBERS
	zkv=$(fourlw "${PORT[$zk1]}" srvr | sed -n 's/^Zookeeper version: //p' | head -n 1)
	pdv=$(fourlw "${PORT[$pd1]}" srvr | sed -n 's/^Zookeeper version: //p' | head -n 1)
	# The revision the binary under test was built from, as it recorded it
	# ("paddock version"); the checkout's only when the binary has none (a
	# build with -buildvcs=false), since PADDOCK_BIN may be older than it.
	local vj
	vj=$("$PADDOCK" version --json 2>/dev/null || true)
	rev=$(jq -r '.revision // empty' <<<"$vj" 2>/dev/null | cut -c1-12 || true)
	if [[ -n $rev ]]; then
		dirty=$(jq -r '.modified // false' <<<"$vj")
	else
		log "$PADDOCK records no VCS revision; the header gets the checkout's"
		rev=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
		[[ -z $(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]] || dirty=true
	fi
	local cpu mem java_v kernel
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	mem=$(awk '/^MemTotal:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
	java_v=$("$JAVA" -version 2>&1 | head -n 1)
	kernel=$(uname -sr)
	local cmd="" knob
	for knob in "${KNOBS[@]}"; do
		if [[ -v ENV_GIVEN[$knob] ]]; then cmd+="$knob=$(printf %q "${ENV_GIVEN[$knob]}") "; fi
	done
	cmd+="scripts/bench-vs-zookeeper.sh"
	emit "{\"type\":\"header\",\"date\":$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")\
,\"command\":$(json_str "$cmd"),\"mode\":\"$MODE\",\"members\":$nmembers\
,\"nproc\":$(nproc),\"cpu_model\":$(json_str "$cpu"),\"mem_bytes\":$mem,\"kernel\":$(json_str "$kernel")\
,\"load1\":$(load1)\
,\"zookeeper_version\":$(json_str "$zkv"),\"zookeeper_package\":$(json_str "$(dpkg-query -W -f '${Version}' zookeeper 2>/dev/null || true)")\
,\"java\":$(json_str "$java_v"),\"zk_jvm_flags\":$(json_str "$ZK_JVM_FLAGS")\
,\"paddock_version\":$(json_str "$pdv"),\"paddock_revision\":$(json_str "$rev"),\"paddock_modified\":$dirty\
,\"go\":$(json_str "$(go env GOVERSION 2>/dev/null || true)")\
,\"settings\":{\"duration\":$(json_str "$DURATION"),\"warmup\":$(json_str "$WARMUP"),\"reps\":$REPS\
,\"sessions\":$SESSIONS,\"inflight\":$INFLIGHT,\"workloads\":$(json_str "$WORKLOADS")\
,\"latency_workloads\":$(json_str "$LATENCY_WORKLOADS"),\"latency_load\":$LATENCY_LOAD\
,\"client_counts\":$(json_str "$CLIENT_COUNTS"),\"client_inflight\":$CLIENT_INFLIGHT,\"client_workloads\":$(json_str "$CLIENT_WORKLOADS")\
,\"znodes\":$ZNODES,\"mem_znodes\":$MEM_ZNODES,\"mem_settle_s\":$MEM_SETTLE,\"prewarm\":$(json_str "$PREWARM"),\"prewarm_each\":$(json_str "$PREWARM_EACH")\
,\"tick_time\":$TICK_TIME,\"modes\":$(json_str "$MODES"),\"phases\":$(json_str "$PHASES")\
,\"failover_writers\":$FAILOVER_WRITERS,\"failover_warmup\":$(json_str "$FAILOVER_WARMUP")}}"
}

# --- phases ------------------------------------------------------------------

phase_workloads() {
	local mode=$1 rep w name
	for rep in $(seq "$REPS"); do
		for w in $WORKLOADS; do
			for name in "${SERVERS[@]}"; do
				bench workload "$name" "$rep" "$mode" --workload "$w" --sessions "$SESSIONS" \
					--inflight "$INFLIGHT" --duration "$DURATION" --warmup "$WARMUP"
			done
		done
	done
}

# zk_rate prints the median ops/s of ZooKeeper's successful workloads-phase
# runs of workload $2 in mode $1 recorded in OUT, or nothing if there are
# none.
zk_rate() {
	jq -rs --arg m "$1" --arg w "$2" '[.[] | select(.type == "bench" and .series == "workload"
		and .server == "zookeeper" and .mode == $m and .workload == $w and (.failed | not)) | .ops_per_s]
		| sort | if length == 0 then empty else .[length / 2 | floor] end' "$OUT"
}

# phase_latency: per workload, both kinds at the same offered load,
# LATENCY_LOAD of ZooKeeper's median closed-loop rate, on a fixed schedule.
phase_latency() {
	local mode=$1 rep w name zr rate
	for w in $LATENCY_WORKLOADS; do
		zr=$(zk_rate "$mode" "$w")
		[[ -n $zr ]] || die "latency $w: no ZooKeeper $w run of the workloads phase ($mode) in $OUT" \
			"(run PHASES with workloads first, or APPEND=1 to a results file that has one)"
		rate=$(awk -v r="$zr" -v f="$LATENCY_LOAD" 'BEGIN { printf "%d", r * f }')
		((rate > 0)) || die "latency $w: ZooKeeper's rate $zr gives no load"
		log "  latency $w: $rate calls/s ($LATENCY_LOAD of ZooKeeper's $(printf %.0f "$zr") ops/s)"
		for rep in $(seq "$REPS"); do
			for name in "${SERVERS[@]}"; do
				bench latency "$name" "$rep" "$mode" --workload "$w" --sessions "$SESSIONS" \
					--inflight "$INFLIGHT" --rate "$rate" --duration "$DURATION" --warmup "$WARMUP"
			done
		done
	done
}

phase_clients() {
	local mode=$1 rep w n name
	for rep in $(seq "$REPS"); do
		for w in $CLIENT_WORKLOADS; do
			for n in $CLIENT_COUNTS; do
				for name in "${SERVERS[@]}"; do
					bench clients "$name" "$rep" "$mode" --workload "$w" --sessions "$n" \
						--inflight "$CLIENT_INFLIGHT" --duration "$DURATION" --warmup "$WARMUP"
				done
			done
		done
	done
}

# phase_memory: per rep, fresh servers (or ensembles), the idle RSS, then
# MEM_ZNODES znodes and the RSS after MEM_SETTLE seconds of quiet. An
# ensemble's figures are its members' sums; "members", "member_idle_rss_bytes"
# and "member_rss_bytes" have each member's.
phase_memory() {
	local mode=$1 rep name idle settled idle_list settled_list n
	for rep in $(seq "$REPS"); do
		for name in "${SERVERS[@]}"; do
			start_fresh "$name"
			sleep "$MEM_SETTLE"
			idle=$(rss_sum "$name") idle_list=$(rss_list "$name")
			bench memory "$name" "$rep" "$mode" --workload populate --znodes "$MEM_ZNODES" --sessions 32
			sleep "$MEM_SETTLE"
			settled=$(rss_sum "$name") settled_list=$(rss_list "$name")
			n=$(members "$name" | wc -w)
			emit "{\"type\":\"memory\",\"server\":\"$name\",\"rep\":$rep,\"mode\":\"$mode\",\"znodes\":$MEM_ZNODES\
,\"idle_rss_bytes\":$idle,\"rss_bytes\":$settled,\"settle_s\":$MEM_SETTLE\
,\"members\":$n,\"member_idle_rss_bytes\":$idle_list,\"member_rss_bytes\":$settled_list}"
			log "  memory $name rep $rep: idle $((idle >> 20)) MiB, with $MEM_ZNODES znodes $((settled >> 20)) MiB (members: $settled_list)"
			stop_kind "$name"
		done
	done
}

# now_s prints the time in seconds with nanoseconds.
now_s() { date +%s.%N; }

# phase_restart (standalone only): fresh servers holding ZNODES znodes; per
# rep and server, kill -9, start again, and time until it serves and until a
# read answers.
phase_restart() {
	local mode=$1 rep name
	if [[ $mode != standalone ]]; then
		log "  restart: measured in standalone mode only; skipped"
		return 0
	fi
	for name in "${SERVERS[@]}"; do
		start_fresh "$name"
		bench restart-populate "$name" 0 "$mode" --workload populate --znodes "$ZNODES" --sessions 32
	done
	for rep in $(seq "$REPS"); do
		for name in "${SERVERS[@]}"; do
			local pid=${PID[$name]} rss_before t0 t_serve t_read data_bytes rc=0 out
			rss_before=$(rss_bytes "$pid")
			data_bytes=$(du -sb "${DATA[$name]}" | cut -f1)
			kill -KILL "$pid"
			wait "$pid" 2>/dev/null || true
			PID[$name]=
			t0=$(now_s)
			launch "$name"
			wait_serving "$name"
			t_serve=$(now_s)
			out=$("$PADDOCK" bench --servers "127.0.0.1:${PORT[$name]}" --workload get --ops 1 --keys 1 \
				--sessions 1 --inflight 1 --json 2>"$TMP/bench.err") || rc=$?
			t_read=$(now_s)
			((rc == 0)) || die "restart $name: the first read failed: $(tail -n 3 "$TMP/bench.err")"
			local serve_s read_s
			serve_s=$(awk -v a="$t0" -v b="$t_serve" 'BEGIN { printf "%.3f", b - a }')
			read_s=$(awk -v a="$t0" -v b="$t_read" 'BEGIN { printf "%.3f", b - a }')
			emit "{\"type\":\"restart\",\"server\":\"$name\",\"rep\":$rep,\"mode\":\"$mode\",\"znodes\":$ZNODES\
,\"serving_s\":$serve_s,\"read_s\":$read_s,\"rss_before_bytes\":$rss_before\
,\"rss_after_bytes\":$(rss_bytes "${PID[$name]}"),\"data_dir_bytes\":$data_bytes,\"load1\":$(load1)}"
			log "  restart $name rep $rep with $ZNODES znodes: serving after ${serve_s}s, first read after ${read_s}s"
		done
	done
	for name in "${SERVERS[@]}"; do stop_server "$name"; done
}

# phase_failover (ensemble only): per rep and kind, scripts/failover kills
# the leader under FAILOVER_WRITERS writing sessions and times the recovery;
# then the killed member is started again on its data and timed until it
# serves. The record is the program's JSON plus "type", "server", "rep",
# "mode", "load1" and "rejoin_s".
phase_failover() {
	local mode=$1 rep name
	if [[ $mode != ensemble ]]; then
		log "  failover: measured in ensemble mode only; skipped"
		return 0
	fi
	for rep in $(seq "$REPS"); do
		for name in "${SERVERS[@]}"; do
			local l1 out rc=0 line killed key="" t0 rejoin=null extra
			l1=$(load1)
			out=$("$FAILOVER" -servers "$(addrs "$name")" -pids "$(pids "$name")" \
				-writers "$FAILOVER_WRITERS" -warmup "$FAILOVER_WARMUP" 2>"$TMP/failover.err") || rc=$?
			line=$(tail -n 1 <<<"$out")
			killed=$(sed -n 's/.*"killed_member":\([0-9][0-9]*\).*/\1/p' <<<"$line")
			if [[ -n $killed && $killed != 0 ]]; then
				key=$name.$killed
				wait "${PID[$key]}" 2>/dev/null || true # killed by scripts/failover
				PID[$key]=
				t0=$(now_s)
				launch "$key"
				wait_serving "$key"
				rejoin=$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN { printf "%.3f", b - a }')
			fi
			extra="\"type\":\"failover\",\"server\":\"$name\",\"rep\":$rep,\"mode\":\"$mode\",\"load1\":$l1,\"rejoin_s\":$rejoin"
			if [[ $line == "{"* ]]; then
				((rc == 0)) || extra+=",\"failed\":true"
				emit "{$extra,${line#\{}"
			else
				emit "{$extra,\"failed\":true,\"error\":$(json_str "$(tail -n 5 "$TMP/failover.err")")}"
			fi
			if ((rc != 0)); then
				log "  failover $name rep $rep failed: $(tail -n 3 "$TMP/failover.err")"
			else
				log "  failover $name rep $rep: $(jq -r '"killed member \(.killed_member); new leader after \(.leader_s*1000|floor) ms, first write \(.first_write_s*1000|floor) ms, every writer \(.all_writers_s*1000|floor) ms"' <<<"$line" 2>/dev/null || echo ok); killed member serving again after ${rejoin}s"
			fi
			local k
			for k in $(members "$name"); do
				[[ -n ${PID[$k]:-} ]] || { launch "$k"; log "  started $k again"; }
				wait_serving "$k"
			done
		done
	done
}

# --- main --------------------------------------------------------------------

if [[ -n ${PADDOCK_BIN:-} ]]; then
	PADDOCK=$PADDOCK_BIN
else
	log "building bin/paddock"
	# -buildvcs=auto overrides a GOFLAGS=-buildvcs=false, so that the binary
	# records the revision the results' headers name (see header).
	go build -buildvcs=auto -o bin/paddock ./cmd/paddock
	PADDOCK=$ROOT/bin/paddock
fi
if [[ " $MODES " == *" ensemble "* && " $PHASES " == *" failover "* ]]; then
	log "building scripts/failover"
	go build -o "$TMP/failover" ./scripts/failover
	FAILOVER=$TMP/failover
fi

cat >"$TMP/log4j.properties" <<'L4J'
log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
L4J

mkdir -p "$(dirname "$OUT")"
[[ $APPEND == 1 ]] || : >"$OUT"
log "results go to $OUT$([[ $APPEND == 1 ]] && echo ' (appended)'); temporary directory $TMP"

for mode in $MODES; do
	MODE=$mode
	for name in "${SERVERS[@]}"; do start_fresh "$name"; done
	header
	log "pre-warm: $PREWARM of mixed, then $PREWARM_EACH of each other workload, on each server"
	for name in "${SERVERS[@]}"; do
		"$PADDOCK" bench --servers "$(addrs "$name")" --workload mixed --sessions "$SESSIONS" \
			--inflight "$INFLIGHT" --duration "$PREWARM" --json >/dev/null 2>"$TMP/bench.err" ||
			die "pre-warm of $name failed: $(tail -n 3 "$TMP/bench.err")"
		for w in $WORKLOADS; do
			[[ $w != mixed && $PREWARM_EACH != 0s && $PREWARM_EACH != 0 ]] || continue
			"$PADDOCK" bench --servers "$(addrs "$name")" --workload "$w" --sessions "$SESSIONS" \
				--inflight "$INFLIGHT" --duration "$PREWARM_EACH" --json >/dev/null 2>"$TMP/bench.err" ||
				die "pre-warm ($w) of $name failed: $(tail -n 3 "$TMP/bench.err")"
		done
	done
	for phase in $PHASES; do
		# workloads, latency, clients and (in ensemble mode) failover need both kinds
		# up; memory and restart start their own.
		if [[ $phase == workloads || $phase == latency || $phase == clients || ($phase == failover && $mode == ensemble) ]]; then
			for name in "${SERVERS[@]}"; do running "$name" || start_fresh "$name"; done
		fi
		log "phase $phase ($mode)"
		"phase_$phase" "$mode"
	done
	for name in "${SERVERS[@]}"; do stop_kind "$name"; done
done
log "done: $(wc -l <"$OUT") records in $OUT"
log "report: go run ./scripts/benchreport -in $OUT -out docs"
