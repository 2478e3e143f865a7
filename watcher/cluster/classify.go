package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Reason is why a cluster could not be reached, in words a person can act
// on. The values are stable and may be used as a metric label or in a
// finding's values.
type Reason string

// The reasons Classify knows.
const (
	// ReasonAuthFailed: SASL authentication failed. A broker answers
	// SASL_AUTHENTICATION_FAILED (code 58); some brokers and proxies close
	// the connection right after the SASL exchange instead.
	ReasonAuthFailed Reason = "auth-failed"
	// ReasonSASLMechanism: the broker does not enable the configured
	// sasl.mechanism (UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE).
	ReasonSASLMechanism Reason = "sasl-mechanism-rejected"
	// ReasonSASLRequired: the broker closed the connection after the first
	// request and no SASL is configured: the listener wants SASL.
	ReasonSASLRequired Reason = "sasl-required"
	// ReasonTLSUnknownCA: the broker's certificate is not signed by a CA in
	// the truststore.
	ReasonTLSUnknownCA Reason = "tls-unknown-ca"
	// ReasonTLSHostname: the broker's certificate does not name the host
	// dialled (ssl.endpoint.identification.algorithm=https).
	ReasonTLSHostname Reason = "tls-hostname-mismatch"
	// ReasonTLSHandshake: any other TLS handshake failure (expired
	// certificate, protocol version, the broker rejecting the client
	// certificate).
	ReasonTLSHandshake Reason = "tls-handshake-failed"
	// ReasonTLSRequired: the broker closed a plaintext connection before
	// answering its first request, the way a TLS listener treats plaintext.
	// A listener that drops every connection (a proxy without a backend,
	// connection limits) looks the same from the client.
	ReasonTLSRequired Reason = "tls-required"
	// ReasonTLSNotExpected: TLS sent to a plaintext listener.
	ReasonTLSNotExpected Reason = "tls-not-expected"
	// ReasonConnRefused: nothing listens on the address (or a firewall
	// rejects the connection).
	ReasonConnRefused Reason = "connection-refused"
	// ReasonDNS: a bootstrap or advertised host name does not resolve.
	ReasonDNS Reason = "dns"
	// ReasonUnreachable: no route to the host or network.
	ReasonUnreachable Reason = "unreachable"
	// ReasonTimeout: no answer within the configured timeouts.
	ReasonTimeout Reason = "timeout"
	// ReasonAuthorization: connected and authenticated, but ACLs deny the
	// watchdog's principal (CLUSTER/TOPIC/GROUP_AUTHORIZATION_FAILED).
	ReasonAuthorization Reason = "authorization-failed"
	// ReasonUnknown: none of the above.
	ReasonUnknown Reason = "unknown"
)

// Describe returns a short sentence about the reason for a person.
func (r Reason) Describe() string {
	switch r {
	case ReasonAuthFailed:
		return "SASL authentication failed: check the username, password and sasl.mechanism"
	case ReasonSASLMechanism:
		return "the broker does not accept this sasl.mechanism"
	case ReasonSASLRequired:
		return "the broker closed the connection: the listener probably requires SASL (security.protocol SASL_*)"
	case ReasonTLSUnknownCA:
		return "the broker's certificate is signed by a CA that is not in the truststore"
	case ReasonTLSHostname:
		return "the broker's certificate does not match its host name"
	case ReasonTLSHandshake:
		return "the TLS handshake failed (expired certificate, protocol mismatch, or a client certificate rejected or missing)"
	case ReasonTLSRequired:
		return "the broker closed the connection before answering: the listener probably requires TLS (security.protocol SSL or SASL_SSL?), or it drops every connection"
	case ReasonTLSNotExpected:
		return "the client uses TLS but the listener is plaintext"
	case ReasonConnRefused:
		return "connection refused: nothing listens on the bootstrap address"
	case ReasonDNS:
		return "a broker host name does not resolve"
	case ReasonUnreachable:
		return "no route to the broker"
	case ReasonTimeout:
		return "no answer from the cluster in time"
	case ReasonAuthorization:
		return "ACLs deny the watchdog's principal"
	default:
		return "could not talk to the cluster"
	}
}

// Error is an error from talking to one cluster. Its message names the
// alias, the operation and the reason; it never contains credentials
// (franz-go does not put them into its errors, and this package only adds
// the alias and operation).
type Error struct {
	Alias  string // MM2 cluster alias
	Op     string // what was being done ("connecting", "listing metadata")
	Reason Reason // classification of Err
	Err    error  // the underlying error
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("cluster %q: %s: %s: %v", e.Alias, e.Op, e.Reason.Describe(), e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Classify names why err happened. An *Error anywhere in err's chain gives
// its Reason; otherwise the chain is inspected without knowing whether
// SASL or TLS was configured, so a bare EOF stays ReasonUnknown. Errors from
// this package's Client (Dial, Snapshot, reads) are already *Error values,
// classified with that knowledge.
func Classify(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return classify(err, false, false)
}

// classify inspects err. withSASL and withTLS say what the client was
// configured with, which turns an ambiguous EOF into a specific reason.
func classify(err error, withSASL, withTLS bool) Reason {
	if err == nil {
		return ""
	}
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return ReasonAuthFailed
	case errors.Is(err, kerr.UnsupportedSaslMechanism), errors.Is(err, kerr.IllegalSaslState):
		return ReasonSASLMechanism
	case errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.TopicAuthorizationFailed),
		errors.Is(err, kerr.GroupAuthorizationFailed), errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		return ReasonAuthorization
	}

	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verifyErr *tls.CertificateVerificationError
	var alert tls.AlertError
	var recHdr tls.RecordHeaderError
	switch {
	case errors.As(err, &unknownCA):
		return ReasonTLSUnknownCA
	case errors.As(err, &hostErr):
		return ReasonTLSHostname
	case errors.As(err, &invalid), errors.As(err, &verifyErr), errors.As(err, &alert):
		return ReasonTLSHandshake
	case errors.As(err, &recHdr):
		return ReasonTLSNotExpected
	}

	var hs *handshakeError
	if errors.As(err, &hs) {
		// Not a certificate problem (those are classified above): a
		// listener that hangs up on a ClientHello is a plaintext one.
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return ReasonTLSNotExpected
		}
		return ReasonTLSHandshake
	}
	// A TLS alert from the broker after the handshake (TLS 1.3 sends a
	// rejected or missing client certificate this way).
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return ReasonTLSHandshake
	}

	// franz-go's guesses for a connection closed before the first answer
	// (kgo.ErrFirstReadEOF); its kind is unexported, its message is not.
	var first *kgo.ErrFirstReadEOF
	if errors.As(err, &first) {
		msg := first.Error()
		switch {
		case strings.Contains(msg, "is TLS missing"):
			return ReasonTLSRequired
		case strings.Contains(msg, "is TLS misconfigured"):
			if withTLS {
				return ReasonTLSNotExpected
			}
		case strings.Contains(msg, "is SASL missing"):
			if withSASL {
				return ReasonAuthFailed
			}
			return ReasonSASLRequired
		}
	}

	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return ReasonDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonConnRefused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return ReasonUnreachable
	}
	if (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) && withSASL {
		// The broker hung up during or right after SASL: the shape of a
		// rejected login on brokers that close instead of answering 58.
		return ReasonAuthFailed
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kerr.RequestTimedOut) || (errors.As(err, &ne) && ne.Timeout()) {
		return ReasonTimeout
	}
	return ReasonUnknown
}
