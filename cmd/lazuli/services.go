package main

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/server"
)

// serviceWords are the words that choose which services run: the
// reference emulator's commands (azurite runs them all, azurite-blob,
// azurite-queue and azurite-table one each) and lazuli's own one-service
// words. Each maps to the service it runs alone ("" for all).
var serviceWords = map[string]string{
	"azurite": "", "azurite-blob": "blob", "azurite-queue": "queue", "azurite-table": "table",
	"blob": "blob", "queue": "queue", "table": "table", "file": "file",
}

// commandLine returns the arguments run takes from the process's argv.
// Started under one of the reference emulator's command names (a link
// named azurite-blob to the binary, as the container image ships), that
// name becomes the first word, so that `azurite-blob --blobPort 0` and
// `lazuli azurite-blob --blobPort 0` mean the same.
func commandLine(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	name := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	if _, ok := serviceWords[name]; ok && strings.HasPrefix(name, "azurite") {
		return append([]string{name}, argv[1:]...)
	}
	return argv[1:]
}

// serviceWord takes a leading service word off args: the service to run
// alone ("" for all) and the remaining arguments.
func serviceWord(args []string) (only string, rest []string) {
	if len(args) > 0 {
		if svc, ok := serviceWords[args[0]]; ok {
			return svc, args[1:]
		}
	}
	return "", args
}

// listeners are the addresses of the five listeners, "" for one that is
// off.
type listeners struct {
	blob, queue, table, file, smb string
}

// listenAddrs turns the host and port flags into listen addresses. Port
// -1 turns a listener off; with a service word, every listener but that
// service's is off (SMB belongs to the File service).
func listenAddrs(o *options, only string) (listeners, error) {
	var l listeners
	for _, x := range []struct {
		name string
		host string
		port int
		svc  string
		dst  *string
	}{
		{"blobPort", *o.blobHost, *o.blobPort, "blob", &l.blob},
		{"queuePort", *o.queueHost, *o.queuePort, "queue", &l.queue},
		{"tablePort", *o.tableHost, *o.tablePort, "table", &l.table},
		{"filePort", *o.fileHost, *o.filePort, "file", &l.file},
		{"smbPort", *o.smbHost, *o.smbPort, "file", &l.smb},
	} {
		if x.port < -1 || x.port > 65535 {
			return l, fmt.Errorf("--%s %d: want a port number, 0 (a free port) or -1 (off)", x.name, x.port)
		}
		if x.port == -1 || (only != "" && only != x.svc) {
			continue
		}
		*x.dst = net.JoinHostPort(x.host, strconv.Itoa(x.port))
	}
	if l == (listeners{}) {
		return l, fmt.Errorf("every listener is off: give at least one service a port other than -1")
	}
	return l, nil
}

// shownAddr is an address as the startup line shows it: "off" for a
// listener that is off.
func shownAddr(addr string) string {
	if addr == "" {
		return "off"
	}
	return addr
}

// printReferenceLines prints, for each of the reference emulator's
// services that is on, the line it prints once that service listens
// ("Azurite Blob service is successfully listening at
// http://0.0.0.0:10000"), on standard output as it does. Testcontainers'
// Azurite modules and scripts written for the reference emulator wait for
// these lines. They are printed with --silent too, as the reference
// emulator's are (--silent turns the access log off, nothing else). The
// File service and SMB, which it does not have, are in lazuli's own line.
func printReferenceLines(w io.Writer, srv *server.Server, https bool) {
	scheme := "http"
	if https {
		scheme = "https"
	}
	for _, s := range []struct {
		name string
		svc  auth.Service
	}{{"Blob", auth.Blob}, {"Queue", auth.Queue}, {"Table", auth.Table}} {
		if addr := srv.Addr(s.svc); addr != "" {
			fmt.Fprintf(w, "Azurite %s service is successfully listening at %s://%s\n", s.name, scheme, addr)
		}
	}
}
