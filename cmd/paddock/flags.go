package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// annotationArgsEndFlags marks a command whose flags end at its first
// argument (SetInterspersed(false)): from that word on, goStyleArgs passes
// every word through unchanged, as zkCli's MyCommandOptions.parseOptions
// hands everything after the command to it ("paddock cli set /mode -strict"
// stores "-strict").
const annotationArgsEndFlags = "paddock.argsEndFlags"

// goStyleArgs rewrites Go-style single-dash long flags ("-json",
// "-port=2181") to the double-dash form pflag expects. It follows the
// command line through the subcommands and rewrites only the long flags of
// the command reached so far (its own and its ancestors' persistent ones).
// Left alone: everything after "--"; everything from the first argument of
// a command marked with annotationArgsEndFlags on; a flag's value (in
// "-timeout -5" the -5); single-letter shorthands ("-h"). Dropped: before
// the first argument of a command marked with annotationArgsEndFlags, the
// dashed words that are none of its flags ("paddock cli -foo ls /" runs
// "ls /"), as zkCli's MyCommandOptions.parseOptions skips the options it
// does not know; and a last word there that is one of its flags taking a
// value, with no value after it: zkCli reports it ("Error: no argument
// found for option -timeout", written to stderr) and goes on with the
// defaults.
func goStyleArgs(root *cobra.Command, args []string, stderr io.Writer) []string {
	out := make([]string, len(args))
	copy(out, args)
	cmd := root
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		endsFlags := cmd.Annotations[annotationArgsEndFlags] != ""
		if a == "-" && endsFlags {
			out = slices.Delete(out, i, i+1) // zkCli skips it as an option
			i--
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			if sub := subcommand(cmd, a); sub != nil {
				cmd = sub
				continue
			}
			if cmd.Annotations[annotationArgsEndFlags] != "" {
				break
			}
			continue
		}
		var f *pflag.Flag
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		switch {
		case a[1] == '-': // already --name
			f = lookupFlag(cmd, name)
		case len(name) == 1:
			f = lookupShorthand(cmd, name)
		case name == "help":
			out[i] = "-" + a
			continue
		default:
			if f = lookupFlag(cmd, name); f != nil {
				out[i] = "-" + a
			}
		}
		if f == nil && endsFlags && name != "h" && name != "help" {
			// zkCli's MyCommandOptions.parseOptions skips the options
			// it does not know, and the next word is not their value.
			// (zkCli's -client-configuration, which takes a file, is a
			// hidden flag of paddock cli that refuses it, so its file
			// does not become the command.)
			out = slices.Delete(out, i, i+1)
			i--
			continue
		}
		// The next word is the flag's value, not an argument.
		if f != nil && f.NoOptDefVal == "" && !hasValue {
			if i == len(out)-1 && endsFlags {
				// zkCli's parseOptions reports a last option without
				// its value and goes on with the defaults.
				fmt.Fprintf(stderr, "Error: no argument found for option %s\n", a)
				out = out[:i]
				break
			}
			i++
		}
	}
	return out
}

// subcommand returns cmd's subcommand named (or aliased) word, or nil.
func subcommand(cmd *cobra.Command, word string) *cobra.Command {
	for _, sub := range cmd.Commands() {
		if sub.Name() == word || sub.HasAlias(word) {
			return sub
		}
	}
	return nil
}

// lookupFlag finds a long flag of cmd or a persistent flag of an ancestor.
func lookupFlag(cmd *cobra.Command, name string) *pflag.Flag {
	for c := cmd; c != nil; c = c.Parent() {
		if f := c.Flags().Lookup(name); f != nil {
			return f
		}
		if f := c.PersistentFlags().Lookup(name); f != nil {
			return f
		}
	}
	return nil
}

// lookupShorthand finds a one-letter flag of cmd or a persistent one of an
// ancestor.
func lookupShorthand(cmd *cobra.Command, name string) *pflag.Flag {
	for c := cmd; c != nil; c = c.Parent() {
		if f := c.Flags().ShorthandLookup(name); f != nil {
			return f
		}
		if f := c.PersistentFlags().ShorthandLookup(name); f != nil {
			return f
		}
	}
	return nil
}
