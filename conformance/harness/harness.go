// Package harness starts lazuli targets for the SDK conformance tests and
// hands out official Azure SDK for Go clients pointed at them, with retries
// off.
//
// Targets are chosen with LAZULI_TARGETS (comma-separated):
//
//	mem-inproc    memory engine, SDK transport calls the handler in-process
//	mem-tcp       memory engine over a real TCP listener
//	log-inproc    log engine (the default on disk) in-process
//	log-tcp       log engine over TCP
//	sqlite-inproc SQLite engine in-process
//	sqlite-tcp    SQLite engine over TCP
//	postgres-inproc  postgres engine (a throw-away PostgreSQL, or the one at
//	              LAZULI_TEST_POSTGRES_URL) in-process
//	postgres-tcp  postgres engine over TCP
//	postgres3-tcp three lazuli instances on one PostgreSQL database, every
//	              request sent to the next instance in turn
//	remote        the endpoint in LAZULI_REMOTE_CONNECTION_STRING (for example
//	              the reference emulator), to settle what it does
//
// The default is "mem-inproc,log-tcp,sqlite-tcp": every engine, both
// transports.
package harness

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
)

// DefaultTargets is used when LAZULI_TARGETS is empty.
const DefaultTargets = "mem-inproc,log-tcp,sqlite-tcp"

// Target is one lazuli (or remote) endpoint set.
type Target struct {
	Name     string
	Account  string
	Key      string
	BlobURL  string
	QueueURL string
	TableURL string
	FileURL  string
	// Transport is set for in-process targets; nil means real HTTP.
	Transport policy.Transporter
	// HTTP is an *http.Client that reaches the target (in-process or TCP),
	// for raw wire tests.
	HTTP *http.Client
	// Emulator is the embedded lazuli (nil for remote).
	Emulator *emulator.Emulator
	// Remote is true for the remote target: tests that need lazuli
	// internals skip their lazuli-only assertions.
	Remote bool
}

// Names returns the target names selected by the environment.
func Names() []string {
	v := os.Getenv("LAZULI_TARGETS")
	if v == "" {
		v = DefaultTargets
	}
	if v == "all" {
		v = "mem-inproc,mem-tcp,log-inproc,log-tcp,sqlite-inproc,sqlite-tcp"
	}
	var out []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// ForEach runs fn as a subtest against every selected target, each with a
// fresh lazuli.
func ForEach(t *testing.T, fn func(t *testing.T, tg *Target)) {
	t.Helper()
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			tg := Start(t, name)
			fn(t, tg)
		})
	}
}

// Start starts (or connects to) the named target; it is stopped when t ends.
func Start(t testing.TB, name string) *Target {
	t.Helper()
	return start(t, name, func(*emulator.Options) {})
}

// start is Start with tweak applied to the options of every lazuli it
// starts.
func start(t testing.TB, name string, tweak func(*emulator.Options)) *Target {
	t.Helper()
	if name == "remote" {
		return remote(t)
	}
	if name == "postgres3-tcp" {
		return cluster(t, name, 3, tweak)
	}
	engine, transport, ok := strings.Cut(name, "-")
	if !ok || (engine != "mem" && engine != "log" && engine != "sqlite" && engine != "postgres") || (transport != "inproc" && transport != "tcp") {
		t.Fatalf("unknown target %q", name)
	}
	opts := emulator.Options{InMemory: engine == "mem", NoListen: transport == "inproc"}
	switch engine {
	case "postgres":
		opts.EngineKind, opts.PostgresURL = engine, pgtest.NewDatabase(t)
	case "log", "sqlite":
		opts.Dir, opts.EngineKind = t.TempDir(), engine
	}
	tweak(&opts)
	emu, err := emulator.Start(opts)
	if err != nil {
		t.Fatalf("start lazuli: %v", err)
	}
	t.Cleanup(func() { emu.Close() })
	tg := &Target{Name: name, Account: emulator.Account, Key: emulator.Key, Emulator: emu}
	if transport == "tcp" {
		tg.BlobURL, tg.QueueURL = emu.Endpoint(emulator.Blob), emu.Endpoint(emulator.Queue)
		tg.TableURL, tg.FileURL = emu.Endpoint(emulator.Table), emu.Endpoint(emulator.File)
		tg.HTTP = &http.Client{Timeout: 60 * time.Second}
		return tg
	}
	// In-process: the emulator's own transport, no socket.
	tr := emu.Transport()
	tg.Transport = tr
	tg.HTTP = &http.Client{Transport: tr}
	tg.BlobURL, tg.QueueURL = emu.Endpoint(emulator.Blob), emu.Endpoint(emulator.Queue)
	tg.TableURL, tg.FileURL = emu.Endpoint(emulator.Table), emu.Endpoint(emulator.File)
	return tg
}

func remote(t testing.TB) *Target {
	cs := os.Getenv("LAZULI_REMOTE_CONNECTION_STRING")
	if cs == "" {
		t.Fatalf("target remote needs LAZULI_REMOTE_CONNECTION_STRING")
	}
	kv := map[string]string{}
	for _, part := range strings.Split(cs, ";") {
		k, v, ok := strings.Cut(part, "=")
		if ok {
			kv[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	if strings.EqualFold(kv["usedevelopmentstorage"], "true") {
		kv["accountname"], kv["accountkey"] = emulator.Account, emulator.Key
		kv["blobendpoint"] = "http://127.0.0.1:10000/devstoreaccount1"
		kv["queueendpoint"] = "http://127.0.0.1:10001/devstoreaccount1"
		kv["tableendpoint"] = "http://127.0.0.1:10002/devstoreaccount1"
	}
	return &Target{Name: "remote", Account: kv["accountname"], Key: kv["accountkey"],
		BlobURL: kv["blobendpoint"], QueueURL: kv["queueendpoint"], TableURL: kv["tableendpoint"],
		FileURL: kv["fileendpoint"], HTTP: &http.Client{Timeout: 60 * time.Second}, Remote: true}
}

// ClientOptions returns azcore options with retries off and the target's
// transport.
func (tg *Target) ClientOptions() azcore.ClientOptions {
	o := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}
	if tg.Transport != nil {
		o.Transport = tg.Transport
	}
	return o
}

// KeyBytes returns the decoded account key.
func (tg *Target) KeyBytes() []byte {
	b, _ := base64.StdEncoding.DecodeString(tg.Key)
	return b
}

// Blob returns an azblob client authorized with Shared Key.
func (tg *Target) Blob(t testing.TB) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	c, err := azblob.NewClientWithSharedKeyCredential(tg.BlobURL+"/", cred, &azblob.ClientOptions{ClientOptions: tg.ClientOptions()})
	must(t, err)
	return c
}

// Queue returns an azqueue service client authorized with Shared Key.
func (tg *Target) Queue(t testing.TB) *azqueue.ServiceClient {
	t.Helper()
	cred, err := azqueue.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	c, err := azqueue.NewServiceClientWithSharedKeyCredential(tg.QueueURL+"/", cred, &azqueue.ClientOptions{ClientOptions: tg.ClientOptions()})
	must(t, err)
	return c
}

// Table returns an aztables service client authorized with Shared Key.
func (tg *Target) Table(t testing.TB) *aztables.ServiceClient {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	c, err := aztables.NewServiceClientWithSharedKey(tg.TableURL+"/", cred, &aztables.ClientOptions{ClientOptions: tg.ClientOptions()})
	must(t, err)
	return c
}

// File returns an azfile service client authorized with Shared Key.
func (tg *Target) File(t testing.TB) *service.Client {
	t.Helper()
	cred, err := service.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	c, err := service.NewClientWithSharedKeyCredential(tg.FileURL+"/", cred, &service.ClientOptions{ClientOptions: tg.ClientOptions()})
	must(t, err)
	return c
}

// UniqueName returns a lowercase name valid for containers, queues and
// shares (tables: use UniqueTable).
func UniqueName(prefix string) string {
	return fmt.Sprintf("%s%x", prefix, time.Now().UnixNano()&0xffffffffffff)
}

// UniqueTable returns a name valid for tables.
func UniqueTable(prefix string) string {
	return fmt.Sprintf("%s%x", prefix, time.Now().UnixNano()&0xffffffffffff)
}

// Ctx returns a context that ends with the test.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
