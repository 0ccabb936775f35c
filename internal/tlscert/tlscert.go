// Package tlscert loads the server certificate given on the command line:
// a PEM certificate with its PEM key, or a PFX (PKCS#12) file with its
// password, as the reference emulator accepts them. The server uses it
// for --cert, --key and --pwd; it is a leaf.
package tlscert

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"

	"software.sslmate.com/src/go-pkcs12"
)

// Load returns the certificate of certFile. With keyFile set both are PEM;
// without it certFile is a PFX file decrypted with password (which may be
// empty), or a PEM file that holds the key too.
func Load(certFile, keyFile, password string) (tls.Certificate, error) {
	if keyFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return c, fmt.Errorf("load certificate %s and key %s: %w", certFile, keyFile, err)
		}
		return c, nil
	}
	data, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load certificate: %w", err)
	}
	if bytes.Contains(data, []byte("-----BEGIN")) {
		c, err := tls.X509KeyPair(data, data)
		if err != nil {
			return c, fmt.Errorf("load certificate %s: a PEM certificate needs its key (--key): %w", certFile, err)
		}
		return c, nil
	}
	return loadPFX(certFile, data, password)
}

func loadPFX(name string, data []byte, password string) (tls.Certificate, error) {
	key, leaf, chain, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		if err == pkcs12.ErrIncorrectPassword {
			return tls.Certificate{}, fmt.Errorf("load certificate %s: the PFX password (--pwd) is wrong", name)
		}
		return tls.Certificate{}, fmt.Errorf("load certificate %s as PFX: %w", name, err)
	}
	c := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, ca := range chain {
		c.Certificate = append(c.Certificate, ca.Raw)
	}
	// Make sure the key belongs to the certificate, as LoadX509KeyPair does.
	if _, err := tls.X509KeyPair(pemOf("CERTIFICATE", leaf.Raw), pemKey(key)); err != nil {
		return tls.Certificate{}, fmt.Errorf("load certificate %s: %w", name, err)
	}
	return c, nil
}

func pemOf(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func pemKey(key any) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil
	}
	return pemOf("PRIVATE KEY", der)
}
