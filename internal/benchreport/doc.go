// Package benchreport turns the results of scripts/bench-vs-zookeeper.sh
// into the generated section of docs/benchmarks.md and its charts.
//
// # Input
//
// The script writes JSON Lines (Read): first a header record ("type":
// "header": machine, versions, settings, the command), then one record per
// measurement: "bench" (the --json result of paddock bench plus "series",
// "server", "rep", "mode"), "memory" (RSS idle and after populate) and
// "restart" (time until a killed server serves again).
//
// # Output
//
// Summarize groups the records by mode, series, workload and client count,
// takes per server the median over the repetitions with its range (min to
// max), and computes ratios Paddock ÷ ZooKeeper of the medians. Markdown
// renders the summary; Charts draws SVG charts with gonum.org/v1/plot;
// ReplaceSection puts the Markdown between the BEGIN and END markers of a
// document and leaves every other byte of it alone. Generate does all of
// it for the command scripts/benchreport.
//
// The output depends only on the input: no clock, no map order, so the
// same results give the same bytes.
package benchreport
