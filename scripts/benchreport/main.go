// Command benchreport turns the results of scripts/bench-vs-zookeeper.sh into
// the generated section of docs/benchmarks.md and its SVG charts in
// docs/benchmarks/:
//
//	go run ./scripts/benchreport -in bench-results/results.jsonl -out docs
//
// Only the text between the markers
// "<!-- BEGIN GENERATED: bench-vs-zookeeper -->" and
// "<!-- END GENERATED: bench-vs-zookeeper -->" changes; a document without
// them gets them in a new section before its first "## " heading. The logic
// is in internal/benchreport.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/paddockhq/paddock/internal/benchreport"
)

func main() {
	in := flag.String("in", "bench-results/results.jsonl", "results of scripts/bench-vs-zookeeper.sh (JSON Lines)")
	out := flag.String("out", "docs", "directory holding "+benchreport.DocName+" and "+benchreport.ChartDir+"/")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./scripts/benchreport [-in results.jsonl] [-out docs]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	written, err := benchreport.Generate(benchreport.Options{In: *in, OutDir: *out})
	for _, p := range written {
		fmt.Println("wrote", p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
