// Package metricstest helps tests scrape a Paddock /metrics endpoint and
// check it against the list of metric families Paddock exports
// (internal/metrics/testdata/metric_names.txt). It is for tests only.
package metricstest

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Name is one line of the metric list.
type Name struct {
	Name  string
	Type  string // gauge, counter, summary or histogram
	Scope string // all, ensemble, voting, leader or runtime
}

// Names reads the checked-in list of metric families.
func Names(t testing.TB) []Name {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("metricstest: cannot locate the metric list")
	}
	path := filepath.Join(filepath.Dir(file), "..", "testdata", "metric_names.txt")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, err := ParseNames(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return names
}

// ParseNames parses the list: "name<TAB>type<TAB>scope" lines, with blank
// lines and "#" comments ignored.
func ParseNames(r io.Reader) ([]Name, error) {
	var names []Name
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want name, type and scope: %q", line, text)
		}
		switch f[2] {
		case "all", "ensemble", "voting", "leader", "runtime":
		default:
			return nil, fmt.Errorf("line %d: unknown scope %q", line, f[2])
		}
		names = append(names, Name{f[0], f[1], f[2]})
	}
	return names, sc.Err()
}

// Families is a parsed scrape, by family name.
type Families map[string]*dto.MetricFamily

// Scrape fetches http://addr/metrics and parses the text exposition.
func Scrape(t testing.TB, addr string) Families {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: status %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape: parsing the exposition: %v", err)
	}
	return fams
}

// metric returns the family's first metric with the given label pairs.
func (f Families) metric(name string, labels ...string) *dto.Metric {
	fam := f[name]
	if fam == nil {
		return nil
	}
next:
	for _, m := range fam.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	return nil
}

// Value returns a gauge's or counter's value, or a summary's or
// histogram's sample count, and whether the metric is there.
func (f Families) Value(name string, labels ...string) (float64, bool) {
	m := f.metric(name, labels...)
	switch {
	case m == nil:
		return 0, false
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount()), true
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount()), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// Must is Value that fails the test when the metric is missing.
func (f Families) Must(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	v, ok := f.Value(name, labels...)
	if !ok {
		t.Fatalf("metric %s%v missing", name, labels)
	}
	return v
}

// Check fails the test for every listed family whose scope is in scopes
// that is missing or of another type, and for every listed family of
// another scope that is present (a follower must not report the leader's
// gauges). The scopes name what the scraped server is: "all", "ensemble"
// for an ensemble member, "leader", "runtime"; "ensemble" implies "voting"
// unless the scopes include "observer".
func Check(t testing.TB, fams Families, names []Name, scopes ...string) {
	t.Helper()
	want := make(map[string]bool)
	for _, s := range scopes {
		want[s] = true
	}
	if want["ensemble"] && !want["observer"] {
		want["voting"] = true
	}
	for _, n := range names {
		fam := fams[n.Name]
		switch {
		case want[n.Scope] && fam == nil:
			t.Errorf("metric %s (%s, %s) missing", n.Name, n.Type, n.Scope)
		case want[n.Scope] && !strings.EqualFold(fam.GetType().String(), n.Type):
			t.Errorf("metric %s is a %s, want %s", n.Name, fam.GetType(), n.Type)
		case !want[n.Scope] && fam != nil:
			t.Errorf("metric %s (scope %s) present, want it only for %v", n.Name, n.Scope, n.Scope)
		}
	}
}
