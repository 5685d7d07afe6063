package raftnode

import (
	"context"
	"fmt"
	"log/slog"
)

// raftLogger adapts slog to raft.Logger. Fatal and Panic log at error level
// and panic: raft calls them on broken invariants, where going on would be
// worse than stopping loudly.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) log(level slog.Level, msg func() string) {
	if r.l.Enabled(context.Background(), level) {
		r.l.Log(context.Background(), level, msg())
	}
}

func (r raftLogger) Debug(v ...any) {
	r.log(slog.LevelDebug, func() string { return fmt.Sprint(v...) })
}
func (r raftLogger) Debugf(f string, v ...any) {
	r.log(slog.LevelDebug, func() string { return fmt.Sprintf(f, v...) })
}

// Info and Infof log at debug level: raft narrates every election step at
// info, which drowns a server's own log. raftnode logs leader changes itself.
func (r raftLogger) Info(v ...any) { r.log(slog.LevelDebug, func() string { return fmt.Sprint(v...) }) }
func (r raftLogger) Infof(f string, v ...any) {
	r.log(slog.LevelDebug, func() string { return fmt.Sprintf(f, v...) })
}
func (r raftLogger) Warning(v ...any) {
	r.log(slog.LevelWarn, func() string { return fmt.Sprint(v...) })
}
func (r raftLogger) Warningf(f string, v ...any) {
	r.log(slog.LevelWarn, func() string { return fmt.Sprintf(f, v...) })
}
func (r raftLogger) Error(v ...any) {
	r.log(slog.LevelError, func() string { return fmt.Sprint(v...) })
}
func (r raftLogger) Errorf(f string, v ...any) {
	r.log(slog.LevelError, func() string { return fmt.Sprintf(f, v...) })
}
func (r raftLogger) Fatal(v ...any)            { r.die(fmt.Sprint(v...)) }
func (r raftLogger) Fatalf(f string, v ...any) { r.die(fmt.Sprintf(f, v...)) }
func (r raftLogger) Panic(v ...any)            { r.die(fmt.Sprint(v...)) }
func (r raftLogger) Panicf(f string, v ...any) { r.die(fmt.Sprintf(f, v...)) }

func (r raftLogger) die(msg string) {
	r.l.Error(msg)
	panic("raft: " + msg)
}
