package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/datatool"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/storage"
)

// newDataToolCmds returns the offline data tools: "snapshot", "wal" and
// "data" (internal/datatool; docs/data-tools.md).
func newDataToolCmds() []*cobra.Command {
	snap := &cobra.Command{Use: "snapshot", Short: "Inspect and dump snapshot files (like zkSnapShotToolkit)"}
	snap.AddCommand(newSnapshotInspectCmd(), newSnapshotDumpCmd())
	wal := &cobra.Command{Use: "wal", Short: "Dump the write-ahead log (like zkTxnLogToolkit)"}
	wal.AddCommand(newWALDumpCmd())
	data := &cobra.Command{Use: "data", Short: "Verify or purge a server's data directory"}
	data.AddCommand(newDataVerifyCmd(), newDataPurgeCmd())
	return []*cobra.Command{snap, wal, data}
}

// failed wraps an error as a command failure (exit status 1).
func failed(err error) error { return &exitError{code: exitFailure, err: err} }

// extendedTypesUsage documents the snapshot tools' --extended-types.
const extendedTypesUsage = "classify as a server with extendedTypesEnabled (TTL nodes) did: an ephemeralOwner " +
	"with top byte 0xff is then a TTL node, else an ephemeral of a session of myid 255; snapshots do not record it"

func newSnapshotInspectCmd() *cobra.Command {
	var (
		asJSON bool
		opts   datatool.InspectOptions
	)
	cmd := &cobra.Command{
		Use:   "inspect <snapshot-file|data-dir>",
		Short: "Summarise a snapshot: raft index and term, last zxid, znode and session counts, checksum",
		Long: "Summarise a snapshot file, or the newest snapshot of a data directory (dataDir/snap).\n" +
			"Read-only: safe on a running server's directory. Exits 1 when the snapshot is damaged.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, err := datatool.ResolveSnapshot(args[0])
			if err != nil {
				return failed(err)
			}
			sum, ierr := datatool.InspectSnapshot(info, opts)
			var werr error
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				werr = enc.Encode(sum)
			} else {
				werr = sum.WriteText(cmd.OutOrStdout())
			}
			if ierr != nil {
				return failed(ierr)
			}
			if werr != nil {
				return failed(werr)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	cmd.Flags().BoolVar(&opts.ExtendedTypes, "extended-types", false, extendedTypesUsage)
	return cmd
}

func newSnapshotDumpCmd() *cobra.Command {
	var opts datatool.DumpOptions
	cmd := &cobra.Command{
		Use:   "dump <snapshot-file|data-dir>",
		Short: "Print every znode with its Stat and ACL (and data), and every session",
		Long: "Print every znode of a snapshot (or of the newest snapshot of a data directory) with its\n" +
			"Stat, type and ACL, optionally its data, then every session with its timeout and ephemerals.\n" +
			"--json prints JSON Lines: one object per line. Read-only: safe on a running server's directory.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, err := datatool.ResolveSnapshot(args[0])
			if err != nil {
				return failed(err)
			}
			if err := datatool.DumpSnapshot(cmd.OutOrStdout(), info, opts); err != nil {
				return failed(err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON Lines (one object per znode and per session)")
	cmd.Flags().BoolVar(&opts.Data, "data", false, "include znode data (a string when UTF-8, else base64)")
	cmd.Flags().BoolVar(&opts.ExtendedTypes, "extended-types", false, extendedTypesUsage)
	return cmd
}

func newWALDumpCmd() *cobra.Command {
	var opts datatool.WALDumpOptions
	cmd := &cobra.Command{
		Use:   "dump <data-dir|wal-dir>",
		Short: "Print every WAL record: raft entries with their operation decoded, hard states, snapshot markers",
		Long: "Print every record of the WAL in dataLogDir/wal (or in the directory given): raft entries with\n" +
			"the ZooKeeper operation they carry decoded, hard states and snapshot markers. --json prints JSON\n" +
			"Lines. Read-only: safe on a running server's WAL; a record being written ends the dump as a\n" +
			"torn tail. Exits 1 on corruption, after the records before it.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("--limit %d is negative", opts.Limit)}
			}
			dir, err := datatool.ResolveWALDir(args[0])
			if err != nil {
				return failed(err)
			}
			if _, err := datatool.DumpWAL(cmd.OutOrStdout(), dir, opts); err != nil {
				return failed(err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON Lines (one object per record)")
	cmd.Flags().Uint64Var(&opts.From, "from", 0, "start at the first entry with this raft index (zxid) or above")
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, "stop after this many entries (0: no limit)")
	return cmd
}

func newDataVerifyCmd() *cobra.Command {
	var (
		logDir        string
		asJSON        bool
		strict        bool
		extendedTypes bool
	)
	cmd := &cobra.Command{
		Use:   "verify <data-dir>",
		Short: "Check every checksum, the WAL's continuity, and that the WAL replays onto the newest snapshot",
		Long: "Check a server's data: every snapshot's and WAL record's checksum, that the WAL continues the\n" +
			"newest valid snapshot without gaps, and that replaying it into a fresh state machine succeeds\n" +
			"(reporting the last zxid, znode count and a state digest). Exits 0 when sound, 1 with each\n" +
			"problem's file and offset or index. A torn tail (a partial last record, what a crash leaves and\n" +
			"the server truncates at start) is a warning, a failure with --strict. Read-only.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := datatool.Verify(datatool.DataDirs(args[0], logDir), datatool.VerifyOptions{FSM: fsm.Options{ExtendedTypes: extendedTypes}})
			if err != nil {
				return failed(err)
			}
			if asJSON {
				err = rep.WriteJSON(cmd.OutOrStdout())
			} else {
				err = rep.WriteText(cmd.OutOrStdout())
			}
			if err != nil {
				return failed(err)
			}
			switch {
			case !rep.OK():
				return failed(fmt.Errorf("data in %s failed verification: %d problems", args[0], len(rep.Problems)))
			case strict && len(rep.Warnings) > 0:
				return failed(fmt.Errorf("data in %s has %d warnings (--strict)", args[0], len(rep.Warnings)))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&logDir, "data-log-dir", "", "the server's dataLogDir, when it differs from dataDir")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as a JSON object")
	cmd.Flags().BoolVar(&strict, "strict", false, "fail on warnings too (a torn tail)")
	cmd.Flags().BoolVar(&extendedTypes, "extended-types", false, "replay with TTL nodes enabled (set as the server's extendedTypesEnabled)")
	return cmd
}

func newDataPurgeCmd() *cobra.Command {
	var (
		logDir string
		opts   datatool.PurgeOptions
	)
	cmd := &cobra.Command{
		Use:   "purge -n N <data-dir>",
		Short: "Delete all but the N newest snapshots and the WAL segments they no longer need (like zkCleanup.sh)",
		Long: "Keep the N newest snapshots (N >= 3) and the WAL segments needed to replay from the oldest of\n" +
			"them; delete the rest, printing each file. It takes the WAL directory's lock and refuses while\n" +
			"a server runs on the directory (a running server purges itself: autopurge.snapRetainCount).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("retain") {
				return &exitError{code: exitUsage, err: errors.New("-n N (the number of snapshots to keep) is required")}
			}
			if opts.Retain < storage.MinSnapRetain {
				return &exitError{code: exitUsage, err: fmt.Errorf("-n %d: %w", opts.Retain, datatool.ErrRetainCount)}
			}
			if _, err := datatool.Purge(cmd.OutOrStdout(), datatool.DataDirs(args[0], logDir), opts); err != nil {
				return failed(err)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&opts.Retain, "retain", "n", 0, "number of snapshots to keep (at least 3)")
	cmd.Flags().StringVar(&logDir, "data-log-dir", "", "the server's dataLogDir, when it differs from dataDir")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print what would be removed and remove nothing")
	return cmd
}
