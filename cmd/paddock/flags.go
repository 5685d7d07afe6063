package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// goStyleArgs rewrites Go-style single-dash long flags ("-json",
// "-port=2181") to the double-dash form pflag expects, for the long flag
// names defined anywhere in root's tree. Everything after "--" and any
// single-letter shorthand ("-h") is left alone.
func goStyleArgs(root *cobra.Command, args []string) []string {
	names := map[string]bool{"help": true}
	var collect func(c *cobra.Command)
	collect = func(c *cobra.Command) {
		add := func(f *pflag.Flag) { names[f.Name] = true }
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			collect(sub)
		}
	}
	collect(root)

	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if names[name] {
			out[i] = "-" + a
		}
	}
	return out
}
