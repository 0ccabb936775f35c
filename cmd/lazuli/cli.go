package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"unicode"

	"github.com/lazuli-storage/lazuli/internal/auth"
)

// version is set at build time:
//
//	go build -ldflags "-X main.version=v1.2.3" ./cmd/lazuli
//
// Without it, the module version (go install ...@v1.2.3) or the commit
// the binary was built from (go build in a checkout) is reported.
var version string

// versionString returns the version line printed by --version.
func versionString() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if v == "" && ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	var rev, modified string
	if ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = "+dirty"
				}
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	out := "lazuli " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += " (commit " + rev + modified + ")"
	}
	if ok {
		out += " " + info.GoVersion
	}
	return out
}

// envName is the environment variable that gives a flag its default:
// LAZULI_ and the flag name in upper snake case (blobPort ->
// LAZULI_BLOB_PORT, skipApiVersionCheck -> LAZULI_SKIP_API_VERSION_CHECK).
// It is derived, not listed, so that every flag has one.
func envName(flagName string) string {
	if flagName == "postgres" {
		return "LAZULI_POSTGRES_URL" // the name deployments expect for a URL
	}
	var b strings.Builder
	b.WriteString("LAZULI_")
	rs := []rune(flagName)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// shorthands maps each one-letter flag to the flag it abbreviates. A
// shorthand has no environment variable of its own.
var shorthands = map[string]string{
	"l": "location",
	"L": "loose",
	"s": "silent",
	"d": "debug",
	"h": "help",
	"v": "version",
}

// Help groups: every flag belongs to one (a test checks it), listed in
// this order.
var flagGroups = []struct {
	title string
	flags []string
}{
	{"Listeners", []string{"blobHost", "blobPort", "queueHost", "queuePort", "tableHost", "tablePort", "fileHost", "filePort", "smbHost", "smbPort", "adminHost", "adminPort", "webHost", "webPort",
		"blobKeepAliveTimeout", "queueKeepAliveTimeout", "tableKeepAliveTimeout", "disableProductStyleUrl", "progressTimeout"}},
	{"Storage", []string{"location", "engine", "inMemoryPersistence", "sync", "salvage", "extentMemoryLimit", "postgres", "postgresMaxConns", "instanceExpiry", "advertiseHost"}},
	{"Security", []string{"cert", "key", "pwd", "oauth", "encryptionScopes"}},
	{"Data protection", []string{"blobVersioning", "blobVersioningAccounts", "containerDeleteRetentionDays", "containerDeleteRetentionAccounts"}},
	{"Data Lake", []string{"hierarchicalNamespace", "hierarchicalNamespaceAccounts"}},
	{"Compatibility", []string{"loose", "skipApiVersionCheck", "strictApiVersion", "disableTelemetry"}},
	{"Logging", []string{"silent", "logFormat", "logLevel", "debug"}},
	{"Performance work", []string{"cpuprofile"}},
	{"Information", []string{"help", "version"}},
}

// noEnv lists the flags that make no sense as an environment default.
var noEnv = map[string]bool{"help": true, "version": true}

// applyEnv gives every flag not set on the command line the value of its
// environment variable, if that is set. A bad value is an error naming the
// variable.
func applyEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		name := f.Name
		if long, ok := shorthands[name]; ok {
			name = long
		}
		set[name] = true
	})
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || set[f.Name] || noEnv[f.Name] {
			return
		}
		if _, short := shorthands[f.Name]; short {
			return
		}
		v, ok := lookup(envName(f.Name))
		if !ok {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%s=%q: %v", envName(f.Name), v, e)
			return
		}
		// Keep a shorthand in step with its long flag.
		for s, long := range shorthands {
			if long == f.Name {
				fs.Set(s, v)
			}
		}
	})
	return err
}

// usage writes --help: a summary, the flags by group with their
// environment variables, the other variables and an example.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, `lazuli serves the Azure Storage Blob, Queue, Table and File (REST) protocols on
loopback or a network, as a drop-in for the reference emulator: the same flags, ports, account
(devstoreaccount1 and its published key) and AZURITE_ACCOUNTS.

Usage: lazuli [flags]
       lazuli blob|queue|table|file [flags]     one service alone, the other listeners off
       lazuli azurite|azurite-blob|azurite-queue|azurite-table [flags]
                                                the reference emulator's commands, also as the
                                                name of a link to the binary (azurite-blob -> lazuli)
       lazuli import-azurite --from <dir> --location <dir>
                                                import a data directory the reference emulator wrote
A port of -1 turns that listener off (--queuePort -1).

`)
	short := map[string]string{}
	for s, long := range shorthands {
		short[long] = s
	}
	for _, g := range flagGroups {
		fmt.Fprintf(w, "%s:\n", g.title)
		for _, name := range g.flags {
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			arg, text := flag.UnquoteUsage(f)
			head := "  --" + name
			if s, ok := short[name]; ok {
				head = "  -" + s + ", --" + name
			}
			if arg != "" && !isBool(f) {
				head += " " + arg
			}
			fmt.Fprintf(w, "%s\n      %s", head, text)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			if !noEnv[name] {
				fmt.Fprintf(w, " [%s]", envName(name))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, `Environment:
  LAZULI_<FLAG>     every flag's default, named as shown in brackets above
                    (booleans: true or false)
  AZURITE_ACCOUNTS  extra accounts, "name1:key1[:key2];name2:key1" (keys base64);
                    devstoreaccount1 is always present

Example:
  lazuli --location /var/lib/lazuli --blobHost 0.0.0.0 --silent
  LAZULI_IN_MEMORY_PERSISTENCE=true lazuli --blobPort 0 --queuePort 0 --tablePort 0

Connection string: UseDevelopmentStorage=true (default ports) works where the client library
expands it itself: the JavaScript SDKs and Python's azure-data-tables. The Go SDK (azblob 1.8),
the az CLI and Python's azure-storage-blob and azure-storage-queue reject it; give those the
explicit string (one line):
DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;FileEndpoint=http://127.0.0.1:10003/devstoreaccount1;
`, auth.DevKey)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// errUsage reports a command line that cannot run; the message says what
// to do.
type errUsage struct{ msg string }

func (e *errUsage) Error() string { return e.msg }

// checkArgs handles what is left after the flags: the reference
// emulator's "help" and "version" commands, or nothing. Any other word is
// an error (Go's flag parsing stops at the first one, so the flags after
// it would otherwise be silently dropped).
func checkArgs(rest []string) (command string, err error) {
	if len(rest) == 0 {
		return "", nil
	}
	if len(rest) == 1 && (rest[0] == "help" || rest[0] == "version") {
		return rest[0], nil
	}
	if _, ok := serviceWords[rest[0]]; ok {
		return "", &errUsage{fmt.Sprintf("%q must come before the flags: lazuli %s [flags]", rest[0], rest[0])}
	}
	return "", &errUsage{fmt.Sprintf("unexpected argument %q: lazuli takes only flags (see lazuli --help)", rest[0])}
}

// ignored are reference-emulator flags that have no meaning for lazuli:
// accepted, with one warning line each when used.
var ignored = map[string]string{
	"disableTelemetry":  "lazuli collects no telemetry; --disableTelemetry changes nothing",
	"extentMemoryLimit": "lazuli has no separate in-memory extent store to limit; --extentMemoryLimit is ignored",
}

// warnIgnored returns the warnings for the ignored flags that were set.
func warnIgnored(fs *flag.FlagSet, lookup func(string) (string, bool)) []string {
	var out []string
	for name, msg := range ignored {
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
		if _, ok := lookup(envName(name)); ok {
			set = true
		}
		if set {
			out = append(out, msg)
		}
	}
	sort.Strings(out)
	if _, ok := lookup("AZURITE_DB"); ok {
		out = append(out, "AZURITE_DB is ignored: lazuli keeps its metadata in its own engine (--engine)")
	}
	return out
}

// osLookup is the environment of the process.
var osLookup = os.LookupEnv
