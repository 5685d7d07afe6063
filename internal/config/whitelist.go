package config

import (
	"slices"
	"strings"
)

// Whitelist is the set of four-letter-word commands a server answers
// (ZooKeeper's 4lw.commands.whitelist). "srvr" is always allowed, as in
// ZooKeeper, because zkServer.sh status depends on it. The zero value allows
// only "srvr", which is ZooKeeper's default. A Whitelist is not modified after
// it is built, so copies may share it.
type Whitelist struct {
	all   bool
	words map[string]struct{}
}

// ParseWhitelist builds a Whitelist from a comma-separated list such as
// "srvr, ruok,mntr", as ZooKeeper's FourLetterCommands does: the list is
// split on commas only and each entry trimmed of spaces and control
// characters (Java's String.trim), so "ruok mntr" is one entry that names
// no command. A "*" entry allows every command. Empty entries are skipped;
// entries are case-sensitive, as in ZooKeeper.
func ParseWhitelist(list string) Whitelist {
	var w Whitelist
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimFunc(f, func(r rune) bool { return r <= ' ' })
		switch f {
		case "":
			continue
		case "*":
			return Whitelist{all: true}
		}
		if w.words == nil {
			w.words = make(map[string]struct{})
		}
		w.words[f] = struct{}{}
	}
	return w
}

// Allowed reports whether the four-letter word cmd may be executed.
func (w Whitelist) Allowed(cmd string) bool {
	if w.all || cmd == "srvr" {
		return true
	}
	_, ok := w.words[cmd]
	return ok
}

// All reports whether the whitelist is "*".
func (w Whitelist) All() bool { return w.all }

// String returns the whitelist in zoo.cfg form: "*" or the sorted,
// comma-separated words including the implicit "srvr".
func (w Whitelist) String() string {
	if w.all {
		return "*"
	}
	words := []string{"srvr"}
	for word := range w.words {
		if word != "srvr" {
			words = append(words, word)
		}
	}
	slices.Sort(words)
	return strings.Join(words, ",")
}
