package storagetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/storage"
)

// CrashOpener opens the engine stored in dir (creating it if dir is empty)
// with or without its sync option.
type CrashOpener func(dir string, sync bool) (storage.Engine, error)

// The crash test re-runs the test binary as a writer process (selected by
// these environment variables, see CrashMain), kills it with SIGKILL under
// load, and checks the store it leaves behind.
const (
	envCrashDir   = "LAZULI_STORAGETEST_CRASH_DIR"
	envCrashSync  = "LAZULI_STORAGETEST_CRASH_SYNC"
	envCrashRound = "LAZULI_STORAGETEST_CRASH_ROUND"
)

// CrashMain must be called first in the TestMain of a package that calls
// RunCrash: in the writer process RunCrash starts, it runs the writer until
// the process is killed.
func CrashMain(open CrashOpener) {
	if dir := os.Getenv(envCrashDir); dir != "" {
		os.Exit(crashWriter(open, dir, os.Getenv(envCrashSync) == "1", os.Getenv(envCrashRound)))
	}
}

// RunCrash kills a writer process under load, for each sync setting twice
// on the same directory, and checks after each kill that every
// acknowledged Update survived, that no Update is torn, and that every
// chunk committed metadata points at is whole.
func RunCrash(t *testing.T, open CrashOpener) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			dir := t.TempDir()
			rounds := []string{"r1", "r2"}
			all := map[string][]ack{}
			for n, round := range rounds {
				acks := runCrashRound(t, dir, sync, round, time.Duration(300+200*n)*time.Millisecond)
				if len(acks) < minAcks {
					t.Fatalf("round %s: only %d Updates acknowledged before the kill", round, len(acks))
				}
				all[round] = acks
				s, err := open(dir, sync)
				if err != nil {
					t.Fatalf("reopen after kill: %v", err)
				}
				// Earlier rounds stay intact across later crashes.
				for _, r := range rounds[:n+1] {
					checkCrashRound(t, s, r, all[r])
				}
				t.Logf("round %s: %d acknowledged Updates all present", round, len(acks))
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

const (
	crashWorkers = 16
	minAcks      = 300 // acknowledged Updates before the kill
)

func chunkBody(round string, g, i int) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("%s/%d/%d;", round, g, i), 50))
}

// crashWriter runs until killed, running writeLoad with crashWorkers
// workers; after each acknowledged Update it prints "g i ref" on stdout.
func crashWriter(open CrashOpener, dir string, syncMode bool, round string) int {
	s, err := open(dir, syncMode)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	for g := range crashWorkers {
		wg.Go(func() {
			err := writeLoad(context.Background(), s, round, g, func(a ack) {
				// One write(2) per line: a kill cannot split it.
				out.Lock()
				os.Stdout.WriteString(fmt.Sprintf("%d %d %s\n", a.g, a.i, a.ref))
				out.Unlock()
			})
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		})
	}
	wg.Wait()
	return 0
}

// writeLoad is worker g of a crash test's load, until an error or until
// ctx ends: it commits Updates that write a pair of keys, bump the
// worker's counter and (every third one) reference a freshly written
// chunk, and reports each one acknowledged to acked. checkCrashRound
// checks what it leaves.
func writeLoad(ctx context.Context, s storage.Engine, round string, g int, acked func(ack)) error {
	for i := 0; ctx.Err() == nil; i++ {
		ref := storage.ChunkRef("-")
		switch i % 6 {
		case 0:
			r, _, err := s.Chunks().Put(ctx, bytes.NewReader(chunkBody(round, g, i)))
			if err != nil {
				return err
			}
			ref = r
		case 3:
			// A deferred Put is durable once its wait returns.
			r, _, wait, err := storage.PutDeferred(ctx, s.Chunks(), bytes.NewReader(chunkBody(round, g, i)))
			if err != nil {
				return err
			}
			if err := wait(); err != nil {
				return err
			}
			ref = r
		}
		val := []byte(fmt.Sprintf("%s %d %d %s", round, g, i, ref))
		err := s.Update(ctx, func(tx storage.Tx) error {
			counter := []byte(fmt.Sprintf("%s/count/%02d", round, g))
			n := 0
			if v, err := tx.Get(counter); err == nil {
				n, _ = strconv.Atoi(string(v))
			} else if !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			return errors.Join(
				tx.Set([]byte(fmt.Sprintf("%s/a/%02d/%08d", round, g, i)), val),
				tx.Set(counter, []byte(strconv.Itoa(n+1))),
				tx.Set([]byte(fmt.Sprintf("%s/b/%02d/%08d", round, g, i)), val),
			)
		})
		if err != nil {
			return err
		}
		acked(ack{g: g, i: i, ref: ref})
	}
	return ctx.Err()
}

type ack struct {
	g, i int
	ref  storage.ChunkRef
}

// runCrashRound starts a writer on dir, kills it after killAfter of
// acknowledged load, and returns what it acknowledged.
func runCrashRound(t *testing.T, dir string, syncMode bool, round string, killAfter time.Duration) []ack {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	syncEnv := "0"
	if syncMode {
		syncEnv = "1"
	}
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashSync+"="+syncEnv, envCrashRound+"="+round)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acks []ack
	var mu sync.Mutex
	first := make(chan struct{})
	readDone := make(chan error, 1)
	go func() {
		r := bufio.NewReader(stdout)
		once := false
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				// A line without its newline was never fully printed.
				if err == io.EOF {
					err = nil
				}
				readDone <- err
				return
			}
			var a ack
			var ref string
			if _, err := fmt.Sscanf(line, "%d %d %s", &a.g, &a.i, &ref); err != nil {
				readDone <- fmt.Errorf("bad line %q: %v", line, err)
				return
			}
			a.ref = storage.ChunkRef(ref)
			mu.Lock()
			acks = append(acks, a)
			mu.Unlock()
			if !once {
				once = true
				close(first)
			}
		}
	}()
	select {
	case <-first:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("writer acknowledged nothing; stderr: %s", stderr.String())
	}
	// Kill once the load is well under way: after killAfter and at least
	// minAcks acknowledgements (a busy machine may be slow to get there).
	time.Sleep(killAfter)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= minAcks {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-readDone; err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(werr, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("writer ended with %v, not by SIGKILL; stderr: %s", werr, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	return acks
}

// checkCrashRound verifies that every acknowledged Update survived and
// that every Update is all-or-nothing.
func checkCrashRound(t *testing.T, s storage.Engine, round string, acks []ack) {
	t.Helper()
	ctx := context.Background()
	type pair struct{ a, b string }
	found := map[[2]int]*pair{}
	counts := map[int]int{}
	err := s.View(ctx, func(tx storage.Tx) error {
		it := tx.Scan([]byte(round+"/"), []byte(round+"0"), false)
		defer it.Close()
		for it.Next() {
			parts := strings.Split(string(it.Key()), "/")
			g, _ := strconv.Atoi(parts[2])
			if parts[1] == "count" {
				counts[g], _ = strconv.Atoi(string(it.Value()))
				continue
			}
			i, _ := strconv.Atoi(parts[3])
			p := found[[2]int{g, i}]
			if p == nil {
				p = &pair{}
				found[[2]int{g, i}] = p
			}
			if parts[1] == "a" {
				p.a = string(it.Value())
			} else {
				p.b = string(it.Value())
			}
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	perWorker := map[int]int{}
	for k, p := range found {
		if p.a == "" || p.a != p.b {
			t.Fatalf("round %s: Update %v torn by the crash: a=%q b=%q", round, k, p.a, p.b)
		}
		perWorker[k[0]]++
	}
	for g := range crashWorkers {
		if counts[g] != perWorker[g] {
			t.Fatalf("round %s: worker %d counter = %d but %d pairs exist", round, g, counts[g], perWorker[g])
		}
	}
	for _, a := range acks {
		p := found[[2]int{a.g, a.i}]
		if p == nil {
			t.Fatalf("round %s: acknowledged Update %d/%d lost (%d acknowledged, %d present)", round, a.g, a.i, len(acks), len(found))
		}
		if want := fmt.Sprintf("%s %d %d %s", round, a.g, a.i, a.ref); p.a != want {
			t.Fatalf("round %s: Update %d/%d value %q, want %q", round, a.g, a.i, p.a, want)
		}
	}
	// Every chunk referenced by committed metadata is complete, including
	// unacknowledged Updates that happened to commit: chunks are written
	// before the metadata that points at them.
	for k, p := range found {
		ref := strings.Fields(p.a)[3]
		if ref == "-" {
			continue
		}
		rc, err := s.Chunks().Open(ctx, storage.ChunkRef(ref), 0, -1)
		if err != nil {
			t.Fatalf("round %s: chunk of Update %v: %v", round, k, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(b, chunkBody(round, k[0], k[1])) {
			t.Fatalf("round %s: chunk of Update %v damaged (%d bytes, %v)", round, k, len(b), err)
		}
	}
}
