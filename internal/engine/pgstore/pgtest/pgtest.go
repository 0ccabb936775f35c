// Package pgtest gives tests a PostgreSQL server to run the postgres engine
// against: the one at $LAZULI_TEST_POSTGRES_URL when a developer sets it,
// otherwise a throw-away server that the test process starts itself
// (initdb into a temporary directory, a free loopback port), so no test
// depends on a database already running.
//
// As root (CI), the throw-away server runs as the unprivileged "postgres"
// system user, since PostgreSQL refuses to run as root. The server dies
// with the test process (parent-death signal), and directories that dead
// test processes left behind are removed by the next one.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EnvURL names the variable with a developer-provided server URL. The
// user in it must be allowed to create databases.
const EnvURL = "LAZULI_TEST_POSTGRES_URL"

// envBin overrides the directory of the PostgreSQL binaries.
const envBin = "LAZULI_TEST_POSTGRES_BIN"

// Server is a PostgreSQL server tests create databases on.
type Server struct {
	// URL reaches the server's maintenance database as a superuser.
	URL string

	// Fields of a throw-away server (zero for a developer-provided one).
	dir, bin string
	port     int
	cred     *syscall.Credential
	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Shared returns the process-wide server, starting it on first use. The
// first test's failure to start one fails every test that asks.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	s, err := Get()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return s
}

// Get is Shared for code without a testing.TB (a TestMain, or a process
// a test started). A server this process starts is announced in
// $LAZULI_TEST_POSTGRES_URL, so the processes it starts use it too.
func Get() (*Server, error) {
	sharedOnce.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			shared = &Server{URL: u}
			return
		}
		shared, sharedErr = Start()
		if sharedErr == nil {
			os.Setenv(EnvURL, shared.URL)
		}
	})
	return shared, sharedErr
}

// DatabaseFor returns the URL of the database named after key on the
// shared server, creating it if it does not exist yet: processes that
// agree on key (a test and the processes it starts) share it.
func DatabaseFor(key string) (string, error) {
	s, err := Get()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	name := "lazuli_test_" + hex.EncodeToString(sum[:6])
	if err := s.exec("CREATE DATABASE " + name); err != nil {
		var pe *pgconn.PgError
		// 42P04: it exists; 23505: another process is creating it.
		if !errors.As(err, &pe) || (pe.Code != "42P04" && pe.Code != "23505") {
			return "", err
		}
	}
	return withDatabase(s.URL, name)
}

// NewDatabase creates an empty database on the shared server and returns
// its URL; the database is dropped when tb ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	s := Shared(tb)
	u, err := s.CreateDatabase()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() { s.DropDatabase(u) })
	return u
}

// CreateDatabase creates an empty database with a fresh name and returns
// its URL.
func (s *Server) CreateDatabase() (string, error) {
	var b [6]byte
	rand.Read(b[:])
	name := "lazuli_test_" + hex.EncodeToString(b[:])
	if err := s.exec("CREATE DATABASE " + name); err != nil {
		return "", err
	}
	return withDatabase(s.URL, name)
}

// DropDatabase drops the database of a URL CreateDatabase returned,
// closing whatever connections still use it.
func (s *Server) DropDatabase(dbURL string) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return
	}
	name := strings.TrimPrefix(u.Path, "/")
	if !strings.HasPrefix(name, "lazuli_test_") {
		return
	}
	s.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
}

func (s *Server) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

func withDatabase(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// Start initializes and starts a throw-away server in a new temporary
// directory on a free loopback port.
func Start() (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	removeStale()
	dir, err := os.MkdirTemp("", "lazuli-pgtest-")
	if err != nil {
		return nil, err
	}
	// The owner file lets a later process tell this directory is stale.
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin}
	data := filepath.Join(dir, "data")
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the postgres system user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"--no-sync", "-E", "UTF8", "--locale=C")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	var lastErr error
	for range 5 {
		if s.port, lastErr = freePort(); lastErr != nil {
			continue
		}
		if lastErr = s.Restart(); lastErr == nil {
			s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

// Restart starts the server again after Kill (Start does the first start).
// It returns once the server accepts connections.
func (s *Server) Restart() error {
	if s.dir == "" {
		return errors.New("pgtest: only a throw-away server can be restarted")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	args := []string{"-D", filepath.Join(s.dir, "data"), "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + s.dir,
		// Durability against a crashed process, not a crashed machine:
		// commits still wait for the WAL write, not for the disk.
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "max_pred_locks_per_transaction=256",
		"-c", "shared_buffers=64MB"}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), args...)
	cmd.Dir = s.dir
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := startOnLockedThread(cmd); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, url)
		cancel()
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			return fmt.Errorf("postgres exited at start: %s", tail(b))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Restartable reports whether the server is a throw-away one this
// process started (Kill and Restart work on it).
func (s *Server) Restartable() bool { return s.dir != "" }

// Kill stops the server at once (SIGKILL to the postmaster and its
// children), as a crash would, and waits until it is gone.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
	s.cmd = nil
}

// Stop shuts the server down and removes its directory.
func (s *Server) Stop() {
	if s.dir == "" {
		return
	}
	s.Kill()
	os.RemoveAll(s.dir)
}

// StopShared stops the process-wide server if this process started one
// (call it at the end of TestMain).
func StopShared() {
	if shared != nil {
		shared.Stop()
	}
}

// startOnLockedThread starts cmd from a thread that never exits, because
// the parent-death signal fires when the starting thread ends, not the
// process.
func startOnLockedThread(cmd *exec.Cmd) error {
	errc := make(chan error)
	go func() {
		runtime.LockOSThread()
		errc <- cmd.Start()
		select {} // keep the thread
	}()
	return <-errc
}

func findBin() (string, error) {
	if d := os.Getenv(envBin); d != "" {
		return d, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(matches) == 0 {
		if p, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
		return "", fmt.Errorf("no PostgreSQL binaries found (install postgresql, set %s to their directory, or set %s)", envBin, EnvURL)
	}
	return filepath.Dir(matches[len(matches)-1]), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// removeStale removes the directories of throw-away servers whose test
// process is gone.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "lazuli-pgtest-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || syscall.Kill(pid, 0) == nil {
			continue
		}
		os.RemoveAll(d)
	}
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
