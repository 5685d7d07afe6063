#!/usr/bin/env bash
# demo.sh runs the ZooKeeper book's master-worker application
# (examples/masterworker, docs/master-worker.md) as real processes:
#
#   - a three-member Paddock ensemble (zoo.cfg with server.N lines and myid,
#     loopback ports picked at random, tickTime 500 ms);
#   - two masters, three workers and a client submitting $TASKS tasks, each a
#     "paddock example" process with a 2 s session timeout;
#   - midway, kill -9 of the primary master and of worker 3;
#   - then it waits (bounded) until every task has a status and checks, from
#     the client's results and the workers' execution logs, that every
#     submitted task was completed exactly once.
#
# The last line on stdout is "N submitted, N completed exactly once, 0 lost";
# the exit status is 0 only when that holds. Every process is killed by pid
# on exit.
#
# Environment: PADDOCK_BIN, a paddock binary to use instead of building
# bin/paddock; TASKS (default 100); KEEP=1 keeps the work directory (logs,
# configurations, data) for a look afterwards.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TASKS=${TASKS:-100}
TICK_MS=500
SESSION=2s
KILL_AFTER=$((TASKS * 3 / 10)) # statuses seen before the kills
KILLED_WORKER=worker-3

say() { printf '%s\n' "$*"; }
warn() { printf 'demo: %s\n' "$*" >&2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/masterworker-demo.XXXXXX")
PIDS=()

# alive reports whether process $1 exists.
alive() { kill -0 "$1" 2>/dev/null; }

# wait_gone waits at most $2 seconds for process $1 to exit.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		alive "$1" || return 0
		sleep 0.1
	done
	return 1
}

cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait_gone "$pid" 5 || kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ ${KEEP:-} == 1 ]]; then
		warn "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for waits at most $1 seconds for the command that follows to succeed.
wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# fail explains why, prints a failing summary line last and exits 1.
fail() {
	warn "$*"
	warn "logs: $WORK (kept)"
	KEEP=1
	say "$TASKS submitted, 0 completed exactly once, $TASKS lost"
	exit 1
}

# --- the binary -----------------------------------------------------------
if [[ -n ${PADDOCK_BIN:-} ]]; then
	BIN=$PADDOCK_BIN
else
	say "building bin/paddock"
	(cd "$ROOT" && go build -o bin/paddock ./cmd/paddock)
	BIN=$ROOT/bin/paddock
fi

# --- ports ----------------------------------------------------------------
TAKEN=" "
# free_port sets PORT to a loopback port nobody uses, distinct from the
# ones picked before.
free_port() {
	local p i
	for ((i = 0; i < 500; i++)); do
		p=$((20000 + RANDOM % 40000))
		[[ $TAKEN == *" $p "* ]] && continue
		if command -v ss >/dev/null; then
			[[ -n $(ss -Htan "( sport = :$p )" 2>/dev/null) ]] && continue
		elif (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			continue
		fi
		TAKEN+="$p "
		PORT=$p
		return 0
	done
	return 1
}

# --- the ensemble ---------------------------------------------------------
declare -a CLIENT_PORT SERVER_LINE
for id in 1 2 3; do
	free_port || fail "no free port"
	CLIENT_PORT[id]=$PORT
	free_port || fail "no free port"
	peer=$PORT
	free_port || fail "no free port"
	SERVER_LINE[id]="server.$id=127.0.0.1:$peer:$PORT"
done
SERVERS="127.0.0.1:${CLIENT_PORT[1]},127.0.0.1:${CLIENT_PORT[2]},127.0.0.1:${CLIENT_PORT[3]}"

for id in 1 2 3; do
	dir=$WORK/server-$id
	mkdir -p "$dir/data"
	echo "$id" >"$dir/data/myid"
	{
		echo "tickTime=$TICK_MS"
		echo "initLimit=10"
		echo "syncLimit=5"
		echo "dataDir=$dir/data"
		echo "clientPort=${CLIENT_PORT[id]}"
		echo "clientPortAddress=127.0.0.1"
		echo "4lw.commands.whitelist=srvr,ruok"
		echo "admin.enableServer=false"
		printf '%s\n' "${SERVER_LINE[@]}"
	} >"$dir/zoo.cfg"
	"$BIN" server --config "$dir/zoo.cfg" >"$dir/server.log" 2>&1 &
	PIDS+=($!)
done
say "ensemble: $SERVERS (tickTime ${TICK_MS}ms); logs in $WORK (KEEP=1 keeps them)"

# mode prints the Mode: line of srvr from the member on port $1.
mode() {
	{
		exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && timeout 2 cat <&3
	} 2>/dev/null | sed -n 's/^Mode: //p'
}
ensemble_serves() {
	local id
	for id in 1 2 3; do
		[[ $(mode "${CLIENT_PORT[id]}") =~ ^(leader|follower)$ ]] || return 1
	done
}
wait_for 30 ensemble_serves || fail "the ensemble does not serve after 30s"
say "ensemble serving"

# --- the application ------------------------------------------------------
declare -A PID
# start NAME ROLE ARGS... runs "paddock example ROLE ARGS..." in the
# background, logging to $WORK/NAME.log.
start() {
	local name=$1
	shift
	"$BIN" example "$@" --servers "$SERVERS" --session-timeout "$SESSION" \
		>"$WORK/$name.out" 2>"$WORK/$name.log" &
	PID[$name]=$!
	PIDS+=($!)
}
logged() { grep -q -- "$2" "$WORK/$1.log" 2>/dev/null; }

start master-1 master --id master-1
wait_for 20 logged master-1 "elected primary master" || fail "master-1 not elected"
start master-2 master --id master-2
wait_for 20 logged master-2 "backup master" || fail "master-2 not a backup"
say "master-1 is the primary, master-2 a backup"

for id in 1 2 3; do
	start "worker-$id" worker --id "$id" --parallel 2 --work 100ms --log "$WORK/worker-$id.exec"
done
for id in 1 2 3; do
	wait_for 20 logged "worker-$id" "registered" || fail "worker-$id did not register"
done
say "workers 1, 2 and 3 registered"

RESULTS=$WORK/results
: >"$RESULTS"
start client submit --tasks "$TASKS" --interval 25ms --timeout 60s --results "$RESULTS"
say "client submitting $TASKS tasks"

statuses() { grep -c '^status ' "$RESULTS" || true; }
enough_statuses() { (($(statuses) >= KILL_AFTER)); }
wait_for 30 enough_statuses || fail "fewer than $KILL_AFTER statuses after 30s"

primary=
for m in master-1 master-2; do
	if logged "$m" "elected primary master"; then primary=$m; fi
done
# Disowned first, so that bash prints no "Killed" notice when it reaps them.
disown "${PID[$primary]}" "${PID[$KILLED_WORKER]}" 2>/dev/null || true
kill -KILL "${PID[$primary]}" "${PID[$KILLED_WORKER]}"
wait_gone "${PID[$primary]}" 5 && wait_gone "${PID[$KILLED_WORKER]}" 5 || fail "a killed process is still running"
say "after $(statuses) statuses: kill -9 $primary (the primary) and $KILLED_WORKER"

# The client exits once every task has a status (or after its --timeout).
wait_gone "${PID[client]}" 70 || fail "the client is still waiting after 70s"
client_status=0
wait "${PID[client]}" || client_status=$?
backup=master-2
[[ $primary == master-2 ]] && backup=master-1
if logged "$backup" "elected primary master"; then
	say "$backup took over"
else
	warn "$backup never became the primary"
	client_status=1
fi
recovered=$(grep -hcE 'moved back to /tasks|already done: assignment removed' "$WORK/$backup.log" || true)
say "$backup recovered $recovered assignment(s) of $KILLED_WORKER"

# A worker logs its commit in a callback that may run just after the client
# saw the status: wait for the live workers' logs to catch up.
live_done_caught_up() {
	local statuses done
	statuses=$(awk -v k="$KILLED_WORKER" '$1 == "status" && $4 != k' "$RESULTS" | wc -l)
	done=$(cat "$WORK"/worker-*.exec | awk -v k="$KILLED_WORKER" '$1 == "done" && $3 != k' | wc -l)
	((done >= statuses))
}
wait_for 10 live_done_caught_up || warn "the workers' logs lack commits"

# --- the check ------------------------------------------------------------
# The client's results hold "submitted <task>" and "status <task> done
# worker-X"; each worker's execution log "start <task> worker-X" when it
# begins a task and "done <task> worker-X" once its status is committed.
# A task is completed exactly once when the client saw one status for it,
# one commit is logged, by the worker the status names (the killed worker
# may have died between its commit and its log line), and the live workers
# executed it once if one of them committed it, never otherwise.
summary=$(awk -v killed="$KILLED_WORKER" '
	FNR == 1 { client = (FILENAME ~ /results$/) }
	client && $1 == "submitted" { if (!($2 in submitted)) nsub++; submitted[$2] = 1 }
	client && $1 == "status" { nstatus[$2]++; by[$2] = $4 }
	!client && $1 == "start" { if ($3 == killed) deadstarts[$2]++; else livestarts[$2]++ }
	!client && $1 == "done" { ncommit[$2]++; committer[$2] = $3 }
	END {
		ok = 0; lost = 0; rerun = 0
		for (t in submitted) {
			if (!(t in nstatus)) { lost++; print "lost: " t > "/dev/stderr"; continue }
			w = by[t]
			if (nstatus[t] != 1) { print t ": " nstatus[t] " statuses" > "/dev/stderr"; continue }
			if (ncommit[t] > 1 || (ncommit[t] == 1 && committer[t] != w) || (ncommit[t] == 0 && w != killed)) {
				print t ": status by " w ", commits logged " ncommit[t] " (" committer[t] ")" > "/dev/stderr"; continue
			}
			if (livestarts[t] + 0 != (w != killed)) {
				print t ": executed " livestarts[t] + 0 " times by live workers, status by " w > "/dev/stderr"; continue
			}
			if (deadstarts[t] > 0 && w != killed) rerun++
			ok++
		}
		print rerun
		printf "%d submitted, %d completed exactly once, %d lost\n", nsub, ok, lost
	}' "$RESULTS" "$WORK"/worker-*.exec)
rerun=$(head -n1 <<<"$summary")
last=$(tail -n1 <<<"$summary")
say "$rerun task(s) cut short by the kill of $KILLED_WORKER were executed again elsewhere"
if [[ $client_status != 0 ]]; then
	warn "the client exited with status $client_status; logs kept in $WORK"
	KEEP=1
fi
say "$last"
[[ $client_status == 0 && $last == "$TASKS submitted, $TASKS completed exactly once, 0 lost" ]]
