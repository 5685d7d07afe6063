package difftest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/proto"
)

// maxRawRead bounds what rawConnect reads.
const maxRawRead = 1 << 20

// rawConnect opens a fresh TCP connection, writes b as the very first
// bytes (no handshake of ours), reads until the server closes the
// connection or closeTimeout passes, and describes what came back: the
// text if it is short and printable (a four-letter word's answer), else
// the number of bytes; then "closed" or "open".
func rawConnect(addr string, b []byte, closeTimeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, closeTimeout)
	if err != nil {
		return "", fmt.Errorf("difftest: dial %s: %w", addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(closeTimeout)); err != nil {
		return "", err
	}
	if _, err := conn.Write(b); err != nil {
		return "write failed", nil
	}
	got, err := io.ReadAll(io.LimitReader(conn, maxRawRead))
	state := "closed"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		state = "open"
	}
	switch {
	case len(got) == 0:
		return state, nil
	case len(got) <= maxShownData && utf8.Valid(got) && isText(got):
		return strconv.Quote(string(got)) + " " + state, nil
	}
	if hs, rest, ok := splitHandshake(got); ok {
		if rest > 0 {
			return fmt.Sprintf("%s +%d bytes %s", hs, rest, state), nil
		}
		return hs + " " + state, nil
	}
	return fmt.Sprintf("<%d bytes> %s", len(got), state), nil
}

// splitHandshake decodes a leading ConnectResponse frame, describing it
// without its random parts (a new session id and password), and returns
// how many bytes follow it.
func splitHandshake(b []byte) (string, int, bool) {
	if len(b) < 4 {
		return "", 0, false
	}
	n := int(binary.BigEndian.Uint32(b))
	if n != proto.ConnectResponseSize && n != proto.ConnectResponseSizeNoReadOnly || len(b) < 4+n {
		return "", 0, false
	}
	var resp proto.ConnectResponse
	if err := proto.Unmarshal(b[4:4+n], &resp); err != nil {
		return "", 0, false
	}
	session := "new"
	if resp.SessionID == 0 {
		session = "0"
	}
	s := fmt.Sprintf("handshake{len=%d version=%d timeout=%d session=%s", n, resp.ProtocolVersion, resp.TimeOut, session)
	if bytes.Equal(resp.Passwd, make([]byte, len(resp.Passwd))) {
		s += " pw=zero"
	}
	return s + "}", len(b) - 4 - n, true
}

// isText reports whether b is printable text, newlines allowed.
func isText(b []byte) bool {
	for _, r := range string(b) {
		if r != '\n' && r != '\t' && !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
