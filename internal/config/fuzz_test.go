package config

import (
	"os"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary zoo.cfg text to the parser: it must return a
// configuration or an error, never panic, and a configuration it returns
// must pass Validate.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/zoo_sample.cfg"); err == nil {
		f.Add(string(b))
	}
	f.Add("tickTime=2000\nclientPort=2181\n")
	f.Add("server.1=a:2888:3888;2181\nserver.2=b:2888:3888:observer\n")
	f.Add("4lw.commands.whitelist=*\njute.maxbuffer=0x10\n")
	f.Add("key\\\n  continued = v\\u0041\n! comment\n")
	f.Fuzz(func(t *testing.T, text string) {
		cfg, _, err := Parse(strings.NewReader(text))
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that Validate rejects: %v\n%q", err, text)
		}
	})
}
