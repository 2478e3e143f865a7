package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"software.sslmate.com/src/go-pkcs12"
)

// canary is a password that must never appear in any error text.
const canary = "Canary-pw-7f3a91"

func jaas(module, user, pass string) string {
	return fmt.Sprintf(`org.apache.kafka.common.security.%s required username="%s" password="%s";`, module, user, pass)
}

func dialProps(t *testing.T, props map[string]string) (*Client, error) {
	t.Helper()
	cfg, err := FromProps("vast", props)
	if err != nil {
		t.Fatalf("FromProps: %v", err)
	}
	cfg.APITimeout = 5 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := Dial(ctx, cfg, testLogger(t))
	if cl != nil {
		t.Cleanup(cl.Close)
	}
	return cl, err
}

func TestSASL(t *testing.T) {
	for _, tc := range []struct{ mech, module string }{
		{MechanismPlain, "plain.PlainLoginModule"},
		{MechanismScramSHA256, "scram.ScramLoginModule"},
		{MechanismScramSHA512, "scram.ScramLoginModule"},
	} {
		t.Run(tc.mech, func(t *testing.T) {
			c := newCluster(t, kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser(tc.mech, "alice", canary), kfake.SeedTopics(2, "orders"))
			props := map[string]string{
				"bootstrap.servers": strings.Join(c.ListenAddrs(), ","),
				"security.protocol": "SASL_PLAINTEXT",
				"sasl.mechanism":    tc.mech,
				"sasl.jaas.config":  jaas(tc.module, "alice", canary),
			}
			cl, err := dialProps(t, props)
			if err != nil {
				t.Fatalf("good password: %v", err)
			}
			s, err := cl.Snapshot(context.Background(), SnapshotOptions{Offsets: true})
			if err != nil || s.Topics["orders"] == nil || s.Topics["orders"].Partitions != 2 {
				t.Fatalf("snapshot over SASL = %+v, %v", s, err)
			}

			wrong := canary + "-wrong"
			props["sasl.jaas.config"] = jaas(tc.module, "alice", wrong)
			_, err = dialProps(t, props)
			if Classify(err) != ReasonAuthFailed {
				t.Errorf("bad password: Classify = %q, want %q (err: %v)", Classify(err), ReasonAuthFailed, err)
			}
			if err != nil && (strings.Contains(err.Error(), canary) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), canary)) {
				t.Errorf("error text contains the password: %v", err)
			}
		})
	}
}

// A real broker answers a rejected login with SASL_AUTHENTICATION_FAILED
// (58) instead of closing the connection as kfake does.
func TestSASLAuthenticationFailedCode(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser(MechanismPlain, "alice", canary))
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kr.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed: Invalid username or password"
		resp.ErrorMessage = &msg
		return resp, nil, true
	})
	_, err := dialProps(t, map[string]string{
		"bootstrap.servers": c.ListenAddrs()[0],
		"security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanism":    "PLAIN",
		"sasl.jaas.config":  jaas("plain.PlainLoginModule", "alice", canary),
	})
	if Classify(err) != ReasonAuthFailed || strings.Contains(fmt.Sprint(err), canary) {
		t.Errorf("Classify = %q, err %v", Classify(err), err)
	}
}

func TestSASLMissing(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser(MechanismPlain, "alice", canary))
	_, err := dialProps(t, map[string]string{"bootstrap.servers": c.ListenAddrs()[0]})
	if Classify(err) != ReasonSASLRequired {
		t.Errorf("Classify = %q, want %q (err: %v)", Classify(err), ReasonSASLRequired, err)
	}
}

// tlsCluster starts a TLS kfake cluster whose certificate is issued by ca
// for 127.0.0.1 (and dns names), optionally requiring client certificates
// issued by clientCA.
func tlsCluster(t *testing.T, ca *testCA, dns []string, clientCA *testCA) *kfake.Cluster {
	cert, _, _ := ca.issue(t, "broker", []net.IP{net.ParseIP("127.0.0.1")}, dns)
	sc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCA != nil {
		sc.ClientAuth = tls.RequireAndVerifyClientCert
		sc.ClientCAs = poolOf([]*x509.Certificate{clientCA.cert})
	}
	return newCluster(t, kfake.NumBrokers(1), kfake.TLS(sc), kfake.SeedTopics(1, "orders"))
}

func TestTLSTruststores(t *testing.T) {
	ca := newCA(t, "test-ca")
	c := tlsCluster(t, ca, nil, nil)
	addr := c.ListenAddrs()[0]

	p12, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.cert}, canary)
	if err != nil {
		t.Fatal(err)
	}
	ks := keystore.New()
	if err := ks.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{
		CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: ca.cert.Raw},
	}); err != nil {
		t.Fatal(err)
	}
	var jks bytes.Buffer
	if err := ks.Store(&jks, []byte(canary)); err != nil {
		t.Fatal(err)
	}

	for name, trust := range map[string]map[string]string{
		"PEM file":     {"ssl.truststore.type": "PEM", "ssl.truststore.location": writeFile(t, "ca.pem", ca.pem)},
		"PEM sniffed":  {"ssl.truststore.location": writeFile(t, "ca.crt", ca.pem)},
		"PEM inline":   {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.pem)},
		"PKCS12":       {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": writeFile(t, "trust.p12", p12), "ssl.truststore.password": canary},
		"JKS":          {"ssl.truststore.type": "JKS", "ssl.truststore.location": writeFile(t, "trust.jks", jks.Bytes()), "ssl.truststore.password": canary},
		"JKS sniffed":  {"ssl.truststore.location": writeFile(t, "trust2.jks", jks.Bytes()), "ssl.truststore.password": canary},
		"PKCS12 typed": {"ssl.truststore.type": "pkcs12", "ssl.truststore.location": writeFile(t, "t.pfx", p12), "ssl.truststore.password": canary},
	} {
		t.Run(name, func(t *testing.T) {
			props := map[string]string{"bootstrap.servers": addr, "security.protocol": "SSL"}
			for k, v := range trust {
				props[k] = v
			}
			cl, err := dialProps(t, props)
			if err != nil {
				t.Fatalf("Dial over TLS: %v", err)
			}
			if s, err := cl.Snapshot(context.Background(), SnapshotOptions{}); err != nil || s.Topics["orders"] == nil {
				t.Fatalf("snapshot over TLS: %+v, %v", s, err)
			}
		})
	}

	t.Run("wrong store password", func(t *testing.T) {
		for _, typ := range []string{"PKCS12", "JKS"} {
			data := p12
			if typ == "JKS" {
				data = jks.Bytes()
			}
			_, err := FromProps("vast", map[string]string{
				"bootstrap.servers": addr, "security.protocol": "SSL", "ssl.truststore.type": typ,
				"ssl.truststore.location": writeFile(t, "s", data), "ssl.truststore.password": "nope-" + canary,
			})
			if err == nil || !strings.Contains(err.Error(), "ssl.truststore.location") || !strings.Contains(err.Error(), `"vast"`) || strings.Contains(err.Error(), canary) {
				t.Errorf("%s wrong password: %v", typ, err)
			}
		}
	})

	t.Run("unknown CA", func(t *testing.T) {
		other := newCA(t, "other-ca")
		_, err := dialProps(t, map[string]string{"bootstrap.servers": addr, "security.protocol": "SSL",
			"ssl.truststore.location": writeFile(t, "other.pem", other.pem)})
		if Classify(err) != ReasonTLSUnknownCA {
			t.Errorf("Classify = %q, want %q (err: %v)", Classify(err), ReasonTLSUnknownCA, err)
		}
	})

	t.Run("plaintext to TLS port", func(t *testing.T) {
		_, err := dialProps(t, map[string]string{"bootstrap.servers": addr})
		if Classify(err) != ReasonTLSRequired {
			t.Errorf("Classify = %q, want %q (err: %v)", Classify(err), ReasonTLSRequired, err)
		}
	})

	t.Run("TLS to plaintext port", func(t *testing.T) {
		// A Kafka plaintext listener reads the ClientHello's first bytes
		// as a request size far above socket.request.max.bytes and closes
		// the connection (kfake instead waits for the bytes, so a plain
		// listener stands in for the broker here).
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				_, _ = conn.Read(make([]byte, 4))
				conn.Close()
			}
		}()
		_, err = dialProps(t, map[string]string{"bootstrap.servers": l.Addr().String(), "security.protocol": "SSL",
			"ssl.truststore.location": writeFile(t, "ca.pem", ca.pem)})
		if r := Classify(err); r != ReasonTLSNotExpected {
			t.Errorf("Classify = %q, want %q (err: %v)", r, ReasonTLSNotExpected, err)
		}
	})
}

func TestTLSHostnameVerification(t *testing.T) {
	ca := newCA(t, "test-ca")
	cert, _, _ := ca.issue(t, "broker", nil, []string{"broker.example"}) // no IP SAN
	c := newCluster(t, kfake.NumBrokers(1), kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}))
	props := map[string]string{"bootstrap.servers": c.ListenAddrs()[0], "security.protocol": "SSL",
		"ssl.truststore.location": writeFile(t, "ca.pem", ca.pem)}
	_, err := dialProps(t, props)
	if Classify(err) != ReasonTLSHostname {
		t.Errorf("default (https): Classify = %q, want %q (err: %v)", Classify(err), ReasonTLSHostname, err)
	}
	props["ssl.endpoint.identification.algorithm"] = ""
	if _, err := dialProps(t, props); err != nil {
		t.Errorf("empty algorithm: %v", err)
	}
	// The chain is still verified without the hostname check.
	props["ssl.truststore.location"] = writeFile(t, "other.pem", newCA(t, "other").pem)
	if _, err := dialProps(t, props); Classify(err) != ReasonTLSUnknownCA {
		t.Errorf("empty algorithm, unknown CA: Classify = %q (err: %v)", Classify(err), err)
	}
}

func TestMutualTLS(t *testing.T) {
	ca := newCA(t, "test-ca")
	clientCA := newCA(t, "client-ca")
	c := tlsCluster(t, ca, nil, clientCA)
	addr := c.ListenAddrs()[0]
	cert, key, leaf := clientCA.issue(t, "watchdog", nil, nil)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	p12, err := pkcs12.Modern.Encode(key, leaf, nil, canary)
	if err != nil {
		t.Fatal(err)
	}
	ks := keystore.New()
	if err := ks.SetPrivateKeyEntry("watchdog", keystore.PrivateKeyEntry{
		CreationTime: time.Now(), PrivateKey: keyDER,
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: leaf.Raw}},
	}, []byte(canary)); err != nil {
		t.Fatal(err)
	}
	var jks bytes.Buffer
	if err := ks.Store(&jks, []byte(canary)); err != nil {
		t.Fatal(err)
	}
	trust := writeFile(t, "ca.pem", ca.pem)
	for name, kp := range map[string]map[string]string{
		"PEM file":   {"ssl.keystore.type": "PEM", "ssl.keystore.location": writeFile(t, "client.pem", append(append([]byte{}, certPEM...), keyPEM...))},
		"PEM inline": {"ssl.keystore.type": "PEM", "ssl.keystore.key": string(keyPEM), "ssl.keystore.certificate.chain": string(certPEM)},
		"PKCS12":     {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": writeFile(t, "client.p12", p12), "ssl.keystore.password": canary},
		"JKS":        {"ssl.keystore.type": "JKS", "ssl.keystore.location": writeFile(t, "client.jks", jks.Bytes()), "ssl.keystore.password": canary, "ssl.key.password": canary},
	} {
		t.Run(name, func(t *testing.T) {
			props := map[string]string{"bootstrap.servers": addr, "security.protocol": "SSL", "ssl.truststore.location": trust}
			for k, v := range kp {
				props[k] = v
			}
			if _, err := dialProps(t, props); err != nil {
				t.Fatalf("mTLS Dial: %v", err)
			}
		})
	}
	t.Run("no client certificate", func(t *testing.T) {
		_, err := dialProps(t, map[string]string{"bootstrap.servers": addr, "security.protocol": "SSL", "ssl.truststore.location": trust})
		if err == nil {
			t.Fatal("Dial without a client certificate succeeded")
		}
		if r := Classify(err); r != ReasonTLSHandshake {
			t.Errorf("Classify = %q (err: %v)", r, err)
		}
		t.Logf("no client cert: %q: %v", Classify(err), err)
	})
}

// A Snapshot whose connections fail authentication reports the
// authentication failure, not its deadline, and gives up long before the
// deadline: a rejected password does not fix itself by retrying. kfake
// closes the connection on a rejected SaslAuthenticate; a broker without
// SASL does the same to a client that sends one.
func TestSnapshotAuthFailureFailsFast(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []kfake.Opt
	}{
		{"bad password", []kfake.Opt{kfake.EnableSASL(), kfake.Superuser(MechanismPlain, "alice", canary)}},
		{"plaintext broker", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, append([]kfake.Opt{kfake.NumBrokers(1)}, tc.opts...)...)
			cfg, err := FromProps("vast", map[string]string{
				"bootstrap.servers": c.ListenAddrs()[0],
				"security.protocol": "SASL_PLAINTEXT",
				"sasl.mechanism":    "PLAIN",
				"sasl.jaas.config":  jaas("plain.PlainLoginModule", "alice", canary+"-wrong"),
			})
			if err != nil {
				t.Fatal(err)
			}
			cl, err := New(cfg, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			const limit = 20 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			start := time.Now()
			_, err = cl.Snapshot(ctx, SnapshotOptions{})
			took := time.Since(start)
			t.Logf("after %v: %v", took, err)
			if r := Classify(err); r != ReasonAuthFailed {
				t.Errorf("Classify = %q, want %q (err: %v)", r, ReasonAuthFailed, err)
			}
			if took > limit/2 {
				t.Errorf("Snapshot took %v of its %v: it retried an authentication failure", took, limit)
			}
			if err == nil || !strings.Contains(err.Error(), "not retried further") || strings.Contains(err.Error(), canary) {
				t.Errorf("error %v: want a note that it was not retried, and no password", err)
			}
		})
	}
}

// A Snapshot that runs into its deadline while connections keep failing
// for a reason retrying can fix (here a listener that accepts and never
// answers, so each connection's ApiVersions times out) reports the last
// connection failure and how long it kept retrying, not a bare deadline.
func TestSnapshotDeadlineReportsLastConnectionError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	cl, err := New(Config{Alias: "vast", Seeds: []string{ln.Addr().String()}, RequestTimeout: 100 * time.Millisecond, APITimeout: time.Minute}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := cl.Snapshot(ctx, SnapshotOptions{})
		done <- err
	}()
	for err = nil; ; {
		select {
		case c := <-accepted:
			conns = append(conns, c)
			continue
		case err = <-done:
		}
		break
	}
	t.Logf("error: %v", err)
	if err == nil || !strings.Contains(err.Error(), "after retrying until the 1.5s timeout") || !strings.Contains(err.Error(), "i/o timeout") {
		t.Errorf("error %v: want the last connection failure and the retrying noted", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap the deadline", err)
	}
	if r := Classify(err); r != ReasonTimeout {
		t.Errorf("Classify = %q, want %q", r, ReasonTimeout)
	}
}
