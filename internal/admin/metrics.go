package admin

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lazuli-storage/lazuli/storage"
)

// Metrics is lazuli's Prometheus registry: requests of the four REST
// services, engine and SMB figures, and the Go runtime's.
//
// The request path is kept to atomic adds: the label children of each
// service and operation are resolved once and cached in a copy-on-write
// map (a lookup without lock or allocation), and those of each status and
// error code in a short list per operation.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec

	mu  sync.Mutex // serializes additions to ops
	ops atomic.Pointer[map[string]map[string]*opMetrics]
}

// opMetrics are the resolved children of one service and operation.
type opMetrics struct {
	service, operation string
	latency            prometheus.Observer
	in, out            prometheus.Counter
	mu                 sync.Mutex // serializes additions to outcomes
	outcomes           atomic.Pointer[[]outcome]
}

// outcome is the request counter of one status and error code.
type outcome struct {
	status int
	code   string
	n      prometheus.Counter
}

// latencyBuckets span a cached read (well under a millisecond) to a
// large upload or a fsync under load.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// NewMetrics returns a registry with the request metrics and the Go
// runtime and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lazuli_requests_total",
		Help: "REST requests answered, by service, operation (as in the access log), status and Azure error code."},
		[]string{"service", "operation", "status", "error_code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "lazuli_request_duration_seconds",
		Help: "Time from a request's head to the end of its answer.", Buckets: latencyBuckets},
		[]string{"service", "operation"})
	m.bytesIn = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lazuli_request_body_bytes_total",
		Help: "Request body bytes (as declared by Content-Length)."}, []string{"service", "operation"})
	m.bytesOut = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lazuli_response_body_bytes_total",
		Help: "Response body bytes written."}, []string{"service", "operation"})
	m.reg.MustRegister(m.requests, m.latency, m.bytesIn, m.bytesOut,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	empty := map[string]map[string]*opMetrics{}
	m.ops.Store(&empty)
	return m
}

// Handler serves the registry in Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObserveRequest counts one finished request.
func (m *Metrics) ObserveRequest(service, operation string, status int, errorCode string, bytesIn, bytesOut int64, elapsed time.Duration) {
	om := (*m.ops.Load())[service][operation]
	if om == nil {
		om = m.addOp(service, operation)
	}
	om.latency.Observe(elapsed.Seconds())
	if bytesIn > 0 {
		om.in.Add(float64(bytesIn))
	}
	if bytesOut > 0 {
		om.out.Add(float64(bytesOut))
	}
	for _, o := range *om.outcomes.Load() {
		if o.status == status && o.code == errorCode {
			o.n.Inc()
			return
		}
	}
	om.addOutcome(m, status, errorCode).Inc()
}

// addOp resolves the children of a service and operation seen for the
// first time.
func (m *Metrics) addOp(service, operation string) *opMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := *m.ops.Load()
	if om := cur[service][operation]; om != nil {
		return om
	}
	om := &opMetrics{service: service, operation: operation,
		latency: m.latency.WithLabelValues(service, operation),
		in:      m.bytesIn.WithLabelValues(service, operation),
		out:     m.bytesOut.WithLabelValues(service, operation)}
	om.outcomes.Store(&[]outcome{})
	next := make(map[string]map[string]*opMetrics, len(cur)+1)
	for svc, ops := range cur {
		next[svc] = ops
	}
	ops := make(map[string]*opMetrics, len(cur[service])+1)
	for op, v := range cur[service] {
		ops[op] = v
	}
	ops[operation] = om
	next[service] = ops
	m.ops.Store(&next)
	return om
}

// addOutcome resolves the counter of a status and error code seen for the
// first time for the operation.
func (om *opMetrics) addOutcome(m *Metrics, status int, code string) prometheus.Counter {
	om.mu.Lock()
	defer om.mu.Unlock()
	cur := *om.outcomes.Load()
	for _, o := range cur {
		if o.status == status && o.code == code {
			return o.n
		}
	}
	n := m.requests.WithLabelValues(om.service, om.operation, strconv.Itoa(status), code)
	next := append(append(make([]outcome, 0, len(cur)+1), cur...), outcome{status, code, n})
	om.outcomes.Store(&next)
	return n
}

// AddEngine reports the engine's own figures as lazuli_engine_<name>.
func (m *Metrics) AddEngine(r storage.StatsReporter) {
	c := &engineCollector{r: r}
	for _, st := range r.EngineStats() {
		c.descs = append(c.descs, prometheus.NewDesc("lazuli_engine_"+st.Name, st.Help, nil, nil))
	}
	m.reg.MustRegister(c)
}

type engineCollector struct {
	r     storage.StatsReporter
	descs []*prometheus.Desc
}

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	for i, st := range c.r.EngineStats() {
		if i >= len(c.descs) {
			return
		}
		kind := prometheus.GaugeValue
		if st.Counter {
			kind = prometheus.CounterValue
		}
		ch <- prometheus.MustNewConstMetric(c.descs[i], kind, st.Value)
	}
}

// SMBStats are the SMB server's figures as of now: Leases counts the
// opens holding an oplock or lease, LeaseBreaks the breaks sent.
type SMBStats struct {
	Connections, Sessions, Opens, Locks, Leases int
	LeaseBreaks                                 int64
}

// AddSMB reports the SMB server's figures.
func (m *Metrics) AddSMB(stats func() SMBStats) {
	m.reg.MustRegister(smbCollector(stats))
}

type smbCollector func() SMBStats

var smbDescs = struct{ conns, sessions, opens, locks, leases, breaks *prometheus.Desc }{
	prometheus.NewDesc("lazuli_smb_connections", "SMB connections open.", nil, nil),
	prometheus.NewDesc("lazuli_smb_sessions", "SMB sessions logged on.", nil, nil),
	prometheus.NewDesc("lazuli_smb_opens", "Files and directories open over SMB.", nil, nil),
	prometheus.NewDesc("lazuli_smb_byte_range_locks", "Byte-range locks held over SMB.", nil, nil),
	prometheus.NewDesc("lazuli_smb_leases", "SMB leases and oplocks granted.", nil, nil),
	prometheus.NewDesc("lazuli_smb_lease_breaks_total", "SMB lease and oplock breaks sent.", nil, nil),
}

func (f smbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{smbDescs.conns, smbDescs.sessions, smbDescs.opens, smbDescs.locks, smbDescs.leases, smbDescs.breaks} {
		ch <- d
	}
}

func (f smbCollector) Collect(ch chan<- prometheus.Metric) {
	st := f()
	ch <- prometheus.MustNewConstMetric(smbDescs.conns, prometheus.GaugeValue, float64(st.Connections))
	ch <- prometheus.MustNewConstMetric(smbDescs.sessions, prometheus.GaugeValue, float64(st.Sessions))
	ch <- prometheus.MustNewConstMetric(smbDescs.opens, prometheus.GaugeValue, float64(st.Opens))
	ch <- prometheus.MustNewConstMetric(smbDescs.locks, prometheus.GaugeValue, float64(st.Locks))
	ch <- prometheus.MustNewConstMetric(smbDescs.leases, prometheus.GaugeValue, float64(st.Leases))
	ch <- prometheus.MustNewConstMetric(smbDescs.breaks, prometheus.CounterValue, float64(st.LeaseBreaks))
}
