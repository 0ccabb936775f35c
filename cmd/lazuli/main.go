// Command lazuli serves the Azure Storage Blob, Queue, Table and File
// protocols. It accepts the reference emulator's flag names so it can
// replace it without edits.
package main

import (
	"context"
	"errors"
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
	"strings"
	"syscall"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/internal/server"
)

func main() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		go tuneGC()
	}
	os.Exit(run(commandLine(os.Args), os.Stderr))
}

// GC pacing when GOGC is not set. While the live heap is small, the
// collector's default of running at every doubling costs a lot of CPU for
// little memory, so it runs at every fivefold growth instead. The log
// engine keeps every key in the heap, though, and five times a large live
// heap is too much memory: past bigHeap the default pacing returns. And
// fivefold growth must not turn a burst of garbage (many clients sending
// request heads at once, say) into hundreds of megabytes: a soft memory
// limit of max(memoryFloor, twice the live heap) makes the collector run
// early then, never later than the default pacing would.
const (
	smallHeapGCPercent = 400
	bigHeap            = 256 << 20
	memoryFloor        = 128 << 20
)

func tuneGC() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	percent := smallHeapGCPercent
	debug.SetGCPercent(percent)
	limit := int64(memoryFloor)
	debug.SetMemoryLimit(limit)
	for range time.Tick(time.Second) {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		live := sample[0].Value.Uint64()
		want := smallHeapGCPercent
		if live > bigHeap {
			want = 100
		}
		if want != percent {
			percent = want
			debug.SetGCPercent(percent)
		}
		if l := max(memoryFloor, 2*int64(live)); l != limit {
			limit = l
			debug.SetMemoryLimit(limit)
		}
	}
}

// options are the parsed flags.
type options struct {
	blobHost  *string
	blobPort  *int
	queueHost *string
	queuePort *int
	tableHost *string
	tablePort *int
	fileHost  *string
	filePort  *int
	smbHost   *string
	smbPort   *int
	adminHost *string
	adminPort *int
	webHost   *string
	webPort   *int
	logFormat *string
	logLevel  *string
	location  *string
	inMemory  *bool
	syncFlag  *bool
	salvage   *bool
	pgURL     *string
	pgConns   *int
	instExp   *time.Duration
	advertise *string
	progress  *time.Duration
	engine    *string
	silent    *bool
	debug     *string
	loose     *bool
	skipVer   *bool
	strictVer *bool
	cert      *string
	key       *string
	pwd       *string
	oauth     *string
	scopes    *string
	versions  *bool
	versionAc *string
	contDays  *int
	contAccts *string
	hns       *bool
	hnsAccts  *string
	cpuProf   *string
	noProduct *bool
	blobKA    *int
	queueKA   *int
	tableKA   *int
	help      *bool
	showVer   *bool
}

// newFlags defines every flag; each also takes its default from
// LAZULI_<FLAG> (applyEnv).
func newFlags() (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("lazuli", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := &options{}
	o.blobHost = fs.String("blobHost", "127.0.0.1", "Blob service listen address")
	o.blobPort = fs.Int("blobPort", 10000, "Blob service port (0 picks a free port; -1 turns the Blob service off)")
	o.queueHost = fs.String("queueHost", "127.0.0.1", "Queue service listen address")
	o.queuePort = fs.Int("queuePort", 10001, "Queue service port (-1: off)")
	o.tableHost = fs.String("tableHost", "127.0.0.1", "Table service listen address")
	o.tablePort = fs.Int("tablePort", 10002, "Table service port (-1: off)")
	o.fileHost = fs.String("fileHost", "127.0.0.1", "File service listen address")
	o.filePort = fs.Int("filePort", 10003, "File service port (-1: off)")
	o.smbHost = fs.String("smbHost", "127.0.0.1", "SMB listen address (the File service's shares over SMB 2/3)")
	o.smbPort = fs.Int("smbPort", 10445, "SMB port (445 needs privileges; 0 picks a free port; -1 turns SMB off)")
	o.adminHost = fs.String("adminHost", "127.0.0.1", "admin listen address (health, metrics, test clock, faults, console); beyond loopback every admin request but the health checks needs HTTP Basic credentials: an account name and one of its keys")
	o.adminPort = fs.Int("adminPort", 10010, "admin port (0 picks a free port; -1 turns the admin listener off)")
	o.webHost = fs.String("webHost", "127.0.0.1", "static website listen address (each account's $web container, read anonymously at /<account>/<path>)")
	o.webPort = fs.Int("webPort", -1, "static website port (-1, the default, turns it off; 0 picks a free port)")
	o.location = fs.String("location", server.DefaultLocation, "data directory")
	o.inMemory = fs.Bool("inMemoryPersistence", false, "keep all data in memory only; nothing is written to disk")
	o.syncFlag = fs.Bool("sync", true, "fsync every write before acknowledging it, so that it survives a power cut; --sync=false acknowledges once written (survives the process being killed, not a power cut)")
	o.salvage = fs.Bool("salvage", false, "start even if the log is damaged (not only torn at its end): move the damaged file and later logs into <location>/salvage/ and keep the records before the damage")
	o.progress = fs.Duration("progressTimeout", 60*time.Second, "close a connection whose request body or response makes no progress for this `duration`")
	o.engine = fs.String("engine", "", "`name` of the data directory's engine: log (every key in memory, writes appended to a log; the default for a new directory) or sqlite (keys in a SQLite database, for data larger than memory) or postgres (everything in the PostgreSQL database of --postgres, which several instances may share); default: the one the directory holds")
	o.pgURL = fs.String("postgres", "", "PostgreSQL connection `url` of --engine postgres (postgres://user:password@host:5432/db); its environment variable is LAZULI_POSTGRES_URL")
	o.pgConns = fs.Int("postgresMaxConns", 0, "most connections to PostgreSQL this instance opens (0: the larger of 4 and the CPU count)")
	o.instExp = fs.Duration("instanceExpiry", server.DefaultInstanceExpiry, "with --engine postgres, the SMB handles of an instance that has not renewed its membership for this `duration` are released by the others")
	o.advertise = fs.String("advertiseHost", "", "`host` that URLs in responses carry, with each service's port (the load balancer's, when several instances share one --postgres database)")
	o.silent = fs.Bool("silent", false, "turn the access log off")
	o.logFormat = fs.String("logFormat", "text", "`format` of the log on standard error: text or json")
	o.logLevel = fs.String("logLevel", "info", "least `level` logged: debug, info, warn or error (the access log is at info)")
	o.debug = fs.String("debug", "", "append raw request and response headers (signatures redacted) to this `file`")
	o.loose = fs.Bool("loose", false, "accept unsupported headers and parameters (lazuli always does)")
	o.skipVer = fs.Bool("skipApiVersionCheck", false, "accept any well-formed x-ms-version (the default)")
	o.strictVer = fs.Bool("strictApiVersion", false, "reject x-ms-version values lazuli does not know")
	o.cert = fs.String("cert", "", "serve HTTPS with this certificate `file`: PEM (with --key) or PFX/PKCS#12 (with --pwd)")
	o.key = fs.String("key", "", "private key `file` (PEM) of --cert")
	o.pwd = fs.String("pwd", "", "`password` of a PFX --cert")
	o.oauth = fs.String("oauth", "", "`level` of OAuth: basic accepts Azure AD bearer tokens (issuer, audience and lifetime checked, signature not); needs --cert")
	o.hns = fs.Bool("hierarchicalNamespace", false, "give every account a hierarchical namespace: the Data Lake Storage Gen2 (dfs) API on the Blob port")
	o.hnsAccts = fs.String("hierarchicalNamespaceAccounts", "", "comma-separated `accounts` that have a hierarchical namespace (the others keep plain Blob behaviour)")
	o.scopes = fs.String("encryptionScopes", "", "comma-separated `names` of the Blob encryption scopes every account has (x-ms-encryption-scope, container default scopes)")
	o.versions = fs.Bool("blobVersioning", false, "keep blob versions in every account (x-ms-version-id; Azure's account setting IsVersioningEnabled)")
	o.versionAc = fs.String("blobVersioningAccounts", "", "comma-separated `accounts` that keep blob versions (--blobVersioning: all of them)")
	o.contDays = fs.Int("containerDeleteRetentionDays", 0, "keep deleted containers this many `days` (1-365) for Restore Container (Azure's account setting ContainerDeleteRetentionPolicy); 0: off")
	o.contAccts = fs.String("containerDeleteRetentionAccounts", "", "comma-separated `account=days` pairs: each account's own container delete retention, over --containerDeleteRetentionDays (0: off for that account)")
	o.cpuProf = fs.String("cpuprofile", "", "write a CPU profile of the server to this `file` until it stops")
	o.noProduct = fs.Bool("disableProductStyleUrl", false, "always take the account from the first path segment, never from the host name")
	o.blobKA = fs.Int("blobKeepAliveTimeout", 120, "`seconds` an idle kept-alive Blob connection stays open")
	o.queueKA = fs.Int("queueKeepAliveTimeout", 120, "`seconds` an idle kept-alive Queue connection stays open")
	o.tableKA = fs.Int("tableKeepAliveTimeout", 120, "`seconds` an idle kept-alive Table connection stays open")
	o.help = fs.Bool("help", false, "print this help and exit")
	o.showVer = fs.Bool("version", false, "print the version and exit")
	fs.Bool("disableTelemetry", false, "accepted for compatibility (lazuli collects no telemetry)")
	fs.Int("extentMemoryLimit", -1, "accepted for compatibility and ignored (the reference emulator's limit, in `megabytes`, of in-memory blob bytes)")
	fs.StringVar(o.location, "l", *o.location, "shorthand for --location")
	fs.BoolVar(o.loose, "L", *o.loose, "shorthand for --loose")
	fs.BoolVar(o.silent, "s", *o.silent, "shorthand for --silent")
	fs.StringVar(o.debug, "d", *o.debug, "shorthand for --debug")
	fs.BoolVar(o.help, "h", false, "shorthand for --help")
	fs.BoolVar(o.showVer, "v", false, "shorthand for --version")
	return fs, o
}

// smbAddr is the admin listen address; a negative port turns the
// listener off.
func smbAddr(host string, port int) string {
	if port < 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

func run(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == importCommand {
		return runImport(args[1:], stderr)
	}
	only, args := serviceWord(args)
	fs, o := newFlags()
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "lazuli: %v (see lazuli --help)\n", err)
		return 2
	}
	command, err := checkArgs(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "lazuli: %v\n", err)
		return 2
	}
	if *o.help || command == "help" {
		usage(stderrOrStdout(stderr), fs)
		return 0
	}
	if *o.showVer || command == "version" {
		fmt.Fprintln(stderrOrStdout(stderr), versionString())
		return 0
	}
	if err := applyEnv(fs, osLookup); err != nil {
		fmt.Fprintf(stderr, "lazuli: %v\n", err)
		return 2
	}
	log, err := newLogger(stderr, *o.logFormat, *o.logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "lazuli: %v\n", err)
		return 2
	}
	for _, w := range warnIgnored(fs, osLookup) {
		log.Warn(w)
	}
	addrs, err := listenAddrs(o, only)
	if err != nil {
		log.Error(err.Error())
		return 2
	}

	if *o.cert == "" && (*o.key != "" || *o.pwd != "") {
		log.Error("--key and --pwd belong to --cert: pass the certificate file with --cert")
		return 2
	}
	switch *o.oauth {
	case "":
	case "basic":
		if *o.cert == "" {
			log.Error("--oauth basic needs HTTPS (bearer tokens are never accepted over plain HTTP): pass --cert (and --key or --pwd)")
			return 2
		}
	default:
		log.Error(fmt.Sprintf("--oauth %q is not a level lazuli knows; the only one is basic", *o.oauth))
		return 2
	}
	for _, ka := range []struct {
		name string
		v    int
	}{{"blobKeepAliveTimeout", *o.blobKA}, {"queueKeepAliveTimeout", *o.queueKA}, {"tableKeepAliveTimeout", *o.tableKA}} {
		if ka.v <= 0 {
			log.Error(fmt.Sprintf("--%s must be a positive number of seconds", ka.name))
			return 2
		}
	}
	contAccts, err := parseRetentionAccounts(*o.contAccts)
	if err != nil {
		log.Error(err.Error())
		return 2
	}
	accounts, warnings, err := auth.ParseAccounts(os.Getenv("AZURITE_ACCOUNTS"))
	if (*o.engine == server.EnginePostgres) != (*o.pgURL != "") {
		log.Error("--engine postgres and --postgres <url> go together")
		return 2
	}
	if err != nil {
		log.Error("AZURITE_ACCOUNTS", "err", err)
		return 2
	}
	for _, w := range warnings {
		log.Warn("AZURITE_ACCOUNTS", "warning", w)
	}
	// The debug file is opened once the listeners are bound (nothing is
	// created on disk before); until then nothing can be written to it.
	var debugW *lateFile
	if *o.debug != "" {
		debugW = &lateFile{}
	}
	_ = o.skipVer // accepting any well-formed version is already the default
	cfg := server.Config{
		Location: *o.location, InMemory: *o.inMemory, Sync: *o.syncFlag, Salvage: *o.salvage, EngineKind: *o.engine,
		BlobAddr: addrs.blob, QueueAddr: addrs.queue, TableAddr: addrs.table, FileAddr: addrs.file, SMBAddr: addrs.smb,
		AdminAddr: smbAddr(*o.adminHost, *o.adminPort), WebAddr: smbAddr(*o.webHost, *o.webPort),
		Accounts: accounts, Log: log, Silent: *o.silent,
		StrictVersion: *o.strictVer && !*o.skipVer, Loose: *o.loose,
		CertFile: *o.cert, KeyFile: *o.key, CertPassword: *o.pwd, OAuth: *o.oauth == "basic",
		PathStyleOnly: *o.noProduct, EncryptionScopes: splitList(*o.scopes),
		BlobVersioning: *o.versions, BlobVersioningAccounts: splitList(*o.versionAc),
		ContainerDeleteRetentionDays: *o.contDays, ContainerDeleteRetentionAccounts: contAccts,
		HierarchicalNamespace: *o.hns, HierarchicalNamespaceAccounts: splitList(*o.hnsAccts),
		KeepAlive: map[auth.Service]time.Duration{
			auth.Blob: time.Duration(*o.blobKA) * time.Second, auth.Queue: time.Duration(*o.queueKA) * time.Second,
			auth.Table: time.Duration(*o.tableKA) * time.Second},
		ProgressTimeout: *o.progress,
		PostgresURL:     *o.pgURL, PostgresMaxConns: *o.pgConns, InstanceExpiry: *o.instExp,
	}
	if *o.advertise != "" {
		cfg.Advertise = map[auth.Service]string{
			auth.Blob: net.JoinHostPort(*o.advertise, strconv.Itoa(*o.blobPort)), auth.Queue: net.JoinHostPort(*o.advertise, strconv.Itoa(*o.queuePort)),
			auth.Table: net.JoinHostPort(*o.advertise, strconv.Itoa(*o.tablePort)), auth.File: net.JoinHostPort(*o.advertise, strconv.Itoa(*o.filePort)),
		}
	}
	if debugW != nil {
		cfg.Debug = debugW
	}
	// Catch the stop signals before the addresses are announced: a client
	// that reads them may stop the server at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.New(ctx, cfg)
	if err != nil {
		log.Error("start: " + startAdvice(err))
		return 1
	}
	if debugW != nil {
		f, err := os.OpenFile(*o.debug, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Error("debug log", "err", err)
			srv.Close()
			return 2
		}
		defer f.Close()
		debugW.f = f
	}
	if *o.cpuProf != "" {
		f, err := os.Create(*o.cpuProf)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			log.Error("cpuprofile", "err", err)
			srv.Close()
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	if err := srv.Start(ctx); err != nil {
		log.Error("start: " + startAdvice(err))
		srv.Close()
		return 1
	}
	mode := "location=" + *o.location
	if *o.engine != "" {
		mode += " engine=" + *o.engine
	}
	if *o.inMemory {
		mode = "in-memory"
	}
	if *o.engine == server.EnginePostgres {
		mode = "engine=postgres"
	}
	blob, queue, table, file, smb := shownAddr(srv.Addr(auth.Blob)), shownAddr(srv.Addr(auth.Queue)),
		shownAddr(srv.Addr(auth.Table)), shownAddr(srv.Addr(auth.File)), shownAddr(srv.SMBAddr())
	log.Info("lazuli ready", "version", versionString(), "storage", mode, "sync", *o.syncFlag, "oauth", *o.oauth,
		"blob", blob, "queue", queue, "table", table, "file", file, "smb", smb, "admin", srv.AdminAddr(), "web", srv.WebAddr())
	// One line that scripts parse; a listener that is off shows as "off"
	// (the static website and admin listeners show only when on, the
	// admin listener last).
	ready := fmt.Sprintf("lazuli: blob %s queue %s table %s file %s smb %s", blob, queue, table, file, smb)
	if srv.WebAddr() != "" {
		ready += " web " + srv.WebAddr()
	}
	if srv.AdminAddr() != "" {
		ready += " admin " + srv.AdminAddr()
	}
	fmt.Fprintln(stderr, ready)
	printReferenceLines(stderrOrStdout(stderr), srv, *o.cert != "")

	<-ctx.Done()
	log.Info("shutting down")
	if err := srv.Close(); err != nil {
		log.Error("close", "err", err)
		return 1
	}
	return 0
}

// newLogger builds the server's log from --logFormat and --logLevel.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--logLevel %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--logFormat %q: want text or json", format)
}

// stderrOrStdout: --help and --version print to standard output when run
// from a terminal or a pipe (run's writer is standard error for the
// server's log; tests pass their own writer).
func stderrOrStdout(w io.Writer) io.Writer {
	if w == io.Writer(os.Stderr) {
		return os.Stdout
	}
	return w
}

// lateFile is the --debug writer, whose file is opened after the
// listeners are bound.
type lateFile struct{ f *os.File }

func (l *lateFile) Write(p []byte) (int, error) {
	if l.f == nil {
		return len(p), nil
	}
	return l.f.Write(p)
}

// listenFlags names the flags that set each service's port.
var listenFlags = map[string]string{"blob": "blobPort", "queue": "queuePort", "table": "tablePort", "file": "filePort", "smb": "smbPort", "admin": "adminPort", "web": "webPort"}

// startAdvice turns a startup error into a message that says what to do.
func startAdvice(err error) string {
	var le *server.ListenError
	if errors.As(err, &le) {
		flagName := listenFlags[le.Service]
		if errors.Is(le.Err, syscall.EADDRINUSE) {
			return fmt.Sprintf("the %s address %s is already in use (another lazuli or emulator?); stop that process or pick another port with --%s (or %s; 0 picks a free one)",
				le.Service, le.Addr, flagName, envName(flagName))
		}
		return fmt.Sprintf("cannot listen on %s for the %s service (%v); change --%s or --%s", le.Addr, le.Service, le.Err,
			strings.Replace(flagName, "Port", "Host", 1), flagName)
	}
	var locked *filestore.LockedError
	if errors.As(err, &locked) {
		return err.Error() + "; stop that process or give this one another data directory with --location (or --inMemoryPersistence)"
	}
	return err.Error()
}

// splitList splits a comma-separated flag value, dropping empty names.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
