package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/emulator"
)

// memoryEmulator starts an in-process lazuli in memory for the test and
// returns its connection string.
func memoryEmulator(t *testing.T) string {
	t.Helper()
	emu, err := emulator.Start(emulator.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	return emu.ConnectionString()
}

// TestWorkloadsAgainstLazuli runs every workload briefly against an
// in-process lazuli over TCP: each must set up and run without a single
// failed request and produce a measurement.
func TestWorkloadsAgainstLazuli(t *testing.T) {
	conn := memoryEmulator(t)
	a, err := parseConnectionString(conn)
	if err != nil {
		t.Fatal(err)
	}
	const concurrency = 2
	tg := newTarget("lazuli", a, defaultVersion, concurrency, time.Minute)
	defer tg.close()
	s := runSettings{duration: 100 * time.Millisecond, concurrency: concurrency, preload: 3000, prefix: runPrefix(),
		diskDir: t.TempDir()}
	for _, w := range workloads() {
		t.Run(w.name, func(t *testing.T) {
			r := measure(context.Background(), w, tg, s)
			t.Logf("%s", progressLine(r))
			if r.SetupError != "" {
				t.Fatalf("setup failed: %s", r.SetupError)
			}
			if r.Failures != 0 {
				t.Fatalf("%d operations failed %v; first: %s", r.Failures, r.Errors, r.FirstError)
			}
			if r.Ops == 0 || r.OpsPerSec <= 0 || r.P50ms <= 0 || r.P99ms < r.P50ms {
				t.Fatalf("no measurement: %+v", r)
			}
			if w.name == "blob-cas-hot" && r.Note == "" {
				t.Fatal("no attempts-per-win note")
			}
		})
	}
}

// TestUnreachableTargetReportsFailure checks that a target nobody listens
// on yields a clear failure, not a crash.
func TestUnreachableTargetReportsFailure(t *testing.T) {
	a, err := parseConnectionString("AccountName=devstoreaccount1;AccountKey=" + devKey +
		";BlobEndpoint=http://127.0.0.1:1/devstoreaccount1;QueueEndpoint=http://127.0.0.1:1/devstoreaccount1;TableEndpoint=http://127.0.0.1:1/devstoreaccount1;FileEndpoint=http://127.0.0.1:1/devstoreaccount1")
	if err != nil {
		t.Fatal(err)
	}
	tg := newTarget("nowhere", a, defaultVersion, 1, 5*time.Second)
	defer tg.close()
	s := runSettings{duration: 20 * time.Millisecond, concurrency: 1, preload: 1, prefix: runPrefix()}
	for _, w := range workloads() {
		if w.local {
			continue // measures this machine, no target
		}
		r := measure(context.Background(), w, tg, s)
		if !r.failed() || r.Failures == 0 || r.SetupError+r.FirstError == "" {
			t.Errorf("%s: %+v, want a reported failure", w.name, r)
		}
		if r.Errors["transport error"] == 0 {
			t.Errorf("%s: errors %v, want transport errors", w.name, r.Errors)
		}
	}
}

func TestParseConnectionString(t *testing.T) {
	dev, err := parseConnectionString("UseDevelopmentStorage=true")
	if err != nil {
		t.Fatal(err)
	}
	if dev.Name != devAccount || len(dev.Key) != 64 ||
		dev.Blob.String() != "http://127.0.0.1:10000/devstoreaccount1" ||
		dev.Queue.String() != "http://127.0.0.1:10001/devstoreaccount1" ||
		dev.Table.String() != "http://127.0.0.1:10002/devstoreaccount1" {
		t.Fatalf("development storage: %+v", dev)
	}
	proxy, err := parseConnectionString("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://10.1.2.3")
	if err != nil || proxy.Table.String() != "http://10.1.2.3:10002/devstoreaccount1" {
		t.Fatalf("proxy: %v %+v", err, proxy)
	}
	full, err := parseConnectionString("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + devKey +
		";BlobEndpoint=http://127.0.0.1:20000/devstoreaccount1/;QueueEndpoint=http://127.0.0.1:20001/devstoreaccount1;TableEndpoint=http://localhost:20002/devstoreaccount1;")
	if err != nil {
		t.Fatal(err)
	}
	if full.Blob.String() != "http://127.0.0.1:20000/devstoreaccount1" || full.Table.Host != "localhost:20002" {
		t.Fatalf("full form: %+v", full)
	}
	cloud, err := parseConnectionString("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + devKey + ";EndpointSuffix=core.windows.net")
	if err != nil || cloud.Queue.String() != "https://acct.queue.core.windows.net" {
		t.Fatalf("suffix form: %v %+v", err, cloud)
	}
	for _, bad := range []string{
		"",
		"AccountName=a",
		"AccountName=a;AccountKey=not base64!",
		"AccountName=a;AccountKey=" + devKey + ";BlobEndpoint=ftp://x",
		"BlobEndpoint=http://x;SharedAccessSignature=sv=2020",
		"garbage",
	} {
		if _, err := parseConnectionString(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct{ in, name, conn string }{
		{"lazuli=UseDevelopmentStorage=true", "lazuli", "UseDevelopmentStorage=true"},
		{"UseDevelopmentStorage=true", "def", "UseDevelopmentStorage=true"},
		{"AccountName=a;AccountKey=k==", "def", "AccountName=a;AccountKey=k=="},
		{"azurite=AccountName=a;AccountKey=k", "azurite", "AccountName=a;AccountKey=k"},
	} {
		name, conn := parseTarget(tc.in, "def")
		if name != tc.name || conn != tc.conn {
			t.Errorf("%q: got %q %q, want %q %q", tc.in, name, conn, tc.name, tc.conn)
		}
	}
}

func TestSelectWorkloads(t *testing.T) {
	all, err := selectWorkloads("all")
	if err != nil || len(all) != 16 {
		t.Fatalf("all: %d %v", len(all), err)
	}
	some, err := selectWorkloads("trivial, blob-lease,trivial")
	if err != nil || len(some) != 2 || some[0].name != "trivial" || some[1].name != "blob-lease" {
		t.Fatalf("some: %v", err)
	}
	for _, w := range all {
		if w.name == "blob-cas-hot" || w.name == "disk-write-64m" {
			t.Fatalf("%s runs only when named", w.name)
		}
	}
	if hot, err := selectWorkloads("blob-cas-hot"); err != nil || len(hot) != 1 {
		t.Fatalf("blob-cas-hot by name: %v", err)
	}
	if _, err := selectWorkloads("blob-put-1k,nope"); err == nil {
		t.Fatal("unknown workload accepted")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if p := percentile(d, 0.5); p != 50 {
		t.Errorf("p50 = %d", p)
	}
	if p := percentile(d, 0.99); p != 99 {
		t.Errorf("p99 = %d", p)
	}
	if p := percentile(d[:1], 0.99); p != 1 {
		t.Errorf("p99 of one = %d", p)
	}
}

func TestTableSideBySide(t *testing.T) {
	rep := &report{Started: time.Unix(0, 0), DurationS: 1, Concurrency: 4, APIVersion: defaultVersion,
		Targets: []string{"lazuli", "azurite"}, Results: []*result{
			{Workload: "blob-put-1k", Target: "lazuli", Ops: 300, OpsPerSec: 300, P50ms: 1, P99ms: 5, BytesPerOp: 1024, MBPerSec: 0.3},
			{Workload: "blob-put-1k", Target: "azurite", Ops: 100, OpsPerSec: 100, P50ms: 3, P99ms: 20, BytesPerOp: 1024, MBPerSec: 0.1},
			{Workload: "queue-put", Target: "lazuli", Failures: 1, SetupError: "Create Queue (PUT /q): 501 NotImplemented",
				Errors: map[string]int64{"501 NotImplemented": 1}},
			{Workload: "queue-put", Target: "azurite", Ops: 50, OpsPerSec: 50, P50ms: 10, P99ms: 30, Failures: 2,
				Errors: map[string]int64{"500 InternalError": 2}, FirstError: "Put Message: 500 InternalError"},
		}}
	var out bytes.Buffer
	if err := rep.writeTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"lazuli/azurite", "3.00x", "setup failed", "50.0!",
		"[lazuli] queue-put: setup failed, 1 failed request(s) (501 NotImplemented ×1)",
		"[azurite] queue-put: 2 of 52 operations failed (500 InternalError ×2)"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	if err := rep.writeJSON(&out); err != nil {
		t.Fatal(err)
	}
	var back report
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || len(back.Results) != 4 || back.Results[0].OpsPerSec != 300 {
		t.Fatalf("json: %v %+v", err, back)
	}
}

func TestFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--list"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "queue-receive-delete") {
		t.Fatalf("--list: %d %q %q", code, stdout.String(), stderr.String())
	}
	for _, args := range [][]string{
		{"--workloads", "nope"},
		{"--concurrency", "0"},
		{"--target", "a=AccountName=x"},
		{"--target", "a=UseDevelopmentStorage=true", "--target", "a=UseDevelopmentStorage=true"},
		{"extra"},
		{"--rounds", "0"},
		{"--pgbench-script", "blob-put-1k=x.sql"},
		{"--pgbench-script", "nope=x.sql", "--pgbench-db", "dbname=x"},
		{"--target", "disk=UseDevelopmentStorage=true"},
	} {
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// BenchmarkClientRoundTrip measures the client's own cost per request
// (build, sign, send, read) against a server that answers at once, to
// show how much CPU the load generator takes from the server under test.
func BenchmarkClientRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("ETag", `"0x1"`)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	a, err := parseConnectionString("AccountName=devstoreaccount1;AccountKey=" + devKey +
		";BlobEndpoint=" + srv.URL + "/devstoreaccount1;QueueEndpoint=" + srv.URL + ";TableEndpoint=" + srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	tg := newTarget("local", a, defaultVersion, 1, time.Minute)
	defer tg.close()
	body := pattern(smallBlobSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := putBlob(tg, "/c/b", body, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSign measures building, signing and serializing one Put Blob
// request into a connection buffer.
func BenchmarkSign(b *testing.B) {
	a, err := parseConnectionString("UseDevelopmentStorage=true")
	if err != nil {
		b.Fatal(err)
	}
	tg := newTarget("local", a, defaultVersion, 1, time.Minute)
	pc := &conn{bw: bufio.NewWriterSize(io.Discard, connBufferSize), sg: newSigner(a.Name, a.Key)}
	c := &call{op: "Put Blob", method: "PUT", base: a.Blob, path: "/c/b", body: pattern(smallBlobSize), want: 201,
		hdr: []string{"X-Ms-Blob-Type", "BlockBlob", "Content-Type", "application/octet-stream"}}
	b.ReportAllocs()
	for b.Loop() {
		if err := tg.writeRequest(pc, a.Blob.Host, c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestErrorsNameStatusAndCode checks that failures are reported with the
// status and the error code, from the x-ms-error-code header or, failing
// that, from the XML or JSON error body.
func TestErrorsNameStatusAndCode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/table"):
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"odata.error":{"code":"TableBeingDeleted","message":{"lang":"en-US","value":"The table is being deleted.\nRequestId:1"}}}`)
		case strings.HasPrefix(r.URL.Path, "/queue"):
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code><Message>Server failed to authenticate the request.
RequestId:2</Message></Error>`)
		default:
			w.Header().Set("x-ms-error-code", "ServerBusy")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	a, err := parseConnectionString("AccountName=devstoreaccount1;AccountKey=" + devKey +
		";BlobEndpoint=" + srv.URL + "/blob;QueueEndpoint=" + srv.URL + "/queue;TableEndpoint=" + srv.URL + "/table")
	if err != nil {
		t.Fatal(err)
	}
	tg := newTarget("busy", a, defaultVersion, 2, time.Minute)
	defer tg.close()
	s := runSettings{duration: 20 * time.Millisecond, concurrency: 2, preload: 1, prefix: runPrefix()}
	for _, tc := range []struct{ workload, kind, text string }{
		{"trivial", "503 ServerBusy", "Get Blob Service Properties (GET /): 503 ServerBusy"},
		{"blob-put-1k", "503 ServerBusy", "Create Container"},
		{"table-insert", "409 TableBeingDeleted", "409 TableBeingDeleted: The table is being deleted."},
		{"queue-put", "403 AuthenticationFailed", "403 AuthenticationFailed: Server failed to authenticate the request."},
	} {
		ws, err := selectWorkloads(tc.workload)
		if err != nil {
			t.Fatal(err)
		}
		r := measure(context.Background(), ws[0], tg, s)
		if r.Ops != 0 || r.Errors[tc.kind] == 0 || r.Errors[tc.kind] != r.Failures {
			t.Errorf("%s: ops %d errors %v failures %d, want only %s", tc.workload, r.Ops, r.Errors, r.Failures, tc.kind)
		}
		if msg := r.SetupError + r.FirstError; !strings.Contains(msg, tc.text) {
			t.Errorf("%s: error %q lacks %q", tc.workload, msg, tc.text)
		}
	}
}

// TestNoFileEndpoint: a target whose connection string lists endpoints
// without a File one (the reference emulator) gets no guessed File URL,
// and the file workloads fail their setup saying so.
func TestNoFileEndpoint(t *testing.T) {
	a, err := parseConnectionString("AccountName=a;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:1/a;QueueEndpoint=http://127.0.0.1:2/a;TableEndpoint=http://127.0.0.1:3/a")
	if err != nil || a.File != nil {
		t.Fatalf("file endpoint %v, %v", a.File, err)
	}
	a, err = parseConnectionString("UseDevelopmentStorage=true")
	if err != nil || a.File == nil || a.File.Port() != "10003" {
		t.Fatalf("development storage file endpoint %v, %v", a.File, err)
	}
}
