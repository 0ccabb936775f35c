package harness

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/emulator"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
)

// cluster starts n lazuli instances on one fresh PostgreSQL database.
// The target's URLs name the first instance; its transport sends each
// request to the next instance in turn, so consecutive requests of one
// client land on different instances.
func cluster(t testing.TB, name string, n int, tweak func(*emulator.Options)) *Target {
	t.Helper()
	url := pgtest.NewDatabase(t)
	rr := &RoundRobin{Next: &http.Transport{MaxIdleConnsPerHost: 64}}
	var first *emulator.Emulator
	for i := range n {
		opts := emulator.Options{EngineKind: "postgres", PostgresURL: url}
		tweak(&opts)
		if first != nil {
			// Like instances behind a load balancer, all advertise
			// one address.
			opts.Advertise = map[emulator.Service]string{}
			for _, svc := range []emulator.Service{emulator.Blob, emulator.Queue, emulator.Table, emulator.File} {
				opts.Advertise[svc] = hostOf(first.Endpoint(svc))
			}
		}
		emu, err := emulator.Start(opts)
		if err != nil {
			t.Fatalf("start lazuli %d: %v", i, err)
		}
		t.Cleanup(func() { emu.Close() })
		if i == 0 {
			first = emu
		}
		for _, svc := range []emulator.Service{emulator.Blob, emulator.Queue, emulator.Table, emulator.File} {
			rr.add(svc, hostOf(first.Endpoint(svc)), hostOf(emu.Endpoint(svc)))
		}
		rr.Instances = append(rr.Instances, emu)
	}
	tg := &Target{Name: name, Account: emulator.Account, Key: emulator.Key, Emulator: first, Transport: rr,
		HTTP: &http.Client{Transport: rr, Timeout: 60 * time.Second}}
	tg.BlobURL, tg.QueueURL = first.Endpoint(emulator.Blob), first.Endpoint(emulator.Queue)
	tg.TableURL, tg.FileURL = first.Endpoint(emulator.Table), first.Endpoint(emulator.File)
	return tg
}

func hostOf(endpoint string) string {
	h := strings.TrimPrefix(endpoint, "http://")
	h, _, _ = strings.Cut(h, "/")
	return h
}

// RoundRobin is an http.RoundTripper (and azcore Transporter) that sends
// each request for a first instance's host to the same service of the
// next instance in turn.
type RoundRobin struct {
	Next      http.RoundTripper
	Instances []*emulator.Emulator
	hosts     map[string][]string
	n         atomic.Uint64
}

func (rr *RoundRobin) add(_ emulator.Service, nominal, host string) {
	if rr.hosts == nil {
		rr.hosts = map[string][]string{}
	}
	rr.hosts[nominal] = append(rr.hosts[nominal], host)
}

// Do implements policy.Transporter.
func (rr *RoundRobin) Do(req *http.Request) (*http.Response, error) { return rr.RoundTrip(req) }

// RoundTrip implements http.RoundTripper.
func (rr *RoundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	hosts := rr.hosts[req.URL.Host]
	if len(hosts) == 0 {
		return rr.Next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.URL.Host = hosts[rr.n.Add(1)%uint64(len(hosts))]
	// The Host header stays the nominal one: Shared Key signs the path,
	// not the host, and a load balancer keeps it too.
	r.Host = req.URL.Host
	return rr.Next.RoundTrip(r)
}
