package proto

// Sizes of fixed-size records, in bytes.
const (
	// StatSize is the encoded size of a Stat.
	StatSize = 8*4 + 4*3 + 8 + 4*2 + 8
	// minACLSize is the smallest encoded ACL: perms and two empty strings.
	minACLSize = 4 + 4 + 4
	// minClientInfoSize is the smallest encoded ClientInfo.
	minClientInfoSize = 4 + 4
)

// Append appends the jute encoding of the ID (Id{ustring scheme; ustring id}).
func (id *ID) Append(b []byte) []byte {
	b = AppendString(b, id.Scheme)
	return AppendString(b, id.ID)
}

// Decode reads an ID from d.
func (id *ID) Decode(d *Decoder) {
	id.Scheme = d.String()
	id.ID = d.String()
}

// Append appends the jute encoding of the ACL (ACL{int perms; Id id}).
func (a *ACL) Append(b []byte) []byte {
	b = AppendInt32(b, a.Perms)
	return a.ID.Append(b)
}

// Decode reads an ACL from d.
func (a *ACL) Decode(d *Decoder) {
	a.Perms = d.Int32()
	a.ID.Decode(d)
}

// AppendACLs appends acl as a jute vector<ACL>; nil is encoded as -1.
func AppendACLs(b []byte, acl []ACL) []byte {
	b = AppendVectorLen(b, len(acl), acl == nil)
	for i := range acl {
		b = acl[i].Append(b)
	}
	return b
}

// DecodeACLs reads a jute vector<ACL>; null reads as nil.
func DecodeACLs(d *Decoder) []ACL {
	n := d.VectorLen(minACLSize)
	if n < 0 || d.Err() != nil {
		return nil
	}
	out := make([]ACL, n)
	for i := range out {
		out[i].Decode(d)
	}
	if d.Err() != nil {
		return nil
	}
	return out
}

// Append appends the 68-byte jute encoding of the Stat.
func (s *Stat) Append(b []byte) []byte {
	b = AppendInt64(b, s.Czxid)
	b = AppendInt64(b, s.Mzxid)
	b = AppendInt64(b, s.Ctime)
	b = AppendInt64(b, s.Mtime)
	b = AppendInt32(b, s.Version)
	b = AppendInt32(b, s.Cversion)
	b = AppendInt32(b, s.Aversion)
	b = AppendInt64(b, s.EphemeralOwner)
	b = AppendInt32(b, s.DataLength)
	b = AppendInt32(b, s.NumChildren)
	return AppendInt64(b, s.Pzxid)
}

// Decode reads a Stat from d.
func (s *Stat) Decode(d *Decoder) {
	s.Czxid = d.Int64()
	s.Mzxid = d.Int64()
	s.Ctime = d.Int64()
	s.Mtime = d.Int64()
	s.Version = d.Int32()
	s.Cversion = d.Int32()
	s.Aversion = d.Int32()
	s.EphemeralOwner = d.Int64()
	s.DataLength = d.Int32()
	s.NumChildren = d.Int32()
	s.Pzxid = d.Int64()
}

// ClientInfo is one authenticated identity in a WhoAmIResponse
// (org.apache.zookeeper.data.ClientInfo).
type ClientInfo struct {
	AuthScheme string
	User       string
}

// Append appends the jute encoding of the ClientInfo.
func (c *ClientInfo) Append(b []byte) []byte {
	b = AppendString(b, c.AuthScheme)
	return AppendString(b, c.User)
}

// Decode reads a ClientInfo from d.
func (c *ClientInfo) Decode(d *Decoder) {
	c.AuthScheme = d.String()
	c.User = d.String()
}
