package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Role is the part a server plays in an ensemble.
type Role int

// Roles a server.N line can name.
const (
	Participant Role = iota // votes and may lead (ZooKeeper's default)
	Observer                // replicates without voting
)

// String returns the zoo.cfg spelling of r.
func (r Role) String() string {
	switch r {
	case Participant:
		return "participant"
	case Observer:
		return "observer"
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

// PeerAddr is one quorum address of a server: the host and the two ports
// peers use to reach it.
type PeerAddr struct {
	Host         string // host name or IP literal, without brackets
	QuorumPort   int    // followers connect to the leader here
	ElectionPort int    // leader election traffic
}

// Server is one "server.N=..." line of zoo.cfg, in ZooKeeper's form
// host:quorumPort:electionPort[:participant|:observer][;[clientHost:]clientPort],
// where several host:port:port[:role] groups may be joined by '|'
// (ZooKeeper's multiAddress feature). It is parsed and kept for the ensemble;
// a standalone server ignores it.
type Server struct {
	ID         int64
	Addrs      []PeerAddr // at least one
	Role       Role
	ClientHost string // "0.0.0.0" when only a client port was given; "" when absent
	ClientPort int    // 0 when absent
}

const serverForm = "host:quorumPort:electionPort[:participant|:observer][;[clientHost:]clientPort]"

// parseServerID returns N from a "server.N" key.
func parseServerID(key string) (int64, error) {
	s := strings.TrimPrefix(key, "server.")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("server id %q is not a number", s)
	}
	return id, nil
}

// parseServer parses the value of a server.N line.
func parseServer(id int64, value string) (Server, error) {
	srv := Server{ID: id}
	serverClient := javaSplit(value, ";")
	if len(serverClient) == 0 || len(serverClient) > 2 {
		return Server{}, fmt.Errorf("does not have the form %s", serverForm)
	}
	serverPart, clientPart, hasClient := serverClient[0], "", len(serverClient) == 2
	if hasClient {
		clientPart = serverClient[1]
		parts, err := splitHostPorts(clientPart)
		if err != nil || len(parts) > 2 || len(parts) == 0 {
			return Server{}, fmt.Errorf("client address %q is not [host:]port", clientPart)
		}
		srv.ClientHost = "0.0.0.0"
		if len(parts) == 2 {
			srv.ClientHost = parts[0]
		}
		port, err := strconv.Atoi(parts[len(parts)-1])
		if err != nil {
			return Server{}, fmt.Errorf("client port %q is not a number", parts[len(parts)-1])
		}
		srv.ClientPort = port
	}
	addrs := javaSplit(serverPart, "|")
	if len(addrs) == 0 {
		return Server{}, fmt.Errorf("does not have the form %s", serverForm)
	}
	for i, addr := range addrs {
		parts, err := splitHostPorts(addr)
		if err != nil || len(parts) < 3 || len(parts) > 4 {
			return Server{}, fmt.Errorf("address %q does not have the form %s", addr, serverForm)
		}
		pa := PeerAddr{Host: parts[0]}
		if pa.QuorumPort, err = strconv.Atoi(parts[1]); err != nil {
			return Server{}, fmt.Errorf("quorum port %q is not a number", parts[1])
		}
		if pa.ElectionPort, err = strconv.Atoi(parts[2]); err != nil {
			return Server{}, fmt.Errorf("election port %q is not a number", parts[2])
		}
		role := Participant
		if len(parts) == 4 {
			switch strings.ToLower(parts[3]) {
			case "participant":
			case "observer":
				role = Observer
			default:
				return Server{}, fmt.Errorf("role %q is neither participant nor observer", parts[3])
			}
		}
		if i > 0 && role != srv.Role {
			return Server{}, errors.New("addresses of one server have different roles")
		}
		srv.Role = role
		srv.Addrs = append(srv.Addrs, pa)
	}
	return srv, nil
}

// splitHostPorts splits "host:a:b" or "[v6]:a:b" into host and the rest.
func splitHostPorts(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("empty address")
	}
	var parts []string
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return nil, fmt.Errorf("%q has '[' without ']'", s)
		}
		rest := s[end+1:]
		if rest == "" {
			return []string{s[1:end]}, nil
		}
		if rest[0] != ':' {
			return nil, fmt.Errorf("%q has no ':' after ']'", s)
		}
		parts = append([]string{s[1:end]}, javaSplit(rest[1:], ":")...)
	} else {
		parts = javaSplit(s, ":")
	}
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("%q has an empty field", s)
		}
	}
	return parts, nil
}

// javaSplit splits s at sep and drops the empty fields at the end, as
// Java's String.split does, which is how ZooKeeper splits a server.N value:
// it accepts "host:2888:3888;" (no client address) and a trailing ':'.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// validate checks ports and ids of one server line.
func (s Server) validate() error {
	key := "server." + strconv.FormatInt(s.ID, 10)
	var errs []error
	if s.ID < 1 || s.ID > maxServerID {
		errs = append(errs, rangeError(key, s.ID, "server id must be in [1, 255]"))
	}
	if len(s.Addrs) == 0 {
		errs = append(errs, &KeyError{Key: key, Reason: "has no quorum address"})
	}
	for _, a := range s.Addrs {
		if !validPort(a.QuorumPort, false) || !validPort(a.ElectionPort, false) {
			errs = append(errs, &KeyError{Key: key, Value: fmt.Sprintf("%s:%d:%d", a.Host, a.QuorumPort, a.ElectionPort),
				Reason: "has a port outside [1, 65535]"})
		} else if a.QuorumPort == a.ElectionPort {
			errs = append(errs, &KeyError{Key: key, Value: fmt.Sprintf("%s:%d:%d", a.Host, a.QuorumPort, a.ElectionPort),
				Reason: "uses the same port for quorum and election"})
		}
	}
	if s.ClientHost != "" && !validPort(s.ClientPort, false) {
		errs = append(errs, rangeError(key, s.ClientPort, "client port must be in [1, 65535]"))
	}
	return errors.Join(errs...)
}

func validPort(p int, zeroOK bool) bool {
	if p == 0 {
		return zeroOK
	}
	return p > 0 && p <= 65535
}
