package mm2config

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestHeartbeatBytesAsMM2WritesThem(t *testing.T) {
	// MM2-REFERENCE.md §3.2: key for A->B = 00 01 41 00 01 42, value = 00 00 + ms.
	ts := time.UnixMilli(0x0102030405).UTC()
	k, v := Heartbeat{Source: "A", Target: "B", Timestamp: ts}.Encode()
	if !bytes.Equal(k, []byte{0, 1, 'A', 0, 1, 'B'}) {
		t.Errorf("key = % x", k)
	}
	if !bytes.Equal(v, []byte{0, 0, 0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05}) {
		t.Errorf("value = % x", v)
	}
	h, err := DecodeHeartbeat(k, v)
	if err != nil || h.Source != "A" || h.Target != "B" || !h.Timestamp.Equal(ts) {
		t.Errorf("decode = %+v, %v", h, err)
	}
}

func TestCheckpointAndOffsetSyncRoundTrip(t *testing.T) {
	c := Checkpoint{Group: "billing", Topic: "kafka.orders", Partition: 4, UpstreamOffset: 318, Offset: 1, Metadata: "m"}
	k, v := c.Encode()
	if len(v) != 2+8+8+2+1 {
		t.Errorf("checkpoint value is %d bytes", len(v))
	}
	got, err := DecodeCheckpoint(k, v)
	if err != nil || got != c {
		t.Errorf("checkpoint = %+v, %v", got, err)
	}
	o := OffsetSync{Topic: "orders", Partition: 2, UpstreamOffset: 100, Offset: 42}
	k, v = o.Encode()
	if len(v) != 16 {
		t.Errorf("offset-sync value is %d bytes, want 16 (no version header)", len(v))
	}
	gotO, err := DecodeOffsetSync(k, v)
	if err != nil || gotO != o {
		t.Errorf("offset sync = %+v, %v", gotO, err)
	}
}

func TestDecodeBadRecords(t *testing.T) {
	k, v := Heartbeat{Source: "A", Target: "B", Timestamp: time.Now()}.Encode()
	if _, err := DecodeHeartbeat(k, v[:6]); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated value: %v", err)
	}
	if _, err := DecodeHeartbeat(k[:3], v); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated key: %v", err)
	}
	bad := append([]byte{0, 1}, v[2:]...)
	if _, err := DecodeHeartbeat(k, bad); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("version 1: %v", err)
	}
	if _, err := DecodeHeartbeat(append(k, 0), v); err == nil {
		t.Error("trailing bytes accepted")
	}
	if _, err := DecodeHeartbeat([]byte{0xff, 0xff}, v); err == nil {
		t.Error("negative length accepted")
	}
	ck, cv := Checkpoint{Group: "g", Topic: "t"}.Encode()
	if _, err := DecodeCheckpoint(ck, cv[:len(cv)-1]); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated checkpoint: %v", err)
	}
	if _, err := DecodeOffsetSync([]byte{0, 1, 't'}, make([]byte, 16)); !errors.Is(err, ErrTruncated) {
		t.Errorf("offset-sync key without partition: %v", err)
	}
}

func FuzzDecodeRecords(f *testing.F) {
	hk, hv := Heartbeat{Source: "kafka", Target: "vast", Timestamp: time.UnixMilli(1)}.Encode()
	ck, cv := Checkpoint{Group: "g", Topic: "t", Partition: 1, UpstreamOffset: 2, Offset: 3}.Encode()
	ok, ov := OffsetSync{Topic: "t", Partition: 1}.Encode()
	f.Add(hk, hv)
	f.Add(ck, cv)
	f.Add(ok, ov)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if h, err := DecodeHeartbeat(key, value); err == nil {
			k2, v2 := h.Encode()
			if !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
				t.Fatalf("heartbeat does not round-trip: % x / % x", key, value)
			}
		}
		if c, err := DecodeCheckpoint(key, value); err == nil {
			k2, v2 := c.Encode()
			if !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
				t.Fatalf("checkpoint does not round-trip")
			}
		}
		if o, err := DecodeOffsetSync(key, value); err == nil {
			k2, v2 := o.Encode()
			if !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
				t.Fatalf("offset sync does not round-trip")
			}
		}
	})
}
