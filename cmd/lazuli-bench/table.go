package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Partition query workload shape: a partition of queryPartition entities,
// of which the query returns queryMatches.
const (
	queryPartition = 1000
	queryMatches   = 500
)

// entityProps are the properties of every benchmark entity after the keys:
// a few typed values and about 100 bytes of text, a typical small entity.
const entityProps = `"Name":"lazuli benchmark entity","Count":12345,"Ratio":0.5,"Active":true,` +
	`"Payload":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"}`

// entityJSON returns the JSON body of an entity with the given keys.
func entityJSON(pk, rk string) []byte {
	return []byte(`{"PartitionKey":"` + pk + `","RowKey":"` + rk + `",` + entityProps)
}

// entityPath returns the path of one entity: /table(PartitionKey='pk',RowKey='rk').
func entityPath(table, pk, rk string) string {
	return "/" + table + "(PartitionKey='" + pk + "',RowKey='" + rk + "')"
}

// createTable creates a table and returns its cleanup. Any success will
// do: a server may answer 201 with the table's JSON even though the request
// prefers no content, which Azure allows.
func createTable(e *env, name string) (func(), error) {
	_, err := e.t.do(&call{op: "Create Table", method: "POST", base: e.t.acct.Table, path: "/Tables",
		body: []byte(`{"TableName":"` + name + `"}`), table: true, want: 204, any2xx: true,
		hdr: []string{"Prefer", "return-no-content"}}, nil)
	if err != nil {
		e.noteSetupFailure(err)
		return nil, err
	}
	return func() {
		_, _ = e.t.do(&call{op: "Delete Table", method: "DELETE", base: e.t.acct.Table,
			path: "/Tables('" + name + "')", table: true, want: 204}, nil)
	}, nil
}

// insertEntity is Insert Entity without the echo; it returns the ETag. A
// server that answers 201 with the entity anyway is measured with that
// body read and dropped.
func insertEntity(t *target, table string, body []byte) (string, error) {
	h, err := t.do(&call{op: "Insert Entity", method: "POST", base: t.acct.Table, path: "/" + table,
		body: body, table: true, want: 204, any2xx: true, hdr: []string{"Prefer", "return-no-content"}}, nil)
	if err != nil {
		return "", err
	}
	return h.Get("ETag"), nil
}

func tableInsert(e *env) (*prepared, error) {
	name := e.tableName("ins")
	cleanup, err := createTable(e, name)
	if err != nil {
		return nil, err
	}
	return &prepared{cleanup: cleanup, client: func(id int) (op, error) {
		pk := "w" + strconv.Itoa(id)
		head := []byte(`{"PartitionKey":"` + pk + `","RowKey":"`)
		tail := []byte(`",` + entityProps)
		n := 0
		return func() error {
			n++
			body := make([]byte, 0, len(head)+len(tail)+12)
			body = append(body, head...)
			body = strconv.AppendInt(body, int64(n), 10)
			body = append(body, tail...)
			_, err := insertEntity(e.t, name, body)
			return err
		}, nil
	}}, nil
}

func tableReplaceIfMatch(e *env) (*prepared, error) {
	name := e.tableName("rep")
	cleanup, err := createTable(e, name)
	if err != nil {
		return nil, err
	}
	return &prepared{cleanup: cleanup, client: func(id int) (op, error) {
		pk, rk := "w"+strconv.Itoa(id), "r"
		body := entityJSON(pk, rk)
		path := entityPath(name, pk, rk)
		etag, err := insertEntity(e.t, name, body)
		if err != nil {
			return nil, err
		}
		if etag == "" {
			// Not every server sends the ETag with 204; read it back.
			h, err := e.t.do(&call{op: "Query Entity", method: "GET", base: e.t.acct.Table, path: path,
				table: true, want: 200}, nil)
			if err != nil {
				return nil, err
			}
			if etag = h.Get("ETag"); etag == "" {
				return nil, fmt.Errorf("no ETag from Insert Entity and Query Entity for %s", path)
			}
		}
		return func() error {
			h, err := e.t.do(&call{op: "Update Entity (If-Match)", method: "PUT", base: e.t.acct.Table,
				path: path, body: body, table: true, want: 204, hdr: []string{"If-Match", etag}}, nil)
			if err != nil {
				return err
			}
			next := h.Get("ETag")
			if next == "" {
				return errors.New("no ETag from Update Entity")
			}
			etag = next
			return nil
		}, nil
	}}, nil
}

func tableQueryPartition(e *env) (*prepared, error) {
	name := e.tableName("qry")
	cleanup, err := createTable(e, name)
	if err != nil {
		return nil, err
	}
	p := &prepared{cleanup: cleanup}
	err = e.parallel(queryPartition, func(i int) error {
		_, err := insertEntity(e.t, name, entityJSON("p", fmt.Sprintf("r%04d", i)))
		return err
	})
	if err != nil {
		return p, err
	}
	filter := fmt.Sprintf("PartitionKey eq 'p' and RowKey lt 'r%04d'", queryMatches)
	query := &call{op: "Query Entities", method: "GET", base: e.t.acct.Table, path: "/" + name + "()",
		query: "$filter=" + escapeQuery(filter), table: true, want: 200}
	// Check once, outside the measured loop, that the query returns the
	// expected entities in one page.
	var buf bytes.Buffer
	h, err := e.t.do(query, &buf)
	if err == nil {
		err = checkQueryPage(h.Get("x-ms-continuation-NextPartitionKey"), buf.Bytes())
	}
	if err != nil {
		e.noteSetupFailure(err)
		return p, err
	}
	p.client = func(int) (op, error) {
		return func() error {
			_, err := e.t.do(query, nil)
			return err
		}, nil
	}
	return p, nil
}

// checkQueryPage checks that a query answer holds exactly queryMatches
// entities and no continuation.
func checkQueryPage(next string, body []byte) error {
	var page struct {
		Value []json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return fmt.Errorf("decoding the answer of Query Entities: %v", err)
	}
	if len(page.Value) != queryMatches || next != "" {
		return fmt.Errorf("got %d entities from Query Entities (continuation %q), want %d in one page",
			len(page.Value), next, queryMatches)
	}
	return nil
}
