package lease

import (
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

const (
	A = "aaaaaaaa-0000-0000-0000-000000000001"
	B = "bbbbbbbb-0000-0000-0000-000000000002"
	C = "cccccccc-0000-0000-0000-000000000003"
	N = "dddddddd-0000-0000-0000-000000000004" // generated id for acquire without proposal
)

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// states builds every column of the transition table as of t0.
func states() map[string]State {
	return map[string]State{
		"Available": {},
		"Leased":    {Phase: Leased, ID: A, Duration: 30, Expiry: t0.Add(20 * time.Second)},
		"Breaking":  {Phase: Breaking, ID: A, BreakTime: t0.Add(10 * time.Second)},
		"Broken":    {Phase: Broken, ID: A},
		// Expired is a fixed lease whose time ran out (derived lazily).
		"Expired": {Phase: Leased, ID: A, Duration: 15, Expiry: t0.Add(-time.Second)},
	}
}

func ip(i int) *int { return &i }

type want struct {
	code  azerr.Code
	phase Phase
	id    string
}

func TestTransitionTable(t *testing.T) {
	ok := func(p Phase, id string) want { return want{phase: p, id: id} }
	fail := func(code azerr.Code) want { return want{code: code} }
	rows := []struct {
		name string
		a    Action
		cols map[string]want
	}{
		{"acquire no proposed", Action{Kind: Acquire, NewID: N, Duration: Infinite}, map[string]want{
			"Available": ok(Leased, N), "Leased": fail(azerr.LeaseAlreadyPresent), "Breaking": fail(azerr.LeaseAlreadyPresent),
			"Broken": ok(Leased, N), "Expired": ok(Leased, N)}},
		{"acquire proposed A", Action{Kind: Acquire, ProposedID: A, NewID: N, Duration: 60}, map[string]want{
			"Available": ok(Leased, A), "Leased": ok(Leased, A), "Breaking": fail(azerr.LeaseIsBreakingAndCannotBeAcquired),
			"Broken": ok(Leased, A), "Expired": ok(Leased, A)}},
		{"acquire proposed B", Action{Kind: Acquire, ProposedID: B, NewID: N, Duration: 15}, map[string]want{
			"Available": ok(Leased, B), "Leased": fail(azerr.LeaseAlreadyPresent), "Breaking": fail(azerr.LeaseAlreadyPresent),
			"Broken": ok(Leased, B), "Expired": ok(Leased, B)}},
		{"renew A", Action{Kind: Renew, LeaseID: A}, map[string]want{
			"Available": fail(azerr.LeaseIdMismatchWithLeaseOperation), "Leased": ok(Leased, A), "Breaking": fail(azerr.LeaseIsBrokenAndCannotBeRenewed),
			"Broken": fail(azerr.LeaseIsBrokenAndCannotBeRenewed), "Expired": ok(Leased, A)}},
		{"renew B", Action{Kind: Renew, LeaseID: B}, map[string]want{
			"Available": fail(azerr.LeaseIdMismatchWithLeaseOperation), "Leased": fail(azerr.LeaseIdMismatchWithLeaseOperation), "Breaking": fail(azerr.LeaseIdMismatchWithLeaseOperation),
			"Broken": fail(azerr.LeaseIdMismatchWithLeaseOperation), "Expired": fail(azerr.LeaseIdMismatchWithLeaseOperation)}},
		{"change A to B", Action{Kind: Change, LeaseID: A, ProposedID: B}, map[string]want{
			"Available": fail(azerr.LeaseNotPresentWithLeaseOperation), "Leased": ok(Leased, B), "Breaking": fail(azerr.LeaseIsBreakingAndCannotBeChanged),
			"Broken": fail(azerr.LeaseNotPresentWithLeaseOperation), "Expired": fail(azerr.LeaseNotPresentWithLeaseOperation)}},
		{"change B to A", Action{Kind: Change, LeaseID: B, ProposedID: A}, map[string]want{
			"Available": fail(azerr.LeaseNotPresentWithLeaseOperation), "Leased": ok(Leased, A), "Breaking": fail(azerr.LeaseIdMismatchWithLeaseOperation),
			"Broken": fail(azerr.LeaseNotPresentWithLeaseOperation), "Expired": fail(azerr.LeaseNotPresentWithLeaseOperation)}},
		{"change B to C", Action{Kind: Change, LeaseID: B, ProposedID: C}, map[string]want{
			"Available": fail(azerr.LeaseNotPresentWithLeaseOperation), "Leased": fail(azerr.LeaseIdMismatchWithLeaseOperation), "Breaking": fail(azerr.LeaseIdMismatchWithLeaseOperation),
			"Broken": fail(azerr.LeaseNotPresentWithLeaseOperation), "Expired": fail(azerr.LeaseNotPresentWithLeaseOperation)}},
		{"release A", Action{Kind: Release, LeaseID: A}, map[string]want{
			"Available": fail(azerr.LeaseIdMismatchWithLeaseOperation), "Leased": ok(Available, ""), "Breaking": ok(Available, ""),
			"Broken": ok(Available, ""), "Expired": ok(Available, "")}},
		{"release B", Action{Kind: Release, LeaseID: B}, map[string]want{
			"Available": fail(azerr.LeaseIdMismatchWithLeaseOperation), "Leased": fail(azerr.LeaseIdMismatchWithLeaseOperation), "Breaking": fail(azerr.LeaseIdMismatchWithLeaseOperation),
			"Broken": fail(azerr.LeaseIdMismatchWithLeaseOperation), "Expired": fail(azerr.LeaseIdMismatchWithLeaseOperation)}},
		{"break 0", Action{Kind: Break, BreakPeriod: ip(0)}, map[string]want{
			"Available": fail(azerr.LeaseNotPresentWithLeaseOperation), "Leased": ok(Broken, A), "Breaking": ok(Broken, A),
			"Broken": ok(Broken, A), "Expired": ok(Broken, A)}},
		{"break 5", Action{Kind: Break, BreakPeriod: ip(5)}, map[string]want{
			"Available": fail(azerr.LeaseNotPresentWithLeaseOperation), "Leased": ok(Breaking, A), "Breaking": ok(Breaking, A),
			"Broken": ok(Broken, A), "Expired": ok(Broken, A)}},
		{"break no period", Action{Kind: Break}, map[string]want{
			"Available": fail(azerr.LeaseNotPresentWithLeaseOperation), "Leased": ok(Breaking, A), "Breaking": ok(Breaking, A),
			"Broken": ok(Broken, A), "Expired": ok(Broken, A)}},
	}
	for _, row := range rows {
		for col, s := range states() {
			w, present := row.cols[col]
			if !present {
				t.Fatalf("%s/%s: missing cell", row.name, col)
			}
			n, res, code := Apply(s, row.a, t0)
			if code != w.code {
				t.Errorf("%s on %s: code %q, want %q", row.name, col, code, w.code)
				continue
			}
			if code != 0 {
				continue
			}
			n = n.Effective(t0)
			if n.Phase != w.phase || n.ID != w.id {
				t.Errorf("%s on %s: got %v(%s), want %v(%s)", row.name, col, n.Phase, n.ID, w.phase, w.id)
			}
			if (row.a.Kind == Acquire || row.a.Kind == Renew || row.a.Kind == Change) && res.LeaseID != w.id {
				t.Errorf("%s on %s: result id %q, want %q", row.name, col, res.LeaseID, w.id)
			}
		}
	}
}

func TestAcquireDurations(t *testing.T) {
	s, _, code := Apply(State{}, Action{Kind: Acquire, NewID: N, Duration: 15}, t0)
	if code != 0 || !s.Expiry.Equal(t0.Add(15*time.Second)) || s.DurationName(t0) != "fixed" {
		t.Fatalf("fixed acquire: %+v %s", s, code)
	}
	// Re-acquire with the same id applies the new duration.
	s, _, code = Apply(s, Action{Kind: Acquire, ProposedID: N, Duration: Infinite}, t0.Add(5*time.Second))
	if code != 0 || s.Duration != Infinite || s.DurationName(t0) != "infinite" {
		t.Fatalf("re-acquire: %+v %s", s, code)
	}
	// Expiry is lazy.
	f, _, _ := Apply(State{}, Action{Kind: Acquire, NewID: N, Duration: 15}, t0)
	if f.StateName(t0.Add(14*time.Second)) != "leased" || f.Status(t0.Add(14*time.Second)) != "locked" {
		t.Fatal("expired early")
	}
	if f.StateName(t0.Add(15*time.Second)) != "expired" || f.Status(t0.Add(15*time.Second)) != "unlocked" ||
		f.DurationName(t0.Add(15*time.Second)) != "" {
		t.Fatal("did not expire")
	}
}

func TestRenew(t *testing.T) {
	s := State{Phase: Leased, ID: A, Duration: 20, Expiry: t0.Add(5 * time.Second)}
	n, _, code := Apply(s, Action{Kind: Renew, LeaseID: A}, t0)
	if code != 0 || !n.Expiry.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("renew: %+v %s", n, code)
	}
	// Expired and renewed: the original duration returns.
	n, _, code = Apply(s, Action{Kind: Renew, LeaseID: A}, t0.Add(time.Minute))
	if code != 0 || n.Phase != Leased || !n.Expiry.Equal(t0.Add(80*time.Second)) {
		t.Fatalf("renew expired: %+v %s", n, code)
	}
	inf := State{Phase: Leased, ID: A, Duration: Infinite}
	n, _, code = Apply(inf, Action{Kind: Renew, LeaseID: A}, t0)
	if code != 0 || n != inf {
		t.Fatalf("renew infinite: %+v %s", n, code)
	}
	// Case-insensitive ids.
	if _, _, code = Apply(inf, Action{Kind: Renew, LeaseID: "AAAAAAAA-0000-0000-0000-000000000001"}, t0); code != 0 {
		t.Fatalf("upper-case id: %s", code)
	}
}

func TestBreakTimes(t *testing.T) {
	inf := State{Phase: Leased, ID: A, Duration: Infinite}
	fixed := State{Phase: Leased, ID: A, Duration: 60, Expiry: t0.Add(40 * time.Second)}
	cases := []struct {
		name   string
		s      State
		period *int
		phase  Phase
		secs   int
	}{
		{"infinite no period breaks now", inf, nil, Broken, 0},
		{"infinite period 10", inf, ip(10), Breaking, 10},
		{"fixed no period waits for expiry", fixed, nil, Breaking, 40},
		{"fixed period shorter", fixed, ip(10), Breaking, 10},
		{"fixed period longer than remaining", fixed, ip(60), Breaking, 40},
		{"fixed period 0", fixed, ip(0), Broken, 0},
	}
	for _, tc := range cases {
		n, res, code := Apply(tc.s, Action{Kind: Break, BreakPeriod: tc.period}, t0)
		if code != 0 || n.Phase != tc.phase || res.LeaseTime != tc.secs {
			t.Errorf("%s: %v lease-time %d code %q; want %v %d", tc.name, n.Phase, res.LeaseTime, code, tc.phase, tc.secs)
		}
	}
	// Breaking: a shorter period moves the end earlier, a longer one does not.
	br := State{Phase: Breaking, ID: A, BreakTime: t0.Add(30 * time.Second)}
	n, res, _ := Apply(br, Action{Kind: Break, BreakPeriod: ip(5)}, t0)
	if !n.BreakTime.Equal(t0.Add(5*time.Second)) || res.LeaseTime != 5 {
		t.Errorf("shorter: %+v %d", n, res.LeaseTime)
	}
	n, res, _ = Apply(br, Action{Kind: Break, BreakPeriod: ip(50)}, t0)
	if !n.BreakTime.Equal(t0.Add(30*time.Second)) || res.LeaseTime != 30 {
		t.Errorf("longer: %+v %d", n, res.LeaseTime)
	}
	n, res, _ = Apply(br, Action{Kind: Break}, t0)
	if n != br || res.LeaseTime != 30 {
		t.Errorf("no period: %+v %d", n, res.LeaseTime)
	}
	// The break period ends lazily.
	if br.StateName(t0.Add(30*time.Second)) != "broken" || br.Status(t0.Add(29*time.Second)) != "locked" {
		t.Error("breaking did not end")
	}
}

func TestValidation(t *testing.T) {
	for d, ok := range map[int]bool{-1: true, 15: true, 60: true, 14: false, 61: false, 0: false, -2: false} {
		if ValidDuration(d) != ok {
			t.Errorf("ValidDuration(%d)", d)
		}
	}
	for p, ok := range map[int]bool{0: true, 60: true, -1: false, 61: false} {
		if ValidBreakPeriod(p) != ok {
			t.Errorf("ValidBreakPeriod(%d)", p)
		}
	}
	for s, k := range map[string]ActionKind{"acquire": Acquire, "RENEW": Renew, "change": Change, "release": Release, "break": Break} {
		if got, ok := ParseAction(s); !ok || got != k {
			t.Errorf("ParseAction(%q)", s)
		}
	}
	if _, ok := ParseAction("steal"); ok {
		t.Error("ParseAction(steal)")
	}
}

func TestEnforce(t *testing.T) {
	type cell struct {
		col, id string
		write   bool
		code    azerr.Code
	}
	const mm, np = azerr.LeaseIdMismatchWithBlobOperation, azerr.LeaseNotPresentWithBlobOperation
	cells := []cell{
		{"Available", "", true, 0}, {"Available", A, true, np}, {"Available", B, true, np},
		{"Available", "", false, 0}, {"Available", A, false, np}, {"Available", B, false, np},
		{"Leased", "", true, azerr.LeaseIdMissing}, {"Leased", A, true, 0}, {"Leased", B, true, mm},
		{"Leased", "", false, 0}, {"Leased", A, false, 0}, {"Leased", B, false, mm},
		{"Breaking", "", true, azerr.LeaseIdMissing}, {"Breaking", A, true, 0}, {"Breaking", B, true, mm},
		{"Breaking", "", false, 0}, {"Breaking", A, false, 0}, {"Breaking", B, false, mm},
		{"Broken", "", true, 0}, {"Broken", A, true, np}, {"Broken", B, true, np},
		{"Broken", "", false, 0}, {"Broken", A, false, np}, {"Broken", B, false, np},
		{"Expired", "", true, 0}, {"Expired", A, true, np}, {"Expired", B, true, np},
		{"Expired", "", false, 0}, {"Expired", A, false, np}, {"Expired", B, false, np},
	}
	for _, c := range cells {
		s := states()[c.col]
		n, code := Enforce(s, c.id, c.write, t0, BlobTarget)
		if code != c.code {
			t.Errorf("%s id=%q write=%v: %q, want %q", c.col, c.id, c.write, code, c.code)
			continue
		}
		// A write without an id through a broken or expired lease clears it.
		wantCleared := c.code == 0 && c.write && c.id == "" && (c.col == "Broken" || c.col == "Expired")
		if wantCleared != (n == State{} && s != State{}) {
			t.Errorf("%s id=%q write=%v: state %+v", c.col, c.id, c.write, n)
		}
	}
	// After such a write, renewing the old id fails.
	n, _ := Enforce(states()["Expired"], "", true, t0, BlobTarget)
	if _, _, code := Apply(n, Action{Kind: Renew, LeaseID: A}, t0); code != azerr.LeaseIdMismatchWithLeaseOperation {
		t.Errorf("renew after write: %q", code)
	}
	// Container and file codes.
	if _, code := Enforce(states()["Leased"], B, true, t0, ContainerTarget); code != azerr.LeaseIdMismatchWithContainerOperation {
		t.Error(code)
	}
	if _, code := Enforce(State{}, B, true, t0, ContainerTarget); code != azerr.LeaseNotPresentWithContainerOperation {
		t.Error(code)
	}
	if _, code := Enforce(State{}, B, true, t0, FileTarget); code != azerr.LeaseNotPresentWithFileOperation {
		t.Error(code)
	}
	if _, code := Enforce(states()["Leased"], B, true, t0, ShareTarget); code != azerr.LeaseIdMismatchWithShareOperation {
		t.Error(code)
	}
}
