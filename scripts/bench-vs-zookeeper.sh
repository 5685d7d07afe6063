#!/usr/bin/env bash
# bench-vs-zookeeper.sh: Paddock against Apache ZooKeeper 3.8, side by side,
# on this machine, with `paddock bench` as the client (docs/bench.md).
#
# It starts one standalone Apache ZooKeeper (Debian's zookeeper package, run
# as the tests run it with internal/zktest's ProductionJVM: only the JVM's own
# defaults for heap, GC and JIT) and one standalone Paddock, both with the
# same zoo.cfg settings: fsync on, tickTime=2000, maxClientCnxns=0, free
# loopback ports, data under a temporary directory. Then, measuring each
# server in turn (A B A B: machine drift hits both):
#
#   1. pre-warm   PREWARM of the mixed workload on each server, not recorded
#                 (ZooKeeper's JIT needs it)
#   2. workloads  every workload of WORKLOADS, REPS times, with SESSIONS
#                 sessions x INFLIGHT calls in flight             series "workload"
#   3. clients    get and set with 1, 4, 16, 64 sessions (CLIENT_COUNTS) of
#                 CLIENT_INFLIGHT call(s) in flight each           series "clients"
#   4. memory     fresh servers; RSS idle, then after populating MEM_ZNODES
#                 znodes, after MEM_SETTLE of quiet                series "memory"
#   5. restart    fresh servers; populate ZNODES znodes, then REPS times:
#                 kill -9, start again, time until the server serves
#                 ("srvr" answers with its mode) and until a read answers
#                 (paddock bench --workload get --ops 1)           type "restart"
#
# Every bench run passes --server-pid, so the server's CPU per op and RSS are
# recorded. Output: one JSON object per line in OUT, the first a header
# ("type":"header": machine, versions, settings, the command), then one per
# run: paddock bench's --json result plus "type", "series", "server", "rep",
# "mode" (and "load1", the 1-minute load average before the run).
# Turn it into docs/benchmarks.md's generated section and charts with
#
#   go run ./scripts/benchreport -in bench-results/results.jsonl -out docs
#
# Not measured: RSS per watch (paddock bench's watch-fanout gives each
# watcher session one watch, so RSS would measure sessions, not watches; see
# test/sidebyside's BenchmarkMemory), 3-member ensembles and leader failover
# (Paddock ensembles do not exist yet: MODES=ensemble fails).
#
# Environment (defaults in brackets; QUICK=1 changes the defaults to a
# smoke test that runs everything for a second or so):
#   DURATION [10s]  WARMUP [3s]  REPS [3]  SESSIONS [16]  INFLIGHT [16]
#   WORKLOADS [get exists children set create mixed multi ephemeral-churn sessions watch-fanout]
#   CLIENT_COUNTS [1 4 16 64]  CLIENT_INFLIGHT [1]  CLIENT_WORKLOADS [get set]
#   ZNODES [1000000] (restart)  MEM_ZNODES [100000]  MEM_SETTLE [3]
#   PREWARM [10s]  MODES [standalone]  OUT [bench-results/results.jsonl]
#   PHASES [workloads clients memory restart]   (a subset runs only those)
#   PADDOCK_BIN [bin/paddock, built here]  JAVA [java]  ZK_JVM_FLAGS []
#   TICK_TIME [2000]  KEEP_TMP [0] (keep the temporary directory and logs)

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# The knobs given in the environment, for the header's command line.
KNOBS=(QUICK DURATION WARMUP REPS SESSIONS INFLIGHT WORKLOADS CLIENT_COUNTS CLIENT_INFLIGHT CLIENT_WORKLOADS
	ZNODES MEM_ZNODES MEM_SETTLE PREWARM MODES PHASES ZK_JVM_FLAGS TICK_TIME)
declare -A ENV_GIVEN=()
for knob in "${KNOBS[@]}"; do
	if [[ -v $knob ]]; then ENV_GIVEN[$knob]=${!knob}; fi
done

if [[ "${QUICK:-0}" == 1 ]]; then
	: "${DURATION:=1s}" "${WARMUP:=0s}" "${REPS:=1}" "${PREWARM:=1s}"
	: "${CLIENT_COUNTS:=1 16}" "${ZNODES:=5000}" "${MEM_ZNODES:=5000}" "${MEM_SETTLE:=1}"
fi
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
REPS=${REPS:-3}
SESSIONS=${SESSIONS:-16}
INFLIGHT=${INFLIGHT:-16}
WORKLOADS=${WORKLOADS:-get exists children set create mixed multi ephemeral-churn sessions watch-fanout}
CLIENT_COUNTS=${CLIENT_COUNTS:-1 4 16 64}
CLIENT_INFLIGHT=${CLIENT_INFLIGHT:-1}
CLIENT_WORKLOADS=${CLIENT_WORKLOADS:-get set}
ZNODES=${ZNODES:-1000000}
MEM_ZNODES=${MEM_ZNODES:-100000}
MEM_SETTLE=${MEM_SETTLE:-3}
PREWARM=${PREWARM:-10s}
MODES=${MODES:-standalone}
OUT=${OUT:-bench-results/results.jsonl}
PHASES=${PHASES:-workloads clients memory restart}
JAVA=${JAVA:-java}
ZK_JVM_FLAGS=${ZK_JVM_FLAGS:-}
TICK_TIME=${TICK_TIME:-2000}
KEEP_TMP=${KEEP_TMP:-0}
ZK_CLASSPATH=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar
SERVERS=(zookeeper paddock) # the order of every A B pair

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

for mode in $MODES; do
	case $mode in
	standalone) ;;
	ensemble)
		die "MODES=ensemble: Paddock ensembles are not implemented yet (a later issue), so there is" \
			"nothing to compare 3-member ensembles or leader failover with; use MODES=standalone" ;;
	*) die "MODES: unknown mode '$mode' (known: standalone; ensemble is not implemented yet)" ;;
	esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer, not '$REPS'"
for z in "$ZNODES" "$MEM_ZNODES"; do
	[[ "$z" =~ ^[1-9][0-9]*$ ]] || die "ZNODES and MEM_ZNODES must be positive integers, not '$z'"
done
for p in $PHASES; do
	case $p in workloads | clients | memory | restart) ;; *) die "PHASES: unknown phase '$p'" ;; esac
done
for jar in ${ZK_CLASSPATH//:/ }; do
	[[ -f $jar ]] || die "$jar is missing: install Debian's zookeeper package (apt-get install zookeeper)"
done
command -v "$JAVA" >/dev/null || die "no java ('$JAVA'): install a JRE or set JAVA"

# --- processes ---------------------------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-vs-zookeeper.XXXXXX")
declare -A PID=() PORT=() DATA=() CFG=() LOGF=()

# stop_server ends one server by its PID: SIGTERM, then SIGKILL after 20 s.
stop_server() {
	local name=$1 pid=${PID[$1]:-}
	[[ -n $pid ]] || return 0
	PID[$name]=
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	for name in "${SERVERS[@]}"; do stop_server "$name"; done
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
# currently serving requests" until its database is loaded).
serving() { fourlw "$1" srvr | grep -q '^Mode:'; }

# free_port prints a loopback port nobody listens on, below the ephemeral
# range so that client sockets cannot take it.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 12000))
		if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q . &&
			! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free port found"
}

# write_config writes the zoo.cfg both servers read (Paddock reads zoo.cfg
# too, and ignores forceSync: it always fsyncs).
write_config() {
	local name=$1
	cat >"${CFG[$name]}" <<EOF
tickTime=$TICK_TIME
initLimit=10
syncLimit=5
dataDir=${DATA[$name]}
clientPort=${PORT[$name]}
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=yes
4lw.commands.whitelist=*
admin.enableServer=false
EOF
}

# launch starts the named server on its config and data dir, in the
# background; PID[name] is the server process itself (java or paddock).
launch() {
	local name=$1
	case $name in
	zookeeper)
		# shellcheck disable=SC2086 # ZK_JVM_FLAGS is a list of flags
		"$JAVA" -Djava.awt.headless=true -Dfile.encoding=UTF-8 $ZK_JVM_FLAGS \
			-Dlog4j.configuration="file:$TMP/log4j.properties" \
			-Dzookeeper.jmx.log4j.disable=true -Dzookeeper.admin.enableServer=false \
			-cp "$ZK_CLASSPATH" org.apache.zookeeper.server.quorum.QuorumPeerMain "${CFG[$name]}" \
			>>"${LOGF[$name]}" 2>&1 </dev/null &
		;;
	paddock)
		"$PADDOCK" server --config "${CFG[$name]}" >>"${LOGF[$name]}" 2>&1 </dev/null &
		;;
	esac
	PID[$name]=$!
}

# wait_serving waits until the named server serves; it fails after 300 s or
# when the process exits.
wait_serving() {
	local name=$1 deadline=$((SECONDS + 300))
	until serving "${PORT[$name]}"; do
		if ! kill -0 "${PID[$name]}" 2>/dev/null; then
			tail -n 30 "${LOGF[$name]}" >&2 || true
			die "$name exited while starting (log above: ${LOGF[$name]})"
		fi
		((SECONDS < deadline)) || die "$name does not serve after 300 s (log: ${LOGF[$name]})"
		sleep 0.02
	done
}

# start_fresh starts the named server with an empty data directory.
start_fresh() {
	local name=$1
	stop_server "$name"
	local dir="$TMP/$name"
	rm -rf "$dir"
	mkdir -p "$dir/data"
	DATA[$name]=$dir/data CFG[$name]=$dir/zoo.cfg LOGF[$name]=$dir/server.log
	PORT[$name]=$(free_port)
	write_config "$name"
	launch "$name"
	wait_serving "$name"
	log "$name serving on 127.0.0.1:${PORT[$name]}, pid ${PID[$name]}"
}

rss_bytes() { awk '/^VmRSS:/ { printf "%.0f\n", $2 * 1024 }' "/proc/$1/status"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

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

# bench runs paddock bench against the named server with the given flags and
# records its JSON result with the fields "series", "server", "rep", "mode".
bench() {
	local series=$1 name=$2 rep=$3 mode=$4
	shift 4
	local l1 out rc=0 line
	l1=$(load1)
	out=$("$PADDOCK" bench --servers "127.0.0.1:${PORT[$name]}" --server-pid "${PID[$name]}" --json "$@" 2>"$TMP/bench.err") || rc=$?
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
		kill -0 "${PID[$name]}" 2>/dev/null || die "$name is no longer running (log: ${LOGF[$name]})"
		return 0
	fi
	log "  $series $name rep $rep $*: $(jq -r '"\(.ops_per_s|floor) ops/s, p99 \(.latency_us.p99) µs, CPU \(.server_cpu_us_per_op // 0 | .*10|floor/10) µs/op"' <<<"$line" 2>/dev/null || echo ok)"
}

header() {
	local zkv pdv rev dirty=false
	zkv=$(fourlw "${PORT[zookeeper]}" srvr | sed -n 's/^Zookeeper version: //p' | head -n 1)
	pdv=$(fourlw "${PORT[paddock]}" srvr | sed -n 's/^Zookeeper version: //p' | head -n 1)
	rev=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
	[[ -z $(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]] || dirty=true
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
,\"command\":$(json_str "$cmd")\
,\"nproc\":$(nproc),\"cpu_model\":$(json_str "$cpu"),\"mem_bytes\":$mem,\"kernel\":$(json_str "$kernel")\
,\"load1\":$(load1)\
,\"zookeeper_version\":$(json_str "$zkv"),\"zookeeper_package\":$(json_str "$(dpkg-query -W -f '${Version}' zookeeper 2>/dev/null || true)")\
,\"java\":$(json_str "$java_v"),\"zk_jvm_flags\":$(json_str "$ZK_JVM_FLAGS")\
,\"paddock_version\":$(json_str "$pdv"),\"paddock_revision\":$(json_str "$rev"),\"paddock_modified\":$dirty\
,\"go\":$(json_str "$(go env GOVERSION 2>/dev/null || true)")\
,\"settings\":{\"duration\":$(json_str "$DURATION"),\"warmup\":$(json_str "$WARMUP"),\"reps\":$REPS\
,\"sessions\":$SESSIONS,\"inflight\":$INFLIGHT,\"workloads\":$(json_str "$WORKLOADS")\
,\"client_counts\":$(json_str "$CLIENT_COUNTS"),\"client_inflight\":$CLIENT_INFLIGHT,\"client_workloads\":$(json_str "$CLIENT_WORKLOADS")\
,\"znodes\":$ZNODES,\"mem_znodes\":$MEM_ZNODES,\"mem_settle_s\":$MEM_SETTLE,\"prewarm\":$(json_str "$PREWARM")\
,\"tick_time\":$TICK_TIME,\"modes\":$(json_str "$MODES"),\"phases\":$(json_str "$PHASES")}}"
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

# phase_memory: per rep, fresh servers, the idle RSS, then MEM_ZNODES znodes
# and the RSS after MEM_SETTLE seconds of quiet.
phase_memory() {
	local mode=$1 rep name idle settled
	for rep in $(seq "$REPS"); do
		for name in "${SERVERS[@]}"; do
			start_fresh "$name"
			sleep "$MEM_SETTLE"
			idle=$(rss_bytes "${PID[$name]}")
			bench memory "$name" "$rep" "$mode" --workload populate --znodes "$MEM_ZNODES" --sessions 32
			sleep "$MEM_SETTLE"
			settled=$(rss_bytes "${PID[$name]}")
			emit "{\"type\":\"memory\",\"server\":\"$name\",\"rep\":$rep,\"mode\":\"$mode\",\"znodes\":$MEM_ZNODES,\"idle_rss_bytes\":$idle,\"rss_bytes\":$settled,\"settle_s\":$MEM_SETTLE}"
			log "  memory $name rep $rep: idle $((idle >> 20)) MiB, with $MEM_ZNODES znodes $((settled >> 20)) MiB"
			stop_server "$name"
		done
	done
}

# now_s prints the time in seconds with nanoseconds.
now_s() { date +%s.%N; }

# phase_restart: fresh servers holding ZNODES znodes; per rep and server,
# kill -9, start again, and time until it serves and until a read answers.
phase_restart() {
	local mode=$1 rep name
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

# --- main --------------------------------------------------------------------

if [[ -n ${PADDOCK_BIN:-} ]]; then
	PADDOCK=$PADDOCK_BIN
else
	log "building bin/paddock"
	go build -o bin/paddock ./cmd/paddock
	PADDOCK=$ROOT/bin/paddock
fi

cat >"$TMP/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
EOF

mkdir -p "$(dirname "$OUT")"
: >"$OUT"
log "results go to $OUT; temporary directory $TMP"

for mode in $MODES; do
	for name in "${SERVERS[@]}"; do start_fresh "$name"; done
	header
	log "pre-warm: $PREWARM of mixed on each server"
	for name in "${SERVERS[@]}"; do
		"$PADDOCK" bench --servers "127.0.0.1:${PORT[$name]}" --workload mixed --sessions "$SESSIONS" \
			--inflight "$INFLIGHT" --duration "$PREWARM" --json >/dev/null 2>"$TMP/bench.err" ||
			die "pre-warm of $name failed: $(tail -n 3 "$TMP/bench.err")"
	done
	for phase in $PHASES; do
		case $phase in workloads | clients)
			# both servers must be up; memory and restart start their own.
			for name in "${SERVERS[@]}"; do [[ -n ${PID[$name]:-} ]] || start_fresh "$name"; done ;;
		esac
		log "phase $phase ($mode)"
		"phase_$phase" "$mode"
	done
	for name in "${SERVERS[@]}"; do stop_server "$name"; done
done
log "done: $(wc -l <"$OUT") records in $OUT"
log "report: go run ./scripts/benchreport -in $OUT -out docs"
