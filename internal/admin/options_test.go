package admin

import (
	"io"
	"net/http"
	"testing"
)

// TestOptions checks that OPTIONS answers as ZooKeeper 3.8's admin server
// does (checked with curl -X OPTIONS against it): 200, no body, and
// "Allow: GET, HEAD, TRACE, OPTIONS" on every path, unknown ones included.
func TestOptions(t *testing.T) {
	ts := newTestServer(t, newFake(), Options{})
	for _, path := range []string{"/commands/ruok", "/commands", "/commands/", "/commands/nosuch", "/commands/snapshot", "/ready", "/live", "/other", "/"} {
		req, _ := http.NewRequest(http.MethodOptions, ts.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Allow") != "GET, HEAD, TRACE, OPTIONS" || len(body) != 0 {
			t.Errorf("OPTIONS %s: %d Allow %q body %q, want 200 Allow %q and no body",
				path, resp.StatusCode, resp.Header.Get("Allow"), body, "GET, HEAD, TRACE, OPTIONS")
		}
	}
	// Other methods are still refused.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/commands/ruok", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /commands/ruok: %d, want 405", resp.StatusCode)
	}
}
