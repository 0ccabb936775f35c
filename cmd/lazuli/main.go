// Command lazuli serves the Azure Storage Blob, Queue, Table and File
// protocols. It accepts the reference emulator's flag names so it can
// replace it without edits.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/server"
)

func main() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		go tuneGC()
	}
	os.Exit(run(os.Args[1:], os.Stderr))
}

// GC pacing when GOGC is not set. While the live heap is small, the
// collector's default of running at every doubling costs a lot of CPU for
// little memory, so it runs at every fivefold growth instead. The log
// engine keeps every key in the heap, though, and five times a large live
// heap is too much memory: past bigHeap the default pacing returns.
const (
	smallHeapGCPercent = 400
	bigHeap            = 256 << 20
)

func tuneGC() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	percent := smallHeapGCPercent
	debug.SetGCPercent(percent)
	for range time.Tick(time.Second) {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		want := smallHeapGCPercent
		if sample[0].Value.Uint64() > bigHeap {
			want = 100
		}
		if want != percent {
			percent = want
			debug.SetGCPercent(percent)
		}
	}
}

func env(name, def string) string {
	if v, ok := os.LookupEnv("LAZULI_" + name); ok {
		return v
	}
	return def
}

func envBool(name string) bool { return envBoolOr(name, false) }

// envBoolOr reads a boolean variable, def when it is unset or not a boolean.
func envBoolOr(name string, def bool) bool {
	if b, err := strconv.ParseBool(env(name, "")); err == nil {
		return b
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	d, err := time.ParseDuration(env(name, def.String()))
	if err != nil {
		return def
	}
	return d
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(env(name, "")); err == nil {
		return n
	}
	return def
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("lazuli", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		blobHost  = fs.String("blobHost", env("BLOB_HOST", "127.0.0.1"), "Blob service listen address")
		blobPort  = fs.Int("blobPort", envInt("BLOB_PORT", 10000), "Blob service port (0 picks a free port)")
		queueHost = fs.String("queueHost", env("QUEUE_HOST", "127.0.0.1"), "Queue service listen address")
		queuePort = fs.Int("queuePort", envInt("QUEUE_PORT", 10001), "Queue service port")
		tableHost = fs.String("tableHost", env("TABLE_HOST", "127.0.0.1"), "Table service listen address")
		tablePort = fs.Int("tablePort", envInt("TABLE_PORT", 10002), "Table service port")
		fileHost  = fs.String("fileHost", env("FILE_HOST", "127.0.0.1"), "File service listen address")
		filePort  = fs.Int("filePort", envInt("FILE_PORT", 10003), "File service port")
		location  = fs.String("location", env("LOCATION", server.DefaultLocation), "data directory")
		inMemory  = fs.Bool("inMemoryPersistence", envBool("IN_MEMORY"), "keep all data in memory only")
		syncFlag  = fs.Bool("sync", envBoolOr("SYNC", true), "fsync every write before acknowledging it, so that it survives a power cut; --sync=false acknowledges once written (survives the process being killed, not a power cut)")
		salvage   = fs.Bool("salvage", false, "start even if the log is damaged (not only torn at its end): move the damaged file and later logs into <location>/salvage/ and keep the records before the damage")
		engine    = fs.String("engine", env("ENGINE", ""), "engine of the data directory: log (every key in memory, writes appended to a log; the default for a new directory) or sqlite (keys in a SQLite database, for data larger than memory); default: the one the directory holds")
		silent    = fs.Bool("silent", envBool("SILENT"), "turn the access log off")
		debug     = fs.String("debug", env("DEBUG", ""), "write raw request and response headers to this file")
		loose     = fs.Bool("loose", envBool("LOOSE"), "accept unsupported headers and parameters (lazuli always does)")
		skipVer   = fs.Bool("skipApiVersionCheck", envBool("SKIP_API_VERSION_CHECK"), "accept any x-ms-version (the default)")
		strictVer = fs.Bool("strictApiVersion", envBool("STRICT_API_VERSION"), "reject x-ms-version values lazuli does not know")
		cert      = fs.String("cert", env("CERT", ""), "TLS certificate (PEM)")
		key       = fs.String("key", env("KEY", ""), "TLS private key (PEM)")
		pwd       = fs.String("pwd", env("PWD_PFX", ""), "PFX password (PFX certificates are not supported; use PEM)")
		cpuProf   = fs.String("cpuprofile", "", "write a CPU profile of the server to this file until it stops (for performance work)")
		httpSrv   = fs.String("httpServer", env("HTTP_SERVER", "h1"), "HTTP/1.1 server: h1 (lazuli's own) or std (net/http)")
		progress  = fs.Duration("progressTimeout", envDuration("PROGRESS_TIMEOUT", 60*time.Second), "close a connection whose request body or response makes no progress for this long")
	)
	fs.StringVar(location, "l", *location, "shorthand for --location")
	fs.BoolVar(silent, "s", *silent, "shorthand for --silent")
	fs.StringVar(debug, "d", *debug, "shorthand for --debug")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	if *pwd != "" {
		log.Error("PFX certificates are not supported; pass a PEM --cert and --key")
		return 2
	}
	if (*cert == "") != (*key == "") {
		log.Error("--cert and --key go together")
		return 2
	}
	accounts, warnings, err := auth.ParseAccountsWarn(os.Getenv("AZURITE_ACCOUNTS"))
	if err != nil {
		log.Error("AZURITE_ACCOUNTS", "err", err)
		return 2
	}
	for _, w := range warnings {
		log.Warn("AZURITE_ACCOUNTS", "warning", w)
	}
	var debugW io.Writer
	if *debug != "" {
		f, err := os.OpenFile(*debug, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Error("debug log", "err", err)
			return 2
		}
		defer f.Close()
		debugW = f
	}
	_ = skipVer // accepting any well-formed version is already the default
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			log.Error("cpuprofile", "err", err)
			return 2
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Error("cpuprofile", "err", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	cfg := server.Config{
		Location: *location, InMemory: *inMemory, Sync: *syncFlag, Salvage: *salvage, EngineKind: *engine,
		BlobAddr:  net.JoinHostPort(*blobHost, strconv.Itoa(*blobPort)),
		QueueAddr: net.JoinHostPort(*queueHost, strconv.Itoa(*queuePort)),
		TableAddr: net.JoinHostPort(*tableHost, strconv.Itoa(*tablePort)),
		FileAddr:  net.JoinHostPort(*fileHost, strconv.Itoa(*filePort)),
		Accounts:  accounts, Log: log, Silent: *silent, Debug: debugW,
		StrictVersion: *strictVer && !*skipVer, Loose: *loose,
		CertFile: *cert, KeyFile: *key,
		HTTPServer: *httpSrv, ProgressTimeout: *progress,
	}
	// Catch the stop signals before the addresses are announced: a client
	// that reads them may stop the server at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.New(cfg)
	if err != nil {
		log.Error("start", "err", err)
		return 1
	}
	if err := srv.Start(); err != nil {
		log.Error("start", "err", err)
		srv.Close()
		return 1
	}
	mode := "location=" + *location
	if *engine != "" {
		mode += " engine=" + *engine
	}
	if *inMemory {
		mode = "in-memory"
	}
	log.Info("lazuli ready", "storage", mode, "sync", *syncFlag,
		"blob", srv.Addr(auth.Blob), "queue", srv.Addr(auth.Queue), "table", srv.Addr(auth.Table), "file", srv.Addr(auth.File))
	fmt.Fprintf(stderr, "lazuli: blob %s queue %s table %s file %s\n",
		srv.Addr(auth.Blob), srv.Addr(auth.Queue), srv.Addr(auth.Table), srv.Addr(auth.File))

	<-ctx.Done()
	log.Info("shutting down")
	if err := srv.Close(); err != nil {
		log.Error("close", "err", err)
		return 1
	}
	return 0
}
