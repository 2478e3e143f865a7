package mm2config

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// The binary records MM2 writes to its internal topics, in the layout of
// Kafka's protocol Schema/Struct types (MM2-REFERENCE.md §3.2): big-endian
// integers, STRING = int16 byte length then UTF-8 bytes, fields in
// declaration order. Heartbeat and Checkpoint values start with an INT16
// version (only 0 exists, in 3.9 and 4.x alike); OffsetSync has no version.
//
//	Heartbeat  (mirror-client/Heartbeat.java)  key: source STRING, target STRING
//	                                           value: version INT16, timestamp INT64 (epoch ms)
//	Checkpoint (mirror-client/Checkpoint.java) key: group STRING, topic STRING, partition INT32
//	                                           value: version INT16, upstreamOffset INT64, offset INT64, metadata STRING
//	OffsetSync (mirror/OffsetSync.java)        key: topic STRING, partition INT32
//	                                           value: upstreamOffset INT64, offset INT64

// ErrTruncated is wrapped by decode errors for records shorter than their
// layout.
var ErrTruncated = errors.New("record truncated")

// ErrUnknownVersion is wrapped by decode errors for a version header other
// than 0.
var ErrUnknownVersion = errors.New("unknown record version")

// Heartbeat is one record of a heartbeats topic: the herder source->target
// was alive at Timestamp.
type Heartbeat struct {
	Source, Target string
	Timestamp      time.Time // millisecond precision
}

// Checkpoint is one record of <source>.checkpoints.internal on the target: the
// group's committed offset UpstreamOffset on the source partition translates
// to Offset on the target. Topic is the target-side (renamed) topic.
type Checkpoint struct {
	Group          string
	Topic          string
	Partition      int32
	UpstreamOffset int64
	Offset         int64
	Metadata       string
}

// OffsetSync is one record of mm2-offset-syncs.<alias>.internal: source
// offset UpstreamOffset of Topic/Partition (the source topic) was written at
// Offset on the target.
type OffsetSync struct {
	Topic          string
	Partition      int32
	UpstreamOffset int64
	Offset         int64
}

// reader decodes the protocol types from a byte slice, remembering the first
// error.
type reader struct {
	b    []byte
	what string
	err  error
}

func (r *reader) need(n int, field string) bool {
	if r.err != nil {
		return false
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("%s: %w reading %s (need %d bytes, have %d)", r.what, ErrTruncated, field, n, len(r.b))
		return false
	}
	return true
}

func (r *reader) int16(field string) int16 {
	if !r.need(2, field) {
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.b))
	r.b = r.b[2:]
	return v
}

func (r *reader) int32(field string) int32 {
	if !r.need(4, field) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v
}

func (r *reader) int64(field string) int64 {
	if !r.need(8, field) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *reader) string(field string) string {
	n := r.int16(field + " length")
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.err = fmt.Errorf("%s: negative length %d for %s", r.what, n, field)
		return ""
	}
	if !r.need(int(n), field) {
		return ""
	}
	s := r.b[:n]
	r.b = r.b[n:]
	if !utf8.Valid(s) {
		r.err = fmt.Errorf("%s: %s is not valid UTF-8", r.what, field)
		return ""
	}
	return string(s)
}

func (r *reader) version() {
	if v := r.int16("version"); r.err == nil && v != 0 {
		r.err = fmt.Errorf("%s: %w %d (MM2 3.9 and 4.x write version 0)", r.what, ErrUnknownVersion, v)
	}
}

// done reports trailing bytes as an error: MM2's decoders would ignore them,
// but they mean the record is not what it claims to be.
func (r *reader) done() error {
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%s: %d unexpected trailing bytes", r.what, len(r.b))
	}
	return r.err
}

// DecodeHeartbeat decodes a heartbeat record's key and value. Errors wrap
// ErrTruncated or ErrUnknownVersion where they apply.
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	k := reader{b: key, what: "heartbeat key"}
	h := Heartbeat{Source: k.string("sourceClusterAlias"), Target: k.string("targetClusterAlias")}
	if err := k.done(); err != nil {
		return Heartbeat{}, err
	}
	v := reader{b: value, what: "heartbeat value"}
	v.version()
	ms := v.int64("timestamp")
	if err := v.done(); err != nil {
		return Heartbeat{}, err
	}
	h.Timestamp = time.UnixMilli(ms).UTC()
	return h, nil
}

// DecodeCheckpoint decodes a checkpoint record's key and value.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	k := reader{b: key, what: "checkpoint key"}
	c := Checkpoint{Group: k.string("consumerGroupId"), Topic: k.string("topic"), Partition: k.int32("partition")}
	if err := k.done(); err != nil {
		return Checkpoint{}, err
	}
	v := reader{b: value, what: "checkpoint value"}
	v.version()
	c.UpstreamOffset = v.int64("upstreamOffset")
	c.Offset = v.int64("offset")
	c.Metadata = v.string("metadata")
	if err := v.done(); err != nil {
		return Checkpoint{}, err
	}
	return c, nil
}

// DecodeOffsetSync decodes an offset-sync record's key and value.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	k := reader{b: key, what: "offset-sync key"}
	o := OffsetSync{Topic: k.string("topic"), Partition: k.int32("partition")}
	if err := k.done(); err != nil {
		return OffsetSync{}, err
	}
	v := reader{b: value, what: "offset-sync value"}
	o.UpstreamOffset = v.int64("upstreamOffset")
	o.Offset = v.int64("offset")
	if err := v.done(); err != nil {
		return OffsetSync{}, err
	}
	return o, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// Encode returns the heartbeat's key and value exactly as MM2 writes them.
func (h Heartbeat) Encode() (key, value []byte) {
	key = appendString(appendString(nil, h.Source), h.Target)
	value = binary.BigEndian.AppendUint16(nil, 0)
	value = binary.BigEndian.AppendUint64(value, uint64(h.Timestamp.UnixMilli()))
	return key, value
}

// Encode returns the checkpoint's key and value exactly as MM2 writes them.
func (c Checkpoint) Encode() (key, value []byte) {
	key = appendString(appendString(nil, c.Group), c.Topic)
	key = binary.BigEndian.AppendUint32(key, uint32(c.Partition))
	value = binary.BigEndian.AppendUint16(nil, 0)
	value = binary.BigEndian.AppendUint64(value, uint64(c.UpstreamOffset))
	value = binary.BigEndian.AppendUint64(value, uint64(c.Offset))
	value = appendString(value, c.Metadata)
	return key, value
}

// Encode returns the offset sync's key and value exactly as MM2 writes them.
func (o OffsetSync) Encode() (key, value []byte) {
	key = appendString(nil, o.Topic)
	key = binary.BigEndian.AppendUint32(key, uint32(o.Partition))
	value = binary.BigEndian.AppendUint64(nil, uint64(o.UpstreamOffset))
	value = binary.BigEndian.AppendUint64(value, uint64(o.Offset))
	return key, value
}
