package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo describes the running binary.
type versionInfo struct {
	Version  string `json:"version"`            // module version, "(devel)" for a source build
	Go       string `json:"go"`                 // Go toolchain that built the binary
	Revision string `json:"revision,omitempty"` // VCS commit, when the build recorded it
	Time     string `json:"time,omitempty"`     // commit time, RFC 3339
	Modified bool   `json:"modified,omitempty"` // the work tree had local changes
}

// readVersion gathers versionInfo from the build information embedded by the
// Go toolchain.
func readVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		v.Go = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, Go version and VCS revision",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout(), readVersion(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	return cmd
}

func printVersion(w io.Writer, v versionInfo, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		if err := enc.Encode(v); err != nil {
			return &exitError{code: exitFailure, err: fmt.Errorf("version: %w", err)}
		}
		return nil
	}
	rev := v.Revision
	switch {
	case rev == "":
		rev = "unknown"
	case v.Modified:
		rev += " (modified)"
	}
	_, err := fmt.Fprintf(w, "paddock %s\ngo: %s\nrevision: %s\n", v.Version, v.Go, rev)
	if err == nil && v.Time != "" {
		_, err = fmt.Fprintf(w, "committed: %s\n", v.Time)
	}
	if err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("version: %w", err)}
	}
	return nil
}
