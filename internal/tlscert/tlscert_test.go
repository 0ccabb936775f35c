package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

func TestLoad(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "t"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	pfx, err := pkcs12.Modern.Encode(key, cert, nil, "pw")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	certFile, keyFile := write("c.pem", certPEM), write("k.pem", keyPEM)
	both := write("both.pem", append(append([]byte{}, certPEM...), keyPEM...))
	pfxFile := write("c.pfx", pfx)

	for _, c := range []struct{ cert, key, pwd string }{{certFile, keyFile, ""}, {both, "", ""}, {pfxFile, "", "pw"}} {
		got, err := Load(c.cert, c.key, c.pwd)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if len(got.Certificate) == 0 || string(got.Certificate[0]) != string(der) {
			t.Fatalf("%+v: wrong certificate", c)
		}
	}
	for _, c := range []struct{ cert, key, pwd, want string }{
		{pfxFile, "", "wrong", "password"},
		{certFile, "", "", "needs its key"},
		{filepath.Join(dir, "missing"), "", "", "no such file"},
		{write("junk.pfx", []byte("junk")), "", "", "as PFX"},
	} {
		if _, err := Load(c.cert, c.key, c.pwd); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c, err, c.want)
		}
	}
}
