package cluster

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/lazuli-storage/lazuli/conformance/harness"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
)

// buildLazuli builds the lazuli command once per test binary.
var buildLazuli = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "lazuli-cluster-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "lazuli")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/lazuli-storage/lazuli/cmd/lazuli").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// process is a lazuli process on the shared database.
type process struct {
	cmd                           *exec.Cmd
	blob, queue, table, file, smb string
}

// startProcess starts a lazuli process on the database at url, with
// extra flags.
func startProcess(t *testing.T, url string, extra ...string) *process {
	t.Helper()
	bin, err := buildLazuli()
	must(t, err)
	args := append([]string{"--engine", "postgres", "--postgres", url, "--silent",
		"--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "--smbPort", "0", "--adminPort", "0"}, extra...)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "lazuli: blob ") {
				lines <- sc.Text()
			}
		}
	}()
	select {
	case line := <-lines:
		f := strings.Fields(line) // lazuli: blob A queue B table C file D smb E
		return &process{cmd: cmd, blob: "http://" + f[2] + "/devstoreaccount1",
			queue: "http://" + f[4] + "/devstoreaccount1", table: "http://" + f[6] + "/devstoreaccount1",
			file: "http://" + f[8] + "/devstoreaccount1", smb: f[10]}
	case <-time.After(60 * time.Second):
		t.Fatal("lazuli did not start")
	}
	return nil
}

// tableLoad inserts entities with unique row keys through clients until
// stop closes, and returns the row keys that were acknowledged. Errors are
// allowed only as ok says.
func tableLoad(t *testing.T, clients []*aztables.Client, stop chan struct{}, ok func(error) bool) func() []string {
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				rk := fmt.Sprintf("%02d-%06d", g, i)
				c := clients[(g+i)%len(clients)]
				e := fmt.Sprintf(`{"PartitionKey":"load","RowKey":%q,"N":%d}`, rk, i)
				_, err := c.AddEntity(context.Background(), []byte(e), nil)
				if err != nil {
					if !ok(err) {
						t.Errorf("insert %s: %v", rk, err)
						return
					}
					time.Sleep(5 * time.Millisecond)
					continue
				}
				mu.Lock()
				acked = append(acked, rk)
				mu.Unlock()
			}
		})
	}
	return func() []string {
		wg.Wait()
		return acked
	}
}

// mustHaveAll checks that every acknowledged row key is stored.
func mustHaveAll(t *testing.T, c *aztables.Client, acked []string, where string) {
	t.Helper()
	have := map[string]bool{}
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: ptr("RowKey")})
	for pager.More() {
		page, err := pager.NextPage(harness.Ctx(t))
		must(t, err)
		for _, e := range page.Entities {
			s := string(e)
			i := strings.Index(s, `"RowKey":"`)
			rk := s[i+len(`"RowKey":"`):]
			rk, _, _ = strings.Cut(rk, `"`)
			have[rk] = true
		}
	}
	for _, rk := range acked {
		if !have[rk] {
			t.Fatalf("%s: acknowledged insert %s lost (%d acknowledged, %d stored)", where, rk, len(acked), len(have))
		}
	}
}

// TestKillInstanceUnderLoad: three lazuli processes share a database; one
// is killed with SIGKILL while inserts run through all three. Every
// acknowledged insert is present through the others and after the killed
// one restarts; a lease it granted stays held; a message it handed out
// reappears once its visibility timeout passes.
func TestKillInstanceUnderLoad(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ps := []*process{startProcess(t, url), startProcess(t, url), startProcess(t, url)}
	victim := ps[2]
	ctx := harness.Ctx(t)

	var clients []*aztables.Client
	for _, p := range ps {
		clients = append(clients, tableClient(t, p.table, "load"))
	}
	_, err := clients[0].CreateTable(ctx, nil)
	must(t, err)

	// The victim grants an infinite lease and hands out a message for 3 s.
	bv := blobClient(t, victim.blob)
	_, err = bv.CreateContainer(ctx, "kill", nil)
	must(t, err)
	bbv := bv.ServiceClient().NewContainerClient("kill").NewBlockBlobClient("b")
	_, err = bbv.UploadBuffer(ctx, []byte("x"), nil)
	must(t, err)
	lcv, err := lease.NewBlobClient(bbv, nil)
	must(t, err)
	_, err = lcv.AcquireLease(ctx, -1, nil)
	must(t, err)
	qv := queueClient(t, victim.queue).NewQueueClient("kill")
	_, err = qv.Create(ctx, nil)
	must(t, err)
	_, err = qv.EnqueueMessage(ctx, "m", nil)
	must(t, err)
	handed, err := qv.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: ptr(int32(3))})
	must(t, err)
	if len(handed.Messages) != 1 {
		t.Fatalf("dequeue: %d messages", len(handed.Messages))
	}
	handedAt := time.Now()

	// Requests in flight on the victim fail when it dies (connection
	// errors, not Azure errors); the others' inserts must all succeed.
	stop := make(chan struct{})
	wait := tableLoad(t, clients, stop, func(err error) bool { st, _ := errorCode(err); return st == 0 })
	time.Sleep(700 * time.Millisecond)
	must(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	victim.cmd.Wait()
	time.Sleep(500 * time.Millisecond)
	close(stop)
	acked := wait()
	if len(acked) < 50 {
		t.Fatalf("only %d inserts acknowledged", len(acked))
	}
	mustHaveAll(t, clients[0], acked, "through instance 0")
	mustHaveAll(t, clients[1], acked, "through instance 1")

	// The lease the victim granted is still held.
	b1 := blobClient(t, ps[1].blob)
	bb1 := b1.ServiceClient().NewContainerClient("kill").NewBlockBlobClient("b")
	p, err := bb1.GetProperties(ctx, nil)
	must(t, err)
	if string(*p.LeaseState) != "leased" {
		t.Errorf("lease state after the kill: %s", *p.LeaseState)
	}
	lc1, err := lease.NewBlobClient(bb1, nil)
	must(t, err)
	if _, err := lc1.AcquireLease(ctx, 15, nil); err == nil {
		t.Errorf("a second lease was granted after the granting instance died")
	}

	// The handed-out message is invisible until its timeout, then back.
	q0 := queueClient(t, ps[0].queue).NewQueueClient("kill")
	if time.Since(handedAt) < 2500*time.Millisecond {
		got, err := q0.DequeueMessage(ctx, nil)
		must(t, err)
		if len(got.Messages) != 0 && time.Since(handedAt) < 3*time.Second {
			t.Errorf("the message reappeared before its visibility timeout")
		}
	}
	time.Sleep(time.Until(handedAt.Add(3500 * time.Millisecond)))
	got, err := q0.DequeueMessage(ctx, nil)
	must(t, err)
	if len(got.Messages) != 1 || *got.Messages[0].MessageID != *handed.Messages[0].MessageID || *got.Messages[0].DequeueCount != 2 {
		t.Fatalf("the message handed out by the killed instance did not reappear: %d messages", len(got.Messages))
	}

	// The victim restarts and serves the same data.
	restarted := startProcess(t, url)
	mustHaveAll(t, tableClient(t, restarted.table, "load"), acked, "through the restarted instance")
	t.Logf("%d inserts acknowledged, all present", len(acked))
}

// TestPostgresRestartUnderLoad: the database is killed and started again
// while three instances take inserts. While it is down every failure is
// Azure's retryable 503 ServerBusy; after it is back inserts succeed again
// and nothing acknowledged is lost.
func TestPostgresRestartUnderLoad(t *testing.T) {
	srv := pgtest.Shared(t)
	if !srv.Restartable() {
		// Only with a developer's own server (never in CI).
		t.Skip("the server at " + pgtest.EnvURL + " is not one this test may restart")
	}
	ins := startInstances(t, 3)
	ctx := harness.Ctx(t)
	var clients []*aztables.Client
	for _, in := range ins {
		clients = append(clients, tableClient(t, in.table, "restart"))
	}
	_, err := clients[0].CreateTable(ctx, nil)
	must(t, err)

	var mu sync.Mutex
	busy := 0
	stop := make(chan struct{})
	wait := tableLoad(t, clients, stop, func(err error) bool {
		st, code := errorCode(err)
		if st == 503 && code == "ServerBusy" {
			mu.Lock()
			busy++
			mu.Unlock()
			return true
		}
		return false
	})
	time.Sleep(500 * time.Millisecond)
	srv.Kill()
	time.Sleep(time.Second)
	mu.Lock()
	busyWhileDown := busy
	mu.Unlock()
	must(t, srv.Restart())
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	acked := wait()
	if busyWhileDown == 0 {
		t.Errorf("no 503 ServerBusy while the database was down")
	}
	// Inserts succeed again once it is back.
	e := `{"PartitionKey":"after","RowKey":"r"}`
	var lastErr error
	for range 20 {
		if _, lastErr = clients[1].AddEntity(ctx, []byte(e), nil); lastErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	must(t, lastErr)
	mustHaveAll(t, clients[2], acked, "after the restart")
	t.Logf("%d inserts acknowledged, %d answered 503 ServerBusy", len(acked), busy)
}
