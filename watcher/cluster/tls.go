package cluster

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Store types, as Kafka's ssl.truststore.type and ssl.keystore.type name
// them.
const (
	StoreJKS    = "JKS"
	StorePKCS12 = "PKCS12"
	StorePEM    = "PEM"
)

// jksMagic starts every JKS file (sun.security.provider.JavaKeyStore).
var jksMagic = []byte{0xfe, 0xed, 0xfe, 0xed}

// tlsFromProps builds the TLS configuration from Kafka's ssl.* client keys.
// Without a truststore the system roots are used, as the JVM uses its
// cacerts. ssl.endpoint.identification.algorithm defaults to "https"
// (hostname verification); an empty value keeps chain verification but
// skips the hostname check, as the Java client does.
func tlsFromProps(alias string, props map[string]string) (*tls.Config, error) {
	get := func(k string) string { return strings.TrimSpace(props[k]) }
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if p := get("ssl.enabled.protocols"); p != "" {
		only13 := true
		for _, v := range strings.Split(p, ",") {
			if strings.TrimSpace(v) != "TLSv1.3" {
				only13 = false
			}
		}
		if only13 {
			cfg.MinVersion = tls.VersionTLS13
		}
	}

	switch {
	case get("ssl.truststore.certificates") != "":
		if t := strings.ToUpper(get("ssl.truststore.type")); t != "" && t != StorePEM {
			return nil, keyErr(alias, "ssl.truststore.certificates", "needs ssl.truststore.type PEM, not %s", t)
		}
		certs, err := pemCerts([]byte(get("ssl.truststore.certificates")))
		if err != nil {
			return nil, keyWrap(alias, "ssl.truststore.certificates", "reading inline PEM", err)
		}
		cfg.RootCAs = poolOf(certs)
	case get("ssl.truststore.location") != "":
		path := get("ssl.truststore.location")
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, keyWrap(alias, "ssl.truststore.location", "reading truststore", err)
		}
		typ := storeType(get("ssl.truststore.type"), data)
		certs, err := trustCerts(typ, data, get("ssl.truststore.password"))
		if err != nil {
			if get("ssl.truststore.type") == "" && notPKCS12(err) {
				return nil, keyErr(alias, "ssl.truststore.location", "%s: %s", path, unknownStore("ssl.truststore.type"))
			}
			return nil, keyWrap(alias, "ssl.truststore.location", fmt.Sprintf("loading %s truststore %s", typ, path), err)
		}
		cfg.RootCAs = poolOf(certs)
	}

	switch {
	case get("ssl.keystore.key") != "" || get("ssl.keystore.certificate.chain") != "":
		if get("ssl.keystore.key") == "" || get("ssl.keystore.certificate.chain") == "" {
			return nil, keyErr(alias, "ssl.keystore.key", "needs both ssl.keystore.key and ssl.keystore.certificate.chain")
		}
		cert, err := pemKeyPair([]byte(get("ssl.keystore.certificate.chain")), []byte(get("ssl.keystore.key")))
		if err != nil {
			return nil, keyWrap(alias, "ssl.keystore.key", "reading inline PEM key and certificate chain", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case get("ssl.keystore.location") != "":
		path := get("ssl.keystore.location")
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, keyWrap(alias, "ssl.keystore.location", "reading keystore", err)
		}
		typ := storeType(get("ssl.keystore.type"), data)
		storePass := get("ssl.keystore.password")
		keyPass := get("ssl.key.password")
		if keyPass == "" {
			keyPass = storePass
		}
		cert, err := keyPair(typ, data, storePass, keyPass)
		if err != nil {
			if get("ssl.keystore.type") == "" && notPKCS12(err) {
				return nil, keyErr(alias, "ssl.keystore.location", "%s: %s", path, unknownStore("ssl.keystore.type"))
			}
			return nil, keyWrap(alias, "ssl.keystore.location", fmt.Sprintf("loading %s keystore %s", typ, path), err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}

	switch alg := get("ssl.endpoint.identification.algorithm"); strings.ToLower(alg) {
	case "https":
	case "":
		// Only an explicit empty value turns the check off; Kafka's
		// default is "https".
		if _, set := props["ssl.endpoint.identification.algorithm"]; set {
			skipHostnameCheck(cfg)
		}
	default:
		return nil, keyErr(alias, "ssl.endpoint.identification.algorithm", "%q is not \"https\" or empty", alg)
	}
	return cfg, nil
}

// skipHostnameCheck keeps full chain verification but drops the hostname
// check, which is what an empty ssl.endpoint.identification.algorithm means.
func skipHostnameCheck(cfg *tls.Config) {
	roots := cfg.RootCAs
	cfg.InsecureSkipVerify = true // replaced by VerifyConnection below
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("broker sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		return err
	}
}

// storeType returns the declared store type, or, when none is declared,
// the type the content looks like. Kafka's default is JKS, and JDK 9+
// reads PKCS12 files under that name, so sniffing gives the same result for
// files the JVM accepts.
func storeType(declared string, data []byte) string {
	if declared != "" {
		return strings.ToUpper(declared)
	}
	switch {
	case bytes.Contains(data, []byte("-----BEGIN")):
		return StorePEM
	case bytes.HasPrefix(data, jksMagic):
		return StoreJKS
	default:
		return StorePKCS12
	}
}

// p12NotDER starts go-pkcs12's error for data that is not a PKCS12 (DER)
// structure at all, as opposed to a wrong password or an unsupported
// algorithm. The library does not wrap the asn1 error, so the message is
// all there is to go by.
const p12NotDER = "pkcs12: error reading P12 data"

// notPKCS12 reports whether err says the data is not PKCS12 at all.
func notPKCS12(err error) bool { return strings.Contains(err.Error(), p12NotDER) }

// unknownStore explains a store file whose type was not set and could not
// be recognised: the types tried and why each was ruled out, without the
// PKCS12 parser's ASN.1 dump.
func unknownStore(typeKey string) string {
	return fmt.Sprintf("%s is not set and the file is none of the store types this client reads: "+
		"not PEM (no \"-----BEGIN\" line), not JKS (no FEEDFEED magic number), not PKCS12 (not a DER structure); "+
		"set %s if it is one of JKS, PKCS12, PEM", typeKey, typeKey)
}

func poolOf(certs []*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

func pemCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing certificate: %w", err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block found")
	}
	return certs, nil
}

// trustCerts reads the CA certificates of a truststore. PKCS12 is read as a
// Java trust store first (certificates with the Java trust attribute, as
// keytool writes them), then, best effort, as a key store's chain (as
// OpenSSL writes them). Errors never contain the password.
func trustCerts(typ string, data []byte, password string) ([]*x509.Certificate, error) {
	switch typ {
	case StorePEM:
		return pemCerts(data)
	case StorePKCS12:
		certs, err := pkcs12.DecodeTrustStore(data, password)
		if err == nil && len(certs) > 0 {
			return certs, nil
		}
		if err == nil {
			err = errors.New("no trusted certificates")
		}
		_, leaf, cas, err2 := pkcs12.DecodeChain(data, password)
		switch {
		case err2 == nil:
		case err.Error() == err2.Error():
			// The same failure both ways (not PKCS12, wrong password):
			// say it once.
			return nil, fmt.Errorf("neither a trust store nor a key store: %w", err2)
		default:
			return nil, fmt.Errorf("not a trust store (%v) nor a key store (%w)", err, err2)
		}
		return append([]*x509.Certificate{leaf}, cas...), nil
	case StoreJKS:
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
			return nil, fmt.Errorf("reading JKS: %w", err)
		}
		var certs []*x509.Certificate
		for _, a := range ks.Aliases() {
			var raw []keystore.Certificate
			switch {
			case ks.IsTrustedCertificateEntry(a):
				e, err := ks.GetTrustedCertificateEntry(a)
				if err != nil {
					return nil, fmt.Errorf("entry %q: %w", a, err)
				}
				raw = []keystore.Certificate{e.Certificate}
			case ks.IsPrivateKeyEntry(a):
				chain, err := ks.GetPrivateKeyEntryCertificateChain(a)
				if err != nil {
					return nil, fmt.Errorf("entry %q: %w", a, err)
				}
				raw = chain
			}
			for _, r := range raw {
				c, err := x509.ParseCertificate(r.Content)
				if err != nil {
					return nil, fmt.Errorf("entry %q: parsing certificate: %w", a, err)
				}
				certs = append(certs, c)
			}
		}
		if len(certs) == 0 {
			return nil, errors.New("no certificates in JKS store")
		}
		return certs, nil
	default:
		return nil, fmt.Errorf("unsupported store type %s (want JKS, PKCS12 or PEM)", typ)
	}
}

// keyPair reads the client certificate and key for mutual TLS.
func keyPair(typ string, data []byte, storePass, keyPass string) (tls.Certificate, error) {
	switch typ {
	case StorePEM:
		return pemKeyPair(data, data)
	case StorePKCS12:
		key, leaf, cas, err := pkcs12.DecodeChain(data, storePass)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("reading PKCS12: %w", err)
		}
		c := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
		for _, ca := range cas {
			c.Certificate = append(c.Certificate, ca.Raw)
		}
		return c, nil
	case StoreJKS:
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(storePass)); err != nil {
			return tls.Certificate{}, fmt.Errorf("reading JKS: %w", err)
		}
		for _, a := range ks.Aliases() {
			if !ks.IsPrivateKeyEntry(a) {
				continue
			}
			e, err := ks.GetPrivateKeyEntry(a, []byte(keyPass))
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("entry %q: %w", a, err)
			}
			key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("entry %q: parsing private key: %w", a, err)
			}
			c := tls.Certificate{PrivateKey: key}
			for _, r := range e.CertificateChain {
				c.Certificate = append(c.Certificate, r.Content)
			}
			if len(c.Certificate) == 0 {
				return tls.Certificate{}, fmt.Errorf("entry %q has no certificate chain", a)
			}
			if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
				return tls.Certificate{}, fmt.Errorf("entry %q: parsing certificate: %w", a, err)
			}
			return c, nil
		}
		return tls.Certificate{}, errors.New("no private key entry in JKS store")
	default:
		return tls.Certificate{}, fmt.Errorf("unsupported store type %s (want JKS, PKCS12 or PEM)", typ)
	}
}

func pemKeyPair(certPEM, keyPEM []byte) (tls.Certificate, error) {
	if bytes.Contains(keyPEM, []byte("ENCRYPTED PRIVATE KEY")) || bytes.Contains(keyPEM, []byte("Proc-Type: 4,ENCRYPTED")) {
		return tls.Certificate{}, errors.New("encrypted PEM private keys are not supported; use an unencrypted PKCS#8 key or a PKCS12 keystore")
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pairing certificate and key: %w", err)
	}
	return c, nil
}
