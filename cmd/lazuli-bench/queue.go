package main

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// messageBody is the Put Message body: about 100 bytes of base64 text.
const messageBody = `<QueueMessage><MessageText>` +
	`bGF6dWxpIGJlbmNobWFyayBtZXNzYWdlIC0gYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXowMTIzNDU2Nzg5IGFiY2RlZmdoaWprbG1ub3A=` +
	`</MessageText></QueueMessage>`

// errQueueEmpty is a receive that found no visible message.
var errQueueEmpty = errors.New("Get Messages: the queue is empty (raise --preload)")

// createQueue creates a queue and returns its cleanup.
func createQueue(e *env, name string) (func(), error) {
	_, err := e.t.do(&call{op: "Create Queue", method: "PUT", base: e.t.acct.Queue, path: "/" + name, want: 201}, nil)
	if err != nil {
		e.noteSetupFailure(err)
		return nil, err
	}
	return func() {
		_, _ = e.t.do(&call{op: "Delete Queue", method: "DELETE", base: e.t.acct.Queue, path: "/" + name, want: 204}, nil)
	}, nil
}

func putMessageCall(e *env, queue string) *call {
	return &call{op: "Put Message", method: "POST", base: e.t.acct.Queue, path: "/" + queue + "/messages",
		body: []byte(messageBody), want: 201}
}

func queuePut(e *env) (*prepared, error) {
	name := e.uniqueName("put")
	cleanup, err := createQueue(e, name)
	if err != nil {
		return nil, err
	}
	put := putMessageCall(e, name)
	return &prepared{cleanup: cleanup, client: func(int) (op, error) {
		return func() error {
			_, err := e.t.do(put, nil)
			return err
		}, nil
	}}, nil
}

func queueReceiveDelete(e *env) (*prepared, error) {
	name := e.uniqueName("recv")
	cleanup, err := createQueue(e, name)
	if err != nil {
		return nil, err
	}
	p := &prepared{cleanup: cleanup}
	put := putMessageCall(e, name)
	if err := e.parallel(e.preload, func(int) error {
		_, err := e.t.do(put, nil)
		return err
	}); err != nil {
		return p, err
	}
	h, err := e.t.do(&call{op: "Get Queue Metadata", method: "GET", base: e.t.acct.Queue, path: "/" + name,
		query: "comp=metadata", want: 200}, nil)
	if err == nil {
		if n := h.Get("x-ms-approximate-messages-count"); n != strconv.Itoa(e.preload) {
			err = fmt.Errorf("Get Queue Metadata: x-ms-approximate-messages-count %q after putting %d messages", n, e.preload)
		}
	}
	if err != nil {
		e.noteSetupFailure(err)
		return p, err
	}
	receive := &call{op: "Get Messages", method: "GET", base: e.t.acct.Queue, path: "/" + name + "/messages",
		query: "numofmessages=1&visibilitytimeout=30", want: 200}
	p.client = func(int) (op, error) {
		var buf bytes.Buffer
		return func() error {
			if _, err := e.t.do(receive, &buf); err != nil {
				return err
			}
			id := xmlText(buf.Bytes(), "MessageId")
			receipt := xmlText(buf.Bytes(), "PopReceipt")
			if id == "" {
				return errQueueEmpty
			}
			if receipt == "" {
				return errors.New("Get Messages: message without a PopReceipt")
			}
			_, err := e.t.do(&call{op: "Delete Message", method: "DELETE", base: e.t.acct.Queue,
				path: "/" + name + "/messages/" + id, query: "popreceipt=" + escapeQuery(receipt), want: 204}, nil)
			return err
		}, nil
	}
	return p, nil
}

// xmlText returns the unescaped text of the first <tag> element of b. The
// answers it reads are flat and small, so a search beats a decoder.
func xmlText(b []byte, tag string) string {
	s := between(b, "<"+tag+">", "</"+tag+">")
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&").Replace(s)
}
