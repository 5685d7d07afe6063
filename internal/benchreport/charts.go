package benchreport

import (
	"bytes"
	"fmt"
	"image/color"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart names; a mode's chart file is "<mode>-<name>.svg" (chartFile).
const (
	chartThroughput = "throughput" // Paddock ÷ ZooKeeper per workload
	chartLatency    = "latency"    // percentiles per workload
	chartClients    = "clients"    // throughput by client count
	chartMemory     = "memory"     // RSS idle and with znodes
	chartRestart    = "restart"    // restart time
	chartFailover   = "failover"   // leader failover time
)

func chartFile(mode, name string) string { return mode + "-" + name + ".svg" }

// modeCharts lists the charts ms has data for, in the order Markdown shows
// them.
func modeCharts(ms ModeSummary) []string {
	var out []string
	if len(ms.Workloads) > 0 {
		out = append(out, chartThroughput, chartLatency)
	}
	if len(ms.Clients) > 0 {
		out = append(out, chartClients)
	}
	if ms.Memory != nil {
		out = append(out, chartMemory)
	}
	if ms.Restart != nil {
		out = append(out, chartRestart)
	}
	if ms.Failover != nil {
		out = append(out, chartFailover)
	}
	return out
}

func hasChart(ms ModeSummary, name string) bool { return slices.Contains(modeCharts(ms), name) }

// Colors: ZooKeeper orange, Paddock teal (ColorBrewer Dark2, readable for
// the common kinds of colour blindness), ratios blue and grey.
var (
	colorZK    = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
	colorPD    = color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff}
	colorRatio = color.RGBA{R: 0x37, G: 0x7e, B: 0xb8, A: 0xff}
	colorCPU   = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
	colorGuide = color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff}
)

// Charts draws every chart of s into dir as SVG and returns the files'
// names, in order.
func Charts(s *Summary, dir string) ([]string, error) {
	var names []string
	for _, ms := range s.Modes {
		for _, name := range modeCharts(ms) {
			svg, err := drawChart(ms, name)
			if err != nil {
				return names, fmt.Errorf("benchreport: chart %s of %s: %w", name, ms.Mode, err)
			}
			file := chartFile(ms.Mode, name)
			if err := os.WriteFile(filepath.Join(dir, file), svg, 0o644); err != nil {
				return names, fmt.Errorf("benchreport: %w", err)
			}
			names = append(names, file)
		}
	}
	return names, nil
}

func drawChart(ms ModeSummary, name string) ([]byte, error) {
	switch name {
	case chartThroughput:
		return throughputChart(ms)
	case chartLatency:
		return latencyChart(ms)
	case chartClients:
		return clientsChart(ms)
	case chartMemory:
		m := ms.Memory
		return groupedBars(fmt.Sprintf("Server RSS (%s)", ms.Mode), "MiB",
			[]string{"fresh server", "with " + count(max(m.ZK.Znodes, m.PD.Znodes)) + " znodes"},
			[]float64{m.ZK.Idle.Median / (1 << 20), m.ZK.RSS.Median / (1 << 20)},
			[]float64{m.PD.Idle.Median / (1 << 20), m.PD.RSS.Median / (1 << 20)})
	case chartRestart:
		r := ms.Restart
		return groupedBars(fmt.Sprintf("Restart after kill -9 with %s znodes (%s)", count(max(r.ZK.Znodes, r.PD.Znodes)), ms.Mode),
			"seconds from process start",
			[]string{"srvr answers", "a read has answered"},
			[]float64{r.ZK.Serving.Median, r.ZK.Read.Median},
			[]float64{r.PD.Serving.Median, r.PD.Read.Median})
	case chartFailover:
		f := ms.Failover
		return groupedBars(fmt.Sprintf("Leader failover after kill -9 (%s)", ms.Mode), "seconds from the kill",
			[]string{"new leader (srvr)", "first write", "every session"},
			[]float64{f.ZK.Leader.Median, f.ZK.FirstWrite.Median, f.ZK.AllWriters.Median},
			[]float64{f.PD.Leader.Median, f.PD.FirstWrite.Median, f.PD.AllWriters.Median})
	}
	return nil, fmt.Errorf("unknown chart %q", name)
}

// newPlot returns a plot whose texts use Liberation Sans (metrically the
// same as Arial and Helvetica, which renderSVG names as fallbacks).
func newPlot(title string) *plot.Plot {
	p := plot.New()
	sans := func(st *font.Font) {
		st.Typeface, st.Variant = "Liberation", "Sans"
	}
	sans(&p.Title.TextStyle.Font)
	sans(&p.X.Label.TextStyle.Font)
	sans(&p.Y.Label.TextStyle.Font)
	sans(&p.X.Tick.Label.Font)
	sans(&p.Y.Tick.Label.Font)
	sans(&p.Legend.TextStyle.Font)
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	return p
}

// renderSVG draws the plots, tiled in rows, into an SVG of the given size.
func renderSVG(plots [][]*plot.Plot, w, h vg.Length) ([]byte, error) {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	if len(plots) == 1 && len(plots[0]) == 1 {
		plots[0][0].Draw(dc)
	} else {
		tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: vg.Points(12), PadY: vg.Points(12),
			PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(14)}
		canvases := plot.Align(plots, tiles, dc)
		for j, row := range plots {
			for i, p := range row {
				if p != nil {
					p.Draw(canvases[j][i])
				}
			}
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	// A viewer without the Liberation fonts falls back to one with the same
	// metrics instead of its default serif.
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:Liberation Sans,Arial,Helvetica,sans-serif;")), nil
}

// throughputChart: per workload, Paddock ÷ ZooKeeper of throughput and of
// server CPU per op, with a line at 1×.
func throughputChart(ms ModeSummary) ([]byte, error) {
	p := newPlot(fmt.Sprintf("Paddock ÷ ZooKeeper per workload (%s)", ms.Mode))
	p.Y.Label.Text = "ratio of medians"
	names := make([]string, len(ms.Workloads))
	ops := make(plotter.Values, len(ms.Workloads))
	cpu := make(plotter.Values, len(ms.Workloads))
	for i, pr := range ms.Workloads {
		names[i] = pr.Workload
		ops[i], _ = Ratio(pr.ZK.OpsPerS, pr.PD.OpsPerS)
		cpu[i], _ = Ratio(pr.ZK.CPUPerOp, pr.PD.CPUPerOp)
	}
	w := vg.Points(11)
	for i, v := range []struct {
		vals  plotter.Values
		col   color.Color
		label string
	}{
		{ops, colorRatio, "throughput (above 1: Paddock faster)"},
		{cpu, colorCPU, "server CPU per op (below 1: Paddock cheaper)"},
	} {
		bars, err := plotter.NewBarChart(v.vals, w)
		if err != nil {
			return nil, err
		}
		bars.Color, bars.LineStyle.Width = v.col, 0
		bars.Offset = w * vg.Length(2*i-1) / 2
		p.Add(bars)
		p.Legend.Add(v.label, bars)
	}
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(names)) - 0.5, Y: 1}})
	if err != nil {
		return nil, err
	}
	one.Color, one.Dashes = colorGuide, []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(one)
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	finish(p, -0.7, float64(len(names))-0.3, max(slices.Max(ops), slices.Max(cpu), 1))
	return renderSVG([][]*plot.Plot{{p}}, 8*vg.Inch, 4.5*vg.Inch)
}

// latencyChart: one panel per workload, p50 to p99.9 in ms for each server.
func latencyChart(ms ModeSummary) ([]byte, error) {
	const cols = 3
	rows := (len(ms.Workloads) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for j := range plots {
		plots[j] = make([]*plot.Plot, cols)
	}
	labels := []string{"p50", "p90", "p99", "p99.9"}
	for k, pr := range ms.Workloads {
		p := newPlot(pr.Workload)
		p.Title.TextStyle.Font.Size = vg.Points(11)
		p.Legend.TextStyle.Font.Size = vg.Points(9)
		p.Y.Label.Text = "ms"
		var top float64
		for _, side := range []struct {
			f     Figures
			col   color.Color
			label string
		}{{pr.ZK, colorZK, "ZooKeeper"}, {pr.PD, colorPD, "Paddock"}} {
			if side.f.P50.N == 0 {
				continue
			}
			xys := plotter.XYs{
				{X: 0, Y: side.f.P50.Median / 1000}, {X: 1, Y: side.f.P90.Median / 1000},
				{X: 2, Y: side.f.P99.Median / 1000}, {X: 3, Y: side.f.P999.Median / 1000},
			}
			line, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			line.Color, pts.Color = side.col, side.col
			p.Add(line, pts)
			p.Legend.Add(side.label, line, pts)
			top = max(top, side.f.P999.Median/1000)
		}
		p.NominalX(labels...)
		finish(p, -0.3, 3.3, top)
		plots[k/cols][k%cols] = p
	}
	return renderSVG(plots, 9*vg.Inch, vg.Length(rows)*2.6*vg.Inch)
}

// xyErr is points with error bars.
type xyErr struct {
	plotter.XYs
	plotter.YErrors
}

// clientsChart: throughput against sessions, a line per workload and
// server, with the range over the repetitions as error bars.
func clientsChart(ms ModeSummary) ([]byte, error) {
	p := newPlot(fmt.Sprintf("Throughput by client count (%s)", ms.Mode))
	p.X.Label.Text = "sessions"
	p.Y.Label.Text = "ops/s"
	p.X.Scale = plot.LogScale{}
	var workloads []string
	sessions := map[int]bool{}
	for _, pr := range ms.Clients {
		if !slices.Contains(workloads, pr.Workload) {
			workloads = append(workloads, pr.Workload)
		}
		sessions[pr.Sessions] = true
	}
	dashes := [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1), vg.Points(2)}}
	var top float64
	for wi, wl := range workloads {
		for _, side := range []struct {
			get   func(Pair) Stat
			col   color.Color
			label string
		}{
			{func(p Pair) Stat { return p.ZK.OpsPerS }, colorZK, "ZooKeeper"},
			{func(p Pair) Stat { return p.PD.OpsPerS }, colorPD, "Paddock"},
		} {
			var pts xyErr
			for _, pr := range ms.Clients {
				st := side.get(pr)
				if pr.Workload != wl || st.N == 0 || pr.Sessions <= 0 {
					continue
				}
				pts.XYs = append(pts.XYs, plotter.XY{X: float64(pr.Sessions), Y: st.Median})
				pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{st.Median - st.Min, st.Max - st.Median})
				top = max(top, st.Max)
			}
			if len(pts.XYs) == 0 {
				continue
			}
			line, scatter, err := plotter.NewLinePoints(pts.XYs)
			if err != nil {
				return nil, err
			}
			line.Color, scatter.Color = side.col, side.col
			line.Dashes = dashes[wi%len(dashes)]
			bars, err := plotter.NewYErrorBars(pts)
			if err != nil {
				return nil, err
			}
			bars.Color = side.col
			p.Add(line, scatter, bars)
			p.Legend.Add(side.label+" "+wl, line, scatter)
		}
	}
	var ticks []plot.Tick
	counts := slices.Sorted(maps.Keys(sessions))
	for _, n := range counts {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.Itoa(n)})
	}
	finish(p, float64(counts[0])/1.5, float64(counts[len(counts)-1])*1.5, top)
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	return renderSVG([][]*plot.Plot{{p}}, 7*vg.Inch, 4.5*vg.Inch)
}

// groupedBars draws one group per label with a ZooKeeper and a Paddock bar.
func groupedBars(title, unit string, labels []string, zk, pd []float64) ([]byte, error) {
	p := newPlot(title)
	p.Y.Label.Text = unit
	w := vg.Points(28)
	for i, side := range []struct {
		vals  []float64
		col   color.Color
		label string
	}{{zk, colorZK, "ZooKeeper"}, {pd, colorPD, "Paddock"}} {
		bars, err := plotter.NewBarChart(plotter.Values(side.vals), w)
		if err != nil {
			return nil, err
		}
		bars.Color, bars.LineStyle.Width = side.col, 0
		bars.Offset = w * vg.Length(2*i-1) / 2
		p.Add(bars)
		p.Legend.Add(side.label, bars)
	}
	p.NominalX(labels...)
	finish(p, -0.8, float64(len(labels))-0.2, max(slices.Max(zk), slices.Max(pd)))
	return renderSVG([][]*plot.Plot{{p}}, 5.5*vg.Inch, 3.5*vg.Inch)
}

// finish sets the axes' ranges, leaving room above the data (top) for the
// legend, which sits at the top left, and readable tick labels on Y.
func finish(p *plot.Plot, xmin, xmax, top float64) {
	p.X.Min, p.X.Max = xmin, xmax
	p.Y.Min, p.Y.Max = 0, top*1.3
	if top <= 0 {
		p.Y.Max = 1
	}
	p.Y.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		ticks := plot.DefaultTicks{}.Ticks(min, max)
		for i, t := range ticks {
			if !t.IsMinor() {
				ticks[i].Label = tickLabel(t.Value)
			}
		}
		return ticks
	})
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
}

// tickLabel formats an axis value without trailing zeros: 0.25, 12, 100,000.
func tickLabel(v float64) string {
	if math.Abs(v) >= 1000 {
		return thousands(v)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
