# lib.sh: a small expect-like driver for interactive ZooKeeper shells, sourced
# by zkcli_session.sh and cli_mt_session.sh (bash 5).
#
# A client runs in the background with its stdin and its stdout+stderr on two
# FIFOs that this script holds open. Each command is followed by a "marker"
# command whose unique answer tells us that the command's output is complete
# (both shells run a session's requests in order), so every command gets its
# own output without guessing with sleeps. Waiting is a blocking read with a
# deadline; the hot paths use only bash builtins, because process start-up
# can be slow on test machines.
#
# Usage:
#   lib_init NAME                     creates $WORK, installs the EXIT trap
#   client_start ID MARKFMT MARKRE -- CMD ARGS...
#       ID:      [A-Za-z0-9_]+
#       MARKFMT: printf format of the marker command, %s = a unique token
#       MARKRE:  regex of the marker's answer line, %s = the same token
#   run ID "command"                  sends it, waits for the marker; sets OUT
#   expect REGEX [MESSAGE]            a line of OUT must match REGEX
#   expect_not REGEX [MESSAGE]        no line of OUT may match REGEX
#   await ID START REGEX MESSAGE      wait for a line after line START
#   count_after ID START REGEX        prints how many lines after START match
#   log_lines ID                      prints the number of lines read so far
#   client_stop ID QUITCMD            sends QUITCMD, waits for the exit
#   client_kill ID                    SIGKILL by PID (no clean close)
#   fail MESSAGE
# Regexes are POSIX extended regexes, matched per line with [[ =~ ]].

set -u

# Default wait for any answer, in seconds.
WAIT_SECS=${WAIT_SECS:-30}

declare -A CLI_PID CLI_IN CLI_OUT CLI_PART CLI_EOF CLI_POS CLI_MARKFMT CLI_MARKRE
MARK_SEQ=0
OUT=""
OUT_LINES=()
LAST_CMD=""
SESSION_NAME=""
WORK=""
MATCH=""
MATCH_LINE=0
NOW_US=0

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
	if [ -n "$WORK" ]; then
		rm -rf -- "$WORK"
	fi
}

say() { printf '%s\n' "$*"; }

fail() {
	say ""
	say "FAIL: $SESSION_NAME: $*"
	if [ -n "$LAST_CMD" ]; then
		say "  last command: $LAST_CMD"
		say "  its output:"
		if [ ${#OUT_LINES[@]} -gt 0 ]; then
			printf '  | %s\n' "${OUT_LINES[@]}"
		fi
	fi
	exit 1
}

# is_noise: log chatter rather than answers.
is_noise() {
	[[ -z $1 || $1 =~ ^SLF4J: || $1 =~ ^Picked\ up\ JAVA_TOOL_OPTIONS ]]
}

# now_us: sets NOW_US to the wall clock in microseconds (no subshell).
now_us() {
	local t=$EPOCHREALTIME
	NOW_US=$((10#${t/./}))
}

client_start() {
	local id=$1 markfmt=$2 markre=$3
	shift 3
	if [ "${1:-}" = "--" ]; then
		shift
	fi
	local in="$WORK/$id.in" out="$WORK/$id.out" ifd ofd
	mkfifo "$in" "$out" || fail "mkfifo in $WORK"
	"$@" <"$in" >"$out" 2>&1 &
	CLI_PID[$id]=$!
	# Open in the order the child does, so neither open blocks forever.
	exec {ifd}>"$in"
	exec {ofd}<"$out"
	CLI_IN[$id]=$ifd
	CLI_OUT[$id]=$ofd
	CLI_PART[$id]=""
	CLI_EOF[$id]=0
	CLI_POS[$id]=0
	CLI_MARKFMT[$id]=$markfmt
	CLI_MARKRE[$id]=$markre
	declare -ga "CLI_LINES_$id=()"
	say "[$id] started (pid ${CLI_PID[$id]}): $*"
}

client_alive() {
	[ -n "${CLI_PID[$1]:-}" ] && kill -0 "${CLI_PID[$1]}" 2>/dev/null
}

send() {
	local id=$1 line=$2
	if ! client_alive "$id"; then
		collect_out "$id" "${CLI_POS[$id]}"
		fail "[$id] exited before command: $line"
	fi
	printf '%s\n' "$line" >&"${CLI_IN[$id]}" || fail "[$id] cannot write command: $line"
}

# pump ID SECS: read one line of output, waiting at most SECS.
# Returns 0 if a line was added, 1 on timeout, 2 at end of output.
pump() {
	local id=$1 secs=$2 line="" rc
	local -n lines="CLI_LINES_$id"
	if [ "${CLI_EOF[$id]}" = 1 ]; then
		return 2
	fi
	if IFS= read -r -t "$secs" line <&"${CLI_OUT[$id]}"; then
		lines+=("${CLI_PART[$id]}$line")
		CLI_PART[$id]=""
		return 0
	else
		rc=$?
	fi
	if [ "$rc" -gt 128 ]; then # timeout: keep the partial line
		CLI_PART[$id]+=$line
		return 1
	fi
	if [ -n "${CLI_PART[$id]}$line" ]; then
		lines+=("${CLI_PART[$id]}$line")
		CLI_PART[$id]=""
	fi
	CLI_EOF[$id]=1
	return 2
}

# wait_log ID START REGEX [SECS]: wait until a line after line START matches;
# sets MATCH and MATCH_LINE (1-based). Returns 1 on timeout, 2 if the
# client's output ended first.
wait_log() {
	local id=$1 start=$2 re=$3 secs=${4:-$WAIT_SECS}
	local -n lines="CLI_LINES_$id"
	local i=$start deadline left rc t
	now_us
	deadline=$((NOW_US + secs * 1000000))
	while :; do
		while [ "$i" -lt "${#lines[@]}" ]; do
			if [[ ${lines[i]} =~ $re ]]; then
				MATCH=${lines[i]}
				MATCH_LINE=$((i + 1))
				return 0
			fi
			i=$((i + 1))
		done
		now_us
		left=$((deadline - NOW_US))
		if [ "$left" -le 0 ]; then
			return 1
		fi
		printf -v t '%d.%06d' $((left / 1000000)) $((left % 1000000))
		rc=0
		pump "$id" "$t" || rc=$?
		if [ "$rc" -eq 2 ] && [ "$i" -ge "${#lines[@]}" ]; then
			return 2
		fi
	done
}

# collect_out ID START [END]: OUT_LINES/OUT = lines START+1..END, no noise.
collect_out() {
	local id=$1 start=$2
	local -n lines="CLI_LINES_$id"
	local end=${3:-${#lines[@]}} i
	OUT_LINES=()
	for ((i = start; i < end; i++)); do
		if ! is_noise "${lines[i]}"; then
			OUT_LINES+=("${lines[i]}")
		fi
	done
	OUT=""
	if [ ${#OUT_LINES[@]} -gt 0 ]; then
		printf -v OUT '%s\n' "${OUT_LINES[@]}"
	fi
}

log_lines() {
	local -n lines="CLI_LINES_$1"
	echo "${#lines[@]}"
}

# run ID COMMAND: send COMMAND and a marker; OUT = the output in between.
run() {
	local id=$1 cmd=$2 token markcmd markre start rc=0
	MARK_SEQ=$((MARK_SEQ + 1))
	token="mark-$$-$MARK_SEQ"
	# shellcheck disable=SC2059
	printf -v markcmd "${CLI_MARKFMT[$id]}" "$token"
	# shellcheck disable=SC2059
	printf -v markre "${CLI_MARKRE[$id]}" "$token"
	start=${CLI_POS[$id]}
	LAST_CMD="[$id] $cmd"
	say "[$id] > $cmd"
	send "$id" "$cmd"
	send "$id" "$markcmd"
	wait_log "$id" "$start" "$markre" || rc=$?
	if [ "$rc" -ne 0 ]; then
		collect_out "$id" "$start"
		if [ "$rc" -eq 2 ]; then
			fail "[$id] exited while running: $cmd"
		fi
		fail "[$id] no answer within ${WAIT_SECS}s to: $cmd"
	fi
	collect_out "$id" "$start" "$((MATCH_LINE - 1))"
	CLI_POS[$id]=$MATCH_LINE
	if [ ${#OUT_LINES[@]} -gt 0 ]; then
		printf '    %s\n' "${OUT_LINES[@]}"
	fi
	return 0
}

# out_matches REGEX: whether a line of OUT matches.
out_matches() {
	local re=$1 l
	for l in "${OUT_LINES[@]}"; do
		if [[ $l =~ $re ]]; then
			return 0
		fi
	done
	return 1
}

expect() {
	out_matches "$1" || fail "${2:-expected a line matching /$1/}"
}

expect_not() {
	if out_matches "$1"; then
		fail "${2:-unexpected line matching /$1/}"
	fi
}

# await ID START REGEX MESSAGE: wait_log, failing with MESSAGE.
await() {
	local id=$1 start=$2 re=$3 msg=$4 rc=0
	wait_log "$id" "$start" "$re" || rc=$?
	if [ "$rc" -ne 0 ]; then
		collect_out "$id" "$start"
		LAST_CMD="[$id] (waiting for /$re/)"
		fail "$msg"
	fi
	say "[$id] saw: $MATCH"
}

# count_after ID START REGEX: prints how many lines after START match.
count_after() {
	local -n lines="CLI_LINES_$1"
	local re=$3 i n=0
	for ((i = $2; i < ${#lines[@]}; i++)); do
		if [[ ${lines[i]} =~ $re ]]; then
			n=$((n + 1))
		fi
	done
	echo "$n"
}

# drain ID SECS: read output until it ends; fails (returns 1) after SECS.
drain() {
	local id=$1 secs=$2 deadline left t rc
	now_us
	deadline=$((NOW_US + secs * 1000000))
	while :; do
		now_us
		left=$((deadline - NOW_US))
		if [ "$left" -le 0 ]; then
			return 1
		fi
		printf -v t '%d.%06d' $((left / 1000000)) $((left % 1000000))
		rc=0
		pump "$id" "$t" || rc=$?
		if [ "$rc" -eq 2 ]; then
			return 0
		fi
	done
}

# client_stop ID QUITCMD: ask the client to quit; wait (bounded) for the end
# of its output and its exit.
client_stop() {
	local id=$1 quit=$2 fd
	say "[$id] > $quit"
	if client_alive "$id"; then
		printf '%s\n' "$quit" >&"${CLI_IN[$id]}" 2>/dev/null || true
	fi
	fd=${CLI_IN[$id]}
	exec {fd}>&-
	drain "$id" "$WAIT_SECS" || fail "[$id] did not exit within ${WAIT_SECS}s of: $quit"
	wait "${CLI_PID[$id]}" 2>/dev/null || true
	collect_out "$id" "${CLI_POS[$id]}"
	if [ ${#OUT_LINES[@]} -gt 0 ]; then
		printf '    %s\n' "${OUT_LINES[@]}"
	fi
	fd=${CLI_OUT[$id]}
	exec {fd}<&-
	unset "CLI_PID[$id]"
}

# client_kill ID: SIGKILL the client by PID.
client_kill() {
	local id=$1 fd
	if [ -z "${CLI_PID[$id]:-}" ]; then
		return 0
	fi
	kill -KILL "${CLI_PID[$id]}" 2>/dev/null || true
	wait "${CLI_PID[$id]}" 2>/dev/null || true
	fd=${CLI_IN[$id]}
	exec {fd}>&- 2>/dev/null || true
	fd=${CLI_OUT[$id]}
	exec {fd}<&- 2>/dev/null || true
	unset "CLI_PID[$id]"
}
