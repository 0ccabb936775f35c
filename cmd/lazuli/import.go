package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/lazuli-storage/lazuli/internal/azimport"
	"github.com/lazuli-storage/lazuli/internal/server"
	"github.com/lazuli-storage/lazuli/internal/tablehttp"
)

// importCommand is the word that runs runImport.
const importCommand = "import-azurite"

// runImport is `lazuli import-azurite --from <dir> --location <dir>`: it
// reads the data directory the reference emulator wrote and writes its
// containers, blobs, queues, messages, tables and entities into a lazuli
// data directory (or PostgreSQL database), through the same services that
// serve requests.
func runImport(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(importCommand, flag.ContinueOnError)
	fs.SetOutput(stderrOrStdout(stderr))
	from := fs.String("from", "", "the reference emulator's data directory (its --location)")
	location := fs.String("location", server.DefaultLocation, "lazuli's data directory to import into (created if missing)")
	engine := fs.String("engine", "", "engine of a new data directory: log (default) or sqlite; postgres with --postgres")
	pgURL := fs.String("postgres", "", "PostgreSQL connection url, with --engine postgres")
	syncFlag := fs.Bool("sync", true, "fsync the imported data")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: lazuli %s --from <the reference emulator's directory> --location <lazuli's directory>\n\n", importCommand)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if *from == "" || fs.NArg() > 0 {
		log.Error(fmt.Sprintf("usage: lazuli %s --from <the reference emulator's directory> --location <lazuli's directory>", importCommand))
		return 2
	}
	if a, b := absPath(*from), absPath(*location); a == b && *engine != server.EnginePostgres {
		log.Error("--from and --location are one directory: import into a directory of its own")
		return 2
	}
	src, err := azimport.Read(*from)
	if err != nil {
		log.Error("read the reference emulator's directory", "err", err)
		return 1
	}
	// The services write with the times the reference emulator recorded.
	clock := &azimport.Clock{}
	srv, err := server.New(context.Background(), server.Config{Location: *location, EngineKind: *engine, PostgresURL: *pgURL, Sync: *syncFlag, Log: log,
		ServicesNow: clock.Now})
	if err != nil {
		log.Error("open the target: " + startAdvice(err))
		return 1
	}
	defer srv.Close()
	svcs := srv.Services()
	rep, err := azimport.Import(context.Background(), src, azimport.Services{
		Blob: svcs.Blob, Queue: svcs.Queue, Table: svcs.Table, Clock: clock, DecodeEntity: tablehttp.DecodeEntity,
	})
	for _, s := range rep.Skipped {
		log.Warn("not imported: " + s)
	}
	if err != nil {
		log.Error("import stopped (what was imported before stays)", "err", err)
		return 1
	}
	log.Info("imported", "from", *from, "location", *location, "containers", rep.Containers, "blobs", rep.Blobs,
		"snapshots", rep.Snapshots, "bytes", rep.Bytes, "queues", rep.Queues, "messages", rep.Messages,
		"tables", rep.Tables, "entities", rep.Entities)
	if rep.Received > 0 {
		log.Info(fmt.Sprintf("%d messages had been received by a client: they become visible when they would have, with a dequeue count of 0 and new pop receipts", rep.Received))
	}
	return 0
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(a); err == nil {
		return r
	}
	return a
}
