package server

import (
	"bufio"
	"bytes"
	"testing"
)

func TestOutQueueOrderAndReuse(t *testing.T) {
	var q outQueue
	q.init(64)
	if !q.push([]byte("ab")) {
		t.Fatal("push under the limit refused")
	}
	b := append(q.begin(), "cd"...)
	if !q.end(b) {
		t.Fatal("end under the limit refused")
	}
	if !q.push([]byte("ef")) {
		t.Fatal("push under the limit refused")
	}
	got := q.take()
	if string(got) != "abcdef" {
		t.Fatalf("take = %q, want frames in queue order %q", got, "abcdef")
	}
	if rest := q.take(); len(rest) != 0 {
		t.Fatalf("second take = %q, want nothing", rest)
	}
	q.recycle(got)
	if !q.push([]byte("gh")) {
		t.Fatal("push refused")
	}
	again := q.take()
	if string(again) != "gh" || &again[0] != &got[0] {
		t.Fatalf("take after recycle = %q (reused %v), want %q in the recycled buffer", again, &again[0] == &got[0], "gh")
	}
}

func TestOutQueueLimit(t *testing.T) {
	var q outQueue
	q.init(8)
	if !q.push([]byte("12345")) {
		t.Fatal("push under the limit refused")
	}
	if q.push([]byte("6789")) {
		t.Fatal("push over the limit accepted")
	}
	if q.end(append(q.begin(), "6789"...)) {
		t.Fatal("end over the limit accepted")
	}
	if got := q.take(); string(got) != "12345" {
		t.Fatalf("take = %q, want only the frame under the limit", got)
	}
	q.shutdown()
	if !q.push([]byte("x")) || q.take() != nil {
		t.Fatal("a dead queue must accept and drop frames")
	}
}

func TestOutQueueKeepsNoLargeSpare(t *testing.T) {
	var q outQueue
	q.init(1 << 20)
	q.push(make([]byte, maxSpareBuf+1))
	q.recycle(q.take())
	if q.spare != nil {
		t.Fatalf("kept a %d-byte spare, want none above %d", cap(q.spare), maxSpareBuf)
	}
}

func TestFrameBuffered(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want bool
	}{
		{"empty", nil, false},
		{"partial length", []byte{0, 0}, false},
		{"length only", []byte{0, 0, 0, 2}, false},
		{"partial payload", []byte{0, 0, 0, 2, 'a'}, false},
		{"whole frame", []byte{0, 0, 0, 2, 'a', 'b'}, true},
		{"empty frame", []byte{0, 0, 0, 0}, true},
		{"negative length", []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReader(bytes.NewReader(tc.in))
			if len(tc.in) > 0 {
				br.Peek(len(tc.in)) // fill the buffer
			}
			if got := frameBuffered(br); got != tc.want {
				t.Fatalf("frameBuffered(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
