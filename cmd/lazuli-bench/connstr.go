package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The published development account, used by UseDevelopmentStorage=true.
const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// account is what a connection string says about one storage account: the
// Shared Key credentials and the base URL of each service. For path-style
// endpoints the base URL path ends with the account name.
type account struct {
	Name  string
	Key   []byte
	Blob  *url.URL
	Queue *url.URL
	Table *url.URL
	// Spread lists, per host of an endpoint given as several
	// comma-separated URLs (instances behind no load balancer), the
	// dial addresses its connections are spread over in turn.
	Spread map[string][]string
}

// isConnStringKey reports whether k (lowercased) is a connection-string
// key; a --target value whose first key is one is a bare connection string
// rather than name=connection string.
func isConnStringKey(k string) bool {
	switch k {
	case "usedevelopmentstorage", "developmentstorageproxyuri",
		"defaultendpointsprotocol", "accountname", "accountkey",
		"endpointsuffix", "sharedaccesssignature",
		"blobendpoint", "queueendpoint", "tableendpoint", "fileendpoint",
		"blobsecondaryendpoint", "queuesecondaryendpoint",
		"tablesecondaryendpoint", "filesecondaryendpoint":
		return true
	}
	return false
}

// parseConnectionString reads an Azure Storage connection string: either
// UseDevelopmentStorage=true (optionally with DevelopmentStorageProxyUri)
// or the explicit form with AccountName, AccountKey and either per-service
// endpoints or DefaultEndpointsProtocol plus EndpointSuffix.
func parseConnectionString(s string) (*account, error) {
	kv := map[string]string{}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("connection string: %q is not key=value", part)
		}
		kv[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if strings.EqualFold(kv["usedevelopmentstorage"], "true") {
		host := "http://127.0.0.1"
		if p := kv["developmentstorageproxyuri"]; p != "" {
			u, err := url.Parse(p)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("connection string: bad DevelopmentStorageProxyUri %q", p)
			}
			host = u.Scheme + "://" + u.Hostname()
		}
		kv["accountname"] = devAccount
		kv["accountkey"] = devKey
		for svc, port := range map[string]string{"blob": "10000", "queue": "10001", "table": "10002"} {
			kv[svc+"endpoint"] = host + ":" + port + "/" + devAccount
		}
	}
	if _, ok := kv["sharedaccesssignature"]; ok && kv["accountkey"] == "" {
		return nil, errors.New("connection string: SAS-only connection strings are not supported; give AccountName and AccountKey")
	}
	a := &account{Name: kv["accountname"]}
	if a.Name == "" {
		return nil, errors.New("connection string: AccountName missing")
	}
	if kv["accountkey"] == "" {
		return nil, errors.New("connection string: AccountKey missing")
	}
	key, err := base64.StdEncoding.DecodeString(kv["accountkey"])
	if err != nil || len(key) == 0 {
		return nil, errors.New("connection string: AccountKey is not base64")
	}
	a.Key = key
	proto := kv["defaultendpointsprotocol"]
	if proto == "" {
		proto = "https"
	}
	suffix := kv["endpointsuffix"]
	if suffix == "" {
		suffix = "core.windows.net"
	}
	for _, svc := range []struct {
		name string
		dst  **url.URL
	}{{"blob", &a.Blob}, {"queue", &a.Queue}, {"table", &a.Table}} {
		raw := kv[svc.name+"endpoint"]
		if first, rest, ok := strings.Cut(raw, ","); ok {
			// Several instances: the first names the endpoint (Host
			// header, path); connections go to each in turn.
			raw = first
			addrs := []string{}
			for _, r := range append([]string{first}, strings.Split(rest, ",")...) {
				u, err := url.Parse(strings.TrimSpace(r))
				if err != nil || u.Host == "" || u.Port() == "" {
					return nil, fmt.Errorf("connection string: bad %sEndpoint %q (several URLs need explicit ports)", svc.name, r)
				}
				addrs = append(addrs, u.Host)
			}
			if a.Spread == nil {
				a.Spread = map[string][]string{}
			}
			u, _ := url.Parse(first)
			a.Spread[u.Host] = addrs
		}
		if raw == "" {
			raw = proto + "://" + a.Name + "." + svc.name + "." + suffix
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("connection string: bad %sEndpoint %q", svc.name, raw)
		}
		// Paths are appended to the base, so drop a trailing slash and
		// anything that is not part of the base path.
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = ""
		u.RawQuery, u.Fragment = "", ""
		*svc.dst = u
	}
	return a, nil
}

// parseTarget splits a --target value "name=connection string". A value
// that is a bare connection string gets the name def.
func parseTarget(v, def string) (name, conn string) {
	k, rest, ok := strings.Cut(v, "=")
	if !ok || isConnStringKey(strings.ToLower(strings.TrimSpace(k))) || !strings.Contains(rest, "=") {
		return def, v
	}
	return strings.TrimSpace(k), rest
}
