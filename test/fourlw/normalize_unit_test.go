package fourlw_test

import (
	"strings"
	"testing"
)

// The normalizers must hide only what may differ: these cases, taken from
// Apache ZooKeeper 3.8's answers, check that they keep the formats they are
// meant to prove.

func TestCanonSrvr(t *testing.T) {
	const zk = "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\n" +
		"Clients:\n /127.0.0.1:45770[1](queued=0,recved=3,sent=3)\n /127.0.0.1:45786[0](queued=0,recved=1,sent=0)\n\n" +
		"Latency min/avg/max: 0/5.9286/61\nReceived: 17\nSent: 18\nConnections: 2\nOutstanding: 0\n" +
		"Zxid: 0x6\nMode: standalone\nNode count: 9\n"
	const want = "Zookeeper version: <version>\n" +
		"Clients:\n /127.0.0.1:<port> <asking>\n /127.0.0.1:<port>[<ops>](queued=0,recved=<n>,sent=<n>)\n\n" +
		"Latency min/avg/max: <min>/<avg>/<max>\nReceived: <n>\nSent: <n>\nConnections: 2\nOutstanding: 0\n" +
		"Zxid: 0x<zxid>\nMode: standalone\nNode count: 9\n"
	if got := canonSrvr(zk, nil); got != want {
		t.Errorf("canonSrvr:\n%s", lineDiff(want, got))
	}
	for _, latency := range []string{"0/0.0000/0", "0/5.92857/61", "0/6/61", "0/5.90/61"} {
		if got := canonSrvr("Latency min/avg/max: "+latency+"\n", nil); !strings.Contains(got, latency) {
			t.Errorf("canonSrvr accepted latency %q as Java's format: %q", latency, got)
		}
	}
}

func TestCanonCons(t *testing.T) {
	labels := sessionLabels{0x100001a94560001: "s1"}
	const zk = " /127.0.0.1:45770[1](queued=0,recved=3,sent=3,sid=0x100001a94560001,lop=GETD,est=1795260273725,to=10000,lcxid=0x2,lzxid=0x6,lresp=1745907,llat=0,minlat=0,avglat=1,maxlat=2)\n" +
		" /127.0.0.1:45802[0](queued=0,recved=1,sent=0)\n\n"
	const want = " /127.0.0.1:<port>[0](queued=0,recved=<n>,sent=<n>)\n" +
		" /127.0.0.1:<port>[<ops>](queued=0,recved=<n>,sent=<n>,sid=0x<s1>,lop=GETD,est=<ms>,to=10000,lcxid=0x<cxid>,lzxid=0x<zxid>,lresp=<ms>,llat=<n>,minlat=<n>,avglat=<n>,maxlat=<n>)\n\n"
	got, err := canonCons(zk, labels, false)
	if err != nil || got != want {
		t.Errorf("canonCons(zookeeper) = %v\n%s", err, lineDiff(want, got))
	}
	const pd = " /127.0.0.1:1[1](queued=0,recved=3,sent=3,sid=0x100001a94560001,lop=GETD,est=1795260273725,to=10000,lcxid=0x2,lzxid=0x6,lresp=1795260273725,llat=0,minlat=0,avglat=1,maxlat=2)\n" +
		" /127.0.0.1:2[0](queued=0,recved=1,sent=0,sid=0x0,lop=NA,est=1795260273725,to=10000,lcxid=0x0,lzxid=0xffffffffffffffff,lresp=0,llat=0,minlat=0,avglat=0,maxlat=0)\n\n"
	got, err = canonCons(pd, labels, true)
	if err != nil || got != want {
		t.Errorf("canonCons(paddock) = %v\n%s", err, lineDiff(want, got))
	}
	for _, bad := range []string{
		" /127.0.0.1:2[0](queued=0,recved=1,sent=0,sid=0x0,lop=NA,est=1,to=0,lcxid=0x0,lzxid=0x2,lresp=-62135596800000,llat=0,minlat=0,avglat=0,maxlat=0)\n\n",
		" /127.0.0.1:2[0](queued=0,recved=1,sent=0)\n",
		"127.0.0.1:2 queued=0\n\n",
	} {
		if _, err := canonCons(bad, nil, true); err == nil {
			t.Errorf("canonCons accepted %q", bad)
		}
	}
	if got, _ := canonCons(" /127.0.0.1:1[1](queued=0,recved=3,sent=3,sid=0x1,lop=GETD,est=1,to=1,lcxid=0x2,lzxid=0x6,lresp=1,llat=0,minlat=0,avglat=1.5,maxlat=2)\n\n", nil, false); !strings.Contains(got, "avglat=1.5") {
		t.Errorf("canonCons hid a fractional avglat: %q", got)
	}
}

func TestCanonDump(t *testing.T) {
	labels := sessionLabels{0x100001a94560000: "s1", 0x100001a94560001: "s2"}
	const zk = "SessionTracker dump:\nSession Sets (2)/(2):\n" +
		"1 expire at Sat Nov 21 11:24:43 UTC 2026:\n\t0x100001a94560001\n" +
		"1 expire at Sat Nov 21 11:25:03 UTC 2026:\n\t0x100001a94560000\n" +
		"ephemeral nodes dump:\nSessions with Ephemerals (2):\n" +
		"0x100001a94560001:\n\t/e2\n0x100001a94560000:\n\t/e\n\t/a\n" +
		"Connections dump:\nConnections Sets (2)/(3):\n" +
		"2 expire at Sat Nov 21 11:24:47 UTC 2026:\n\tip: /127.0.0.1:45770 sessionId: 0x100001a94560001\n\tip: /127.0.0.1:45866 sessionId: 0x0\n" +
		"1 expire at Sat Nov 21 11:25:07 UTC 2026:\n\tip: /127.0.0.1:45754 sessionId: 0x100001a94560000\n"
	const want = "SessionTracker dump:\nSession Sets (<n>)/(2):\n\t0x<s1>\n\t0x<s2>\n" +
		"ephemeral nodes dump:\nSessions with Ephemerals (2):\n" +
		"0x<s1>:\n\t/a\n\t/e\n0x<s2>:\n\t/e2\n" +
		"Connections dump:\nConnections Sets (<n>)/(3):\n" +
		"\tip: /127.0.0.1:<port> sessionId: 0x0\n\tip: /127.0.0.1:<port> sessionId: 0x<s1>\n\tip: /127.0.0.1:<port> sessionId: 0x<s2>\n"
	got, err := canonDump(zk, labels)
	if err != nil || got != want {
		t.Errorf("canonDump = %v\n%s", err, lineDiff(want, got))
	}
	for _, bad := range []string{
		"Session Sets (1)/(2):\n1 expire at Sat Nov 21 11:24:43 UTC 2026:\n\t0x1\n\t0x2\n",
		"Session Sets (1)/(1):\n2 expire at Sat Nov 21 11:24:43 UTC 2026:\n\t0x1\n",
		"Session Sets (2)/(1):\n1 expire at Sat Nov 21 11:24:43 UTC 2026:\n\t0x1\n",
	} {
		if _, err := canonDump(bad, nil); err == nil {
			t.Errorf("canonDump accepted %q", bad)
		}
	}
}

func TestSameOrder(t *testing.T) {
	ref := []string{"a", "b", "c", "d"}
	for _, c := range []struct {
		got []string
		ok  bool
	}{
		{[]string{"a", "c", "d"}, true},
		{[]string{"a", "x", "d"}, true},
		{[]string{"b", "a"}, false},
		{[]string{"d", "c"}, false},
	} {
		if msg := sameOrder(ref, c.got); (msg == "") != c.ok {
			t.Errorf("sameOrder(%v) = %q, want ok=%v", c.got, msg, c.ok)
		}
	}
}
