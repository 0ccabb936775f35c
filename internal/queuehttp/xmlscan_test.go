package queuehttp

import (
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/queue"
)

var scanMessageSeeds = []string{
	`<QueueMessage><MessageText>aGVsbG8=</MessageText></QueueMessage>`,
	"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<QueueMessage>\n  <MessageText>plain text > here\twith\ttabs\nand lines</MessageText>\n</QueueMessage>\n",
	`<?xml version="1.0"?><QueueMessage><MessageText></MessageText></QueueMessage>`,
	`<QueueMessage><MessageText> spaced </MessageText></QueueMessage>`,
	`<QueueMessage><MessageText>a&amp;b</MessageText></QueueMessage>`,
	`<QueueMessage><MessageText>a]]>b</MessageText></QueueMessage>`,
	`<QueueMessage><MessageText>a<b/></MessageText></QueueMessage>`,
	`<QueueMessage>x<MessageText>a</MessageText></QueueMessage>`,
	`<QueueMessage><MessageText>a</MessageText></QueueMessage>x`,
	`<QueueMessage><MessageText>a</MessageText><Other/></QueueMessage>`,
	`<QueueMessage><MessageText>a</MessageText>`,
	"<QueueMessage><MessageText>a\rb</MessageText></QueueMessage>",
	"<QueueMessage><MessageText>\u00e9</MessageText></QueueMessage>",
	`<?xml version="1.0" encoding="ISO-8859-1"?><QueueMessage><MessageText>a</MessageText></QueueMessage>`,
}

func checkScanMessage(t *testing.T, body []byte) {
	fast, ok := scanMessage(body)
	if !ok {
		return
	}
	slow, sok, err := decodeMessage(body)
	if !sok || err != nil {
		t.Fatalf("scanMessage accepted %q, encoding/xml refuses it (%v)", body, err)
	}
	if fast != slow {
		t.Fatalf("%q: scanMessage %+v, encoding/xml %+v", body, fast, slow)
	}
}

func TestScanMessageAgreesWithEncodingXML(t *testing.T) {
	accepted := 0
	for _, s := range scanMessageSeeds {
		checkScanMessage(t, []byte(s))
		if _, ok := scanMessage([]byte(s)); ok {
			accepted++
		}
	}
	if accepted < 4 {
		t.Errorf("scanMessage accepted %d seeds, want at least 4", accepted)
	}
}

func FuzzScanMessage(f *testing.F) {
	for _, s := range scanMessageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkScanMessage(t, body) })
}

func TestEscMatchesEscapeXMLText(t *testing.T) {
	for _, s := range []string{"", "plain text", "aGVsbG8=+/", "Sun, 22 Nov 2026 02:18:24 GMT", "a<b", "a>b", "a&b", `q"uote`, "it's", "cr\rlf\n", "tab\t", "\x00", "\x7f", "é", "\uFFFE", "]]>"} {
		if got, want := esc(s), azerr.EscapeXMLText(s); got != want {
			t.Errorf("esc(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestAppendTimeMatchesFmtTime(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, d := range []time.Duration{0, 999 * time.Millisecond, time.Second, 256 * time.Second, -256 * time.Second, 0} {
		for _, loc := range []*time.Location{time.UTC, time.FixedZone("x", -7200)} {
			tm := base.Add(d).In(loc)
			if got, want := string(appendTime([]byte("x"), tm)), "x"+fmtTime(tm); got != want {
				t.Fatalf("appendTime(%v) = %q, want %q", tm, got, want)
			}
		}
	}
	if got, want := string(appendTime(nil, queue.NeverExpires())), fmtTime(queue.NeverExpires()); got != want {
		t.Fatalf("never expires: %q, want %q", got, want)
	}
}
