//go:build capture

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// javaCommands drive Apache ZooKeeper's own Java client (ZooKeeperMain,
// i.e. zkCli) so that its request frames can be recorded.
var javaCommands = []string{
	"create /java hello",
	"create -s /java/seq- s",
	"create -e /java/eph e",
	"create -c /java/cont",
	"create -t 60000 /java/ttl t",
	"get -w -s /java",
	"set /java world",
	"set -v 1 /java again",
	"stat -w /java",
	"ls -w /java",
	"ls -s /java",
	"getAcl /java",
	"setAcl /java world:anyone:cdrwa",
	"sync /java",
	"getAllChildrenNumber /java",
	"getEphemerals /java",
	"addauth digest user:secret",
	"whoami",
	"addWatch -m PERSISTENT_RECURSIVE /java",
	"removewatches /java -a",
	"delete /java/eph",
	"deleteall /java",
	"quit",
}

// captureJavaClient runs the Java client through a recording proxy and
// saves each client-to-server frame as java_<op>_<n>.bin, n counting the
// frames of that op, and the handshake as java_connect.bin.
func captureJavaClient(addr string, w *writer, java, classpath string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("proxy listen: %w", err)
	}
	defer l.Close()
	done := make(chan error, 1)
	go func() { done <- proxyOnce(l, addr, w) }()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-cp", classpath,
		"org.apache.zookeeper.ZooKeeperMain", "-server", l.Addr().String())
	cmd.Stdin = strings.NewReader(strings.Join(javaCommands, "\n") + "\n")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ZooKeeperMain: %w\n%s", err, out.String())
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errors.New("proxy did not finish after the Java client exited")
	}
}

// proxyOnce accepts one client, forwards its traffic to addr and records
// the client's frames.
func proxyOnce(l net.Listener, addr string, w *writer) error {
	client, err := l.Accept()
	if err != nil {
		return fmt.Errorf("proxy accept: %w", err)
	}
	defer client.Close()
	server, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return fmt.Errorf("proxy dial: %w", err)
	}
	defer server.Close()
	go func() {
		_, _ = io.Copy(client, server)
		client.Close()
	}()

	r := bufio.NewReader(client)
	counts := map[proto.OpCode]int{}
	for first := true; ; first = false {
		payload, err := proto.ReadFrame(r, nil, proto.DefaultMaxBuffer)
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("proxy reading client frame: %w", err)
		}
		frame := append(proto.AppendInt32(nil, int32(len(payload))), payload...)
		name := "java_connect"
		if !first {
			var h proto.RequestHeader
			if err := proto.Unmarshal(payload, &h); err != nil {
				return fmt.Errorf("proxy decoding request header: %w", err)
			}
			name = fmt.Sprintf("java_%s_%d", h.Op, counts[h.Op])
			counts[h.Op]++
		}
		log.Printf("%-28s %d bytes", name, len(frame))
		if err := w.save(name, frame); err != nil {
			return err
		}
		if _, err := server.Write(frame); err != nil {
			return fmt.Errorf("proxy forwarding %s: %w", name, err)
		}
	}
}
