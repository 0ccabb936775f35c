package main

import (
	"net"
	"strings"
	"testing"
)

// TestSpreadOverInstances: an endpoint given as several URLs names the
// first, and new connections dial each instance in turn.
func TestSpreadOverInstances(t *testing.T) {
	var urls []string
	accepted := make(chan int, 64)
	for i := range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted <- i
				defer c.Close()
			}
		}()
		urls = append(urls, "http://"+ln.Addr().String()+"/devstoreaccount1")
	}
	a, err := parseConnectionString("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + devKey +
		";BlobEndpoint=" + strings.Join(urls, ","))
	if err != nil {
		t.Fatal(err)
	}
	if a.Blob.String() != urls[0] {
		t.Fatalf("endpoint %s, want the first URL %s", a.Blob, urls[0])
	}
	tg := newTarget("t", a, defaultVersion, 4, 5e9)
	defer tg.close()
	count := map[int]int{}
	for range 6 {
		pc, err := tg.blob.dial()
		if err != nil {
			t.Fatal(err)
		}
		defer pc.nc.Close()
		count[<-accepted]++
	}
	for i := range 3 {
		if count[i] != 2 {
			t.Fatalf("connections per instance: %v, want 2 each", count)
		}
	}
	if _, err := parseConnectionString("AccountName=a;AccountKey=" + devKey + ";BlobEndpoint=http://x/a,http://y/a"); err == nil {
		t.Fatal("several URLs without ports accepted")
	}
}
