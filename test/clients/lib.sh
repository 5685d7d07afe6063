# lib.sh: a small expect-like driver for interactive ZooKeeper shells, sourced
# by zkcli_session.sh and cli_mt_session.sh (bash only).
#
# A client runs in the background with its stdin on a FIFO that this script
# holds open and its stdout+stderr in a log file. Each command is followed by
# a "marker" command whose unique answer tells us the command's output is
# complete (both shells run a session's requests in order), so every command
# gets its own output chunk in $OUT without guessing with sleeps. Waits poll
# the log with a deadline.
#
# Usage:
#   lib_init NAME                   # creates $WORK, installs the EXIT trap
#   client_start ID MARKFMT MARKRE -- CMD ARGS...
#       MARKFMT: printf format of the marker command, %s = a unique token
#       MARKRE:  regex (grep -E) of the marker's answer, %s = the same token
#   run ID "command"                # sends it, waits for the marker, sets OUT
#   expect "regex" ["message"]      # OUT must match
#   expect_not "regex" ["message"]  # OUT must not match
#   wait_log ID START "regex" [secs]  # poll ID's log after line START
#   log_lines ID                    # number of complete lines in ID's log
#   client_stop ID "quit"           # sends the quit command, waits for exit
#   client_kill ID                  # SIGKILL by PID
#   fail "message"

set -u

# Default and maximum wait for any answer, in seconds.
WAIT_SECS=${WAIT_SECS:-30}

declare -A CLI_PID CLI_FD CLI_LOG CLI_POS CLI_MARKFMT CLI_MARKRE
MARK_SEQ=0
OUT=""
LAST_CMD=""
SESSION_NAME=""
WORK=""

lib_init() {
	SESSION_NAME=$1
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/${SESSION_NAME}.XXXXXX") || {
		echo "FAIL: $SESSION_NAME: cannot create a temporary directory" >&2
		exit 2
	}
	trap lib_cleanup EXIT
}

lib_cleanup() {
	local id
	for id in "${!CLI_PID[@]}"; do
		client_kill "$id"
	done
	[ -n "$WORK" ] && rm -rf -- "$WORK"
}

say() { printf '%s\n' "$*"; }

fail() {
	say ""
	say "FAIL: $SESSION_NAME: $*"
	if [ -n "$LAST_CMD" ]; then
		say "  last command: $LAST_CMD"
		say "  its output:"
		printf '%s\n' "$OUT" | sed 's/^/  | /'
	fi
	exit 1
}

# noise filters lines that are log chatter rather than answers.
noise() {
	grep -v -E '^SLF4J:|^Picked up JAVA_TOOL_OPTIONS|^$' || true
}

log_lines() {
	local n
	n=$(wc -l <"${CLI_LOG[$1]}")
	echo "${n// /}"
}

# lines_after ID START [END]: complete lines START+1..END of ID's log.
lines_after() {
	local id=$1 start=$2 end=${3:-$(log_lines "$1")}
	if [ "$end" -gt "$start" ]; then
		sed -n "$((start + 1)),${end}p" "${CLI_LOG[$id]}"
	fi
}

client_start() {
	local id=$1 markfmt=$2 markre=$3
	shift 3
	[ "$1" = "--" ] && shift
	local fifo="$WORK/$id.in" log="$WORK/$id.log" fd
	mkfifo "$fifo" || fail "mkfifo $fifo"
	: >"$log"
	"$@" <"$fifo" >"$log" 2>&1 &
	CLI_PID[$id]=$!
	exec {fd}>"$fifo" # unblocks the client's open of the FIFO
	CLI_FD[$id]=$fd
	CLI_LOG[$id]=$log
	CLI_POS[$id]=0
	CLI_MARKFMT[$id]=$markfmt
	CLI_MARKRE[$id]=$markre
	say "[$id] started (pid ${CLI_PID[$id]}): $*"
}

client_alive() {
	[ -n "${CLI_PID[$1]:-}" ] && kill -0 "${CLI_PID[$1]}" 2>/dev/null
}

send() {
	local id=$1 line=$2
	client_alive "$id" || fail "[$id] exited before command: $line"$'\n'"$(tail -n 20 "${CLI_LOG[$id]}")"
	printf '%s\n' "$line" >&"${CLI_FD[$id]}" || fail "[$id] cannot write command: $line"
}

# wait_log ID START REGEX [SECS]: poll until a complete line after START
# matches REGEX; sets MATCH_LINE (its line number) and MATCH (the line).
wait_log() {
	local id=$1 start=$2 re=$3 secs=${4:-$WAIT_SECS}
	local deadline=$((SECONDS + secs)) found
	while :; do
		found=$(lines_after "$id" "$start" | grep -n -E -m1 -- "$re" || true)
		if [ -n "$found" ]; then
			MATCH_LINE=$((start + ${found%%:*}))
			MATCH=${found#*:}
			return 0
		fi
		if ! client_alive "$id"; then
			# One last look: the line may have been written just before exit.
			found=$(lines_after "$id" "$start" | grep -n -E -m1 -- "$re" || true)
			if [ -n "$found" ]; then
				MATCH_LINE=$((start + ${found%%:*}))
				MATCH=${found#*:}
				return 0
			fi
			return 2
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			return 1
		fi
		sleep 0.05
	done
}

# run ID COMMAND: send COMMAND and a marker; OUT = output before the marker.
run() {
	local id=$1 cmd=$2
	MARK_SEQ=$((MARK_SEQ + 1))
	local token="mark-$$-$MARK_SEQ"
	# shellcheck disable=SC2059
	local markcmd markre
	markcmd=$(printf "${CLI_MARKFMT[$id]}" "$token")
	markre=$(printf "${CLI_MARKRE[$id]}" "$token")
	local start=${CLI_POS[$id]}
	LAST_CMD="[$id] $cmd"
	say "[$id] > $cmd"
	send "$id" "$cmd"
	send "$id" "$markcmd"
	local rc=0
	wait_log "$id" "$start" "$markre" || rc=$?
	if [ $rc -ne 0 ]; then
		OUT=$(lines_after "$id" "$start" | noise)
		if [ $rc -eq 2 ]; then
			fail "[$id] exited while running: $cmd"
		fi
		fail "[$id] no answer within ${WAIT_SECS}s to: $cmd"
	fi
	OUT=$(lines_after "$id" "$start" "$((MATCH_LINE - 1))" | noise)
	CLI_POS[$id]=$MATCH_LINE
	[ -n "$OUT" ] && printf '%s\n' "$OUT" | sed 's/^/    /'
	return 0
}

expect() {
	printf '%s\n' "$OUT" | grep -q -E -- "$1" || fail "${2:-expected output matching /$1/}"
}

expect_not() {
	if printf '%s\n' "$OUT" | grep -q -E -- "$1"; then
		fail "${2:-unexpected output matching /$1/}"
	fi
}

# await ID START REGEX MESSAGE: like wait_log, failing with MESSAGE.
await() {
	local id=$1 start=$2 re=$3 msg=$4
	local rc=0
	wait_log "$id" "$start" "$re" || rc=$?
	if [ $rc -ne 0 ]; then
		OUT=$(lines_after "$id" "$start" | noise)
		LAST_CMD="[$id] (waiting for /$re/)"
		fail "$msg"
	fi
	say "[$id] saw: $MATCH"
}

# client_stop ID QUITCMD: ask the client to quit and wait (bounded) for it.
client_stop() {
	local id=$1 quit=$2 deadline=$((SECONDS + WAIT_SECS))
	say "[$id] > $quit"
	if client_alive "$id"; then
		printf '%s\n' "$quit" >&"${CLI_FD[$id]}" 2>/dev/null || true
	fi
	local fd=${CLI_FD[$id]}
	exec {fd}>&-
	while client_alive "$id"; do
		[ "$SECONDS" -ge "$deadline" ] && fail "[$id] did not exit within ${WAIT_SECS}s of: $quit"
		sleep 0.05
	done
	wait "${CLI_PID[$id]}" 2>/dev/null || true
	lines_after "$id" "${CLI_POS[$id]}" | noise | sed 's/^/    /'
	unset "CLI_PID[$id]" "CLI_FD[$id]"
}

# client_kill ID: SIGKILL the client by PID (no clean session close).
client_kill() {
	local id=$1
	[ -n "${CLI_PID[$id]:-}" ] || return 0
	kill -KILL "${CLI_PID[$id]}" 2>/dev/null || true
	wait "${CLI_PID[$id]}" 2>/dev/null || true
	local fd=${CLI_FD[$id]:-}
	if [ -n "$fd" ]; then
		exec {fd}>&- 2>/dev/null || true
	fi
	unset "CLI_PID[$id]" "CLI_FD[$id]"
}
