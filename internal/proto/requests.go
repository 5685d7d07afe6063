package proto

// Request is a request record that may follow a RequestHeader. The
// interface is closed: only this package's request records implement it.
// The opcode is not part of the record; it travels in the header.
type Request interface {
	Record
	isRequest()
}

// Empty is the record of requests and responses that have no body:
// ping, closeSession and whoAmI requests, and the replies to delete,
// setWatches, checkWatches, removeWatches, auth, ping and closeSession.
type Empty struct{}

// Append returns b unchanged.
func (*Empty) Append(b []byte) []byte { return b }

// Decode reads nothing.
func (*Empty) Decode(*Decoder) {}

// CreateRequest is the body of create (1), create2 (15) and
// createContainer (19), and of those ops inside a multi.
type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32
}

// Append appends the jute encoding of the request.
func (r *CreateRequest) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	b = AppendBuffer(b, r.Data)
	b = AppendACLs(b, r.ACL)
	return AppendInt32(b, r.Flags)
}

// Decode reads a CreateRequest from d.
func (r *CreateRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = DecodeACLs(d)
	r.Flags = d.Int32()
}

// CreateTTLRequest is the body of createTTL (21).
type CreateTTLRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32
	TTL   int64
}

// Append appends the jute encoding of the request.
func (r *CreateTTLRequest) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	b = AppendBuffer(b, r.Data)
	b = AppendACLs(b, r.ACL)
	b = AppendInt32(b, r.Flags)
	return AppendInt64(b, r.TTL)
}

// Decode reads a CreateTTLRequest from d.
func (r *CreateTTLRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = DecodeACLs(d)
	r.Flags = d.Int32()
	r.TTL = d.Int64()
}

// DeleteRequest is the body of delete (2); Version -1 matches any version.
type DeleteRequest struct {
	Path    string
	Version int32
}

// Append appends the jute encoding of the request.
func (r *DeleteRequest) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	return AppendInt32(b, r.Version)
}

// Decode reads a DeleteRequest from d.
func (r *DeleteRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Version = d.Int32()
}

// ExistsRequest is the body of exists (3).
type ExistsRequest struct {
	Path  string
	Watch bool
}

// Append appends the jute encoding of the request.
func (r *ExistsRequest) Append(b []byte) []byte { return appendPathWatch(b, r.Path, r.Watch) }

// Decode reads an ExistsRequest from d.
func (r *ExistsRequest) Decode(d *Decoder) { r.Path, r.Watch = d.String(), d.Bool() }

// GetDataRequest is the body of getData (4).
type GetDataRequest struct {
	Path  string
	Watch bool
}

// Append appends the jute encoding of the request.
func (r *GetDataRequest) Append(b []byte) []byte { return appendPathWatch(b, r.Path, r.Watch) }

// Decode reads a GetDataRequest from d.
func (r *GetDataRequest) Decode(d *Decoder) { r.Path, r.Watch = d.String(), d.Bool() }

// GetChildrenRequest is the body of getChildren (8).
type GetChildrenRequest struct {
	Path  string
	Watch bool
}

// Append appends the jute encoding of the request.
func (r *GetChildrenRequest) Append(b []byte) []byte { return appendPathWatch(b, r.Path, r.Watch) }

// Decode reads a GetChildrenRequest from d.
func (r *GetChildrenRequest) Decode(d *Decoder) { r.Path, r.Watch = d.String(), d.Bool() }

// GetChildren2Request is the body of getChildren2 (12).
type GetChildren2Request struct {
	Path  string
	Watch bool
}

// Append appends the jute encoding of the request.
func (r *GetChildren2Request) Append(b []byte) []byte { return appendPathWatch(b, r.Path, r.Watch) }

// Decode reads a GetChildren2Request from d.
func (r *GetChildren2Request) Decode(d *Decoder) { r.Path, r.Watch = d.String(), d.Bool() }

func appendPathWatch(b []byte, path string, watch bool) []byte {
	b = AppendString(b, path)
	return AppendBool(b, watch)
}

// SetDataRequest is the body of setData (5).
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

// Append appends the jute encoding of the request.
func (r *SetDataRequest) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	b = AppendBuffer(b, r.Data)
	return AppendInt32(b, r.Version)
}

// Decode reads a SetDataRequest from d.
func (r *SetDataRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.Version = d.Int32()
}

// GetACLRequest is the body of getACL (6).
type GetACLRequest struct {
	Path string
}

// Append appends the jute encoding of the request.
func (r *GetACLRequest) Append(b []byte) []byte { return AppendString(b, r.Path) }

// Decode reads a GetACLRequest from d.
func (r *GetACLRequest) Decode(d *Decoder) { r.Path = d.String() }

// SetACLRequest is the body of setACL (7); Version is the expected aversion.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

// Append appends the jute encoding of the request.
func (r *SetACLRequest) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	b = AppendACLs(b, r.ACL)
	return AppendInt32(b, r.Version)
}

// Decode reads a SetACLRequest from d.
func (r *SetACLRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.ACL = DecodeACLs(d)
	r.Version = d.Int32()
}

// SyncRequest is the body of sync (9).
type SyncRequest struct {
	Path string
}

// Append appends the jute encoding of the request.
func (r *SyncRequest) Append(b []byte) []byte { return AppendString(b, r.Path) }

// Decode reads a SyncRequest from d.
func (r *SyncRequest) Decode(d *Decoder) { r.Path = d.String() }

// CheckVersionRequest is the body of check (13).
type CheckVersionRequest struct {
	Path    string
	Version int32
}

// Append appends the jute encoding of the request.
func (r *CheckVersionRequest) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	return AppendInt32(b, r.Version)
}

// Decode reads a CheckVersionRequest from d.
func (r *CheckVersionRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Version = d.Int32()
}

// CheckWatchesRequest is the body of checkWatches (17).
type CheckWatchesRequest struct {
	Path string
	Type WatcherType
}

// Append appends the jute encoding of the request.
func (r *CheckWatchesRequest) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	return AppendInt32(b, int32(r.Type))
}

// Decode reads a CheckWatchesRequest from d.
func (r *CheckWatchesRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Type = WatcherType(d.Int32())
}

// RemoveWatchesRequest is the body of removeWatches (18).
type RemoveWatchesRequest struct {
	Path string
	Type WatcherType
}

// Append appends the jute encoding of the request.
func (r *RemoveWatchesRequest) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	return AppendInt32(b, int32(r.Type))
}

// Decode reads a RemoveWatchesRequest from d.
func (r *RemoveWatchesRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Type = WatcherType(d.Int32())
}

// DeleteContainerRequest is the body of deleteContainer (20): the path as
// a jute buffer of UTF-8 bytes, as in ZooKeeper 3.9's hand-written record.
// (ZooKeeper 3.8's ContainerManager sends the raw path bytes without a
// length; the op never comes from clients.)
type DeleteContainerRequest struct {
	Path string
}

// Append appends the jute encoding of the request.
func (r *DeleteContainerRequest) Append(b []byte) []byte { return AppendString(b, r.Path) }

// Decode reads a DeleteContainerRequest from d; a null buffer reads as "".
func (r *DeleteContainerRequest) Decode(d *Decoder) { r.Path = d.String() }

// AuthPacket is the body of auth (100), sent with xid XidAuth. Type is
// unused by ZooKeeper (clients send 0).
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

// Append appends the jute encoding of the packet.
func (r *AuthPacket) Append(b []byte) []byte {
	b = AppendInt32(b, r.Type)
	b = AppendString(b, r.Scheme)
	return AppendBuffer(b, r.Auth)
}

// Decode reads an AuthPacket from d.
func (r *AuthPacket) Decode(d *Decoder) {
	r.Type = d.Int32()
	r.Scheme = d.String()
	r.Auth = d.Buffer()
}

// SetWatches is the body of setWatches (101), sent with xid XidSetWatches
// on reconnect to re-register watches.
type SetWatches struct {
	RelativeZxid int64
	DataWatches  []string
	ExistWatches []string
	ChildWatches []string
}

// Append appends the jute encoding of the request.
func (r *SetWatches) Append(b []byte) []byte {
	b = AppendInt64(b, r.RelativeZxid)
	b = AppendStrings(b, r.DataWatches)
	b = AppendStrings(b, r.ExistWatches)
	return AppendStrings(b, r.ChildWatches)
}

// Decode reads a SetWatches from d.
func (r *SetWatches) Decode(d *Decoder) {
	r.RelativeZxid = d.Int64()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
}

// SetWatches2 is the body of setWatches2 (105): SetWatches plus
// persistent and persistent-recursive watches.
type SetWatches2 struct {
	RelativeZxid               int64
	DataWatches                []string
	ExistWatches               []string
	ChildWatches               []string
	PersistentWatches          []string
	PersistentRecursiveWatches []string
}

// Append appends the jute encoding of the request.
func (r *SetWatches2) Append(b []byte) []byte {
	b = AppendInt64(b, r.RelativeZxid)
	b = AppendStrings(b, r.DataWatches)
	b = AppendStrings(b, r.ExistWatches)
	b = AppendStrings(b, r.ChildWatches)
	b = AppendStrings(b, r.PersistentWatches)
	return AppendStrings(b, r.PersistentRecursiveWatches)
}

// Decode reads a SetWatches2 from d.
func (r *SetWatches2) Decode(d *Decoder) {
	r.RelativeZxid = d.Int64()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
	r.PersistentWatches = d.Strings()
	r.PersistentRecursiveWatches = d.Strings()
}

// GetEphemeralsRequest is the body of getEphemerals (103).
type GetEphemeralsRequest struct {
	PrefixPath string
}

// Append appends the jute encoding of the request.
func (r *GetEphemeralsRequest) Append(b []byte) []byte { return AppendString(b, r.PrefixPath) }

// Decode reads a GetEphemeralsRequest from d.
func (r *GetEphemeralsRequest) Decode(d *Decoder) { r.PrefixPath = d.String() }

// GetAllChildrenNumberRequest is the body of getAllChildrenNumber (104).
type GetAllChildrenNumberRequest struct {
	Path string
}

// Append appends the jute encoding of the request.
func (r *GetAllChildrenNumberRequest) Append(b []byte) []byte { return AppendString(b, r.Path) }

// Decode reads a GetAllChildrenNumberRequest from d.
func (r *GetAllChildrenNumberRequest) Decode(d *Decoder) { r.Path = d.String() }

// AddWatchRequest is the body of addWatch (106); Mode is
// AddWatchPersistent or AddWatchPersistentRecursive.
type AddWatchRequest struct {
	Path string
	Mode int32
}

// Append appends the jute encoding of the request.
func (r *AddWatchRequest) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	return AppendInt32(b, r.Mode)
}

// Decode reads an AddWatchRequest from d.
func (r *AddWatchRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Mode = d.Int32()
}

func (*Empty) isRequest()                       {}
func (*CreateRequest) isRequest()               {}
func (*CreateTTLRequest) isRequest()            {}
func (*DeleteRequest) isRequest()               {}
func (*ExistsRequest) isRequest()               {}
func (*GetDataRequest) isRequest()              {}
func (*GetChildrenRequest) isRequest()          {}
func (*GetChildren2Request) isRequest()         {}
func (*SetDataRequest) isRequest()              {}
func (*GetACLRequest) isRequest()               {}
func (*SetACLRequest) isRequest()               {}
func (*SyncRequest) isRequest()                 {}
func (*CheckVersionRequest) isRequest()         {}
func (*CheckWatchesRequest) isRequest()         {}
func (*RemoveWatchesRequest) isRequest()        {}
func (*DeleteContainerRequest) isRequest()      {}
func (*AuthPacket) isRequest()                  {}
func (*SetWatches) isRequest()                  {}
func (*SetWatches2) isRequest()                 {}
func (*GetEphemeralsRequest) isRequest()        {}
func (*GetAllChildrenNumberRequest) isRequest() {}
func (*AddWatchRequest) isRequest()             {}
func (*MultiRequest) isRequest()                {}
