// Package benchreport turns the results of scripts/bench-vs-zookeeper.sh
// into the generated section of docs/benchmarks.md and its charts.
//
// # Input
//
// The script writes JSON Lines (Read): per mode it measures (standalone,
// ensemble) a header record ("type": "header": machine, versions, settings,
// the command, the mode and the members per kind), then one record per
// measurement: "bench" (the --json result of paddock bench plus "series",
// "server", "rep", "mode"; for an ensemble its CPU and RSS are the members'
// sums), "memory" (RSS idle and after populate, per member too), "restart"
// (time until a killed standalone server serves again) and "failover"
// (scripts/failover: time until an ensemble whose leader was killed has a
// new leader and takes writes again, and until the killed member serves
// again). Runs appended to one file (APPEND=1) each bring their header; a
// record belongs to the header before it.
//
// # Output
//
// Summarize groups the records by mode, series, workload and client count,
// takes per server the median over the repetitions with its range (min to
// max), and computes ratios Paddock ÷ ZooKeeper of the medians; each mode
// is described by the header of its first record. Markdown
// renders the summary; Charts draws SVG charts with gonum.org/v1/plot;
// ReplaceSection puts the Markdown between the BEGIN and END markers of a
// document and leaves every other byte of it alone. Generate does all of
// it for the command scripts/benchreport.
//
// The output depends only on the input: no clock, no map order, so the
// same results give the same bytes.
package benchreport
