package proto

// Response is a response record that may follow a ReplyHeader whose Err
// is ErrOK. The interface is closed: only this package's response records
// implement it.
type Response interface {
	Record
	isResponse()
}

// CreateResponse answers create (1).
type CreateResponse struct {
	Path string
}

// Append appends the jute encoding of the response.
func (r *CreateResponse) Append(b []byte) []byte { return AppendString(b, r.Path) }

// Decode reads a CreateResponse from d.
func (r *CreateResponse) Decode(d *Decoder) { r.Path = d.String() }

// Create2Response answers create2 (15), createContainer (19) and
// createTTL (21).
type Create2Response struct {
	Path string
	Stat Stat
}

// Append appends the jute encoding of the response.
func (r *Create2Response) Append(b []byte) []byte {
	b = AppendString(b, r.Path)
	return r.Stat.Append(b)
}

// Decode reads a Create2Response from d.
func (r *Create2Response) Decode(d *Decoder) {
	r.Path = d.String()
	r.Stat.Decode(d)
}

// StatResponse answers exists (3), setData (5) and setACL (7); the jute
// records ExistsResponse, SetDataResponse and SetACLResponse are all
// {Stat stat}.
type StatResponse struct {
	Stat Stat
}

// Append appends the jute encoding of the response.
func (r *StatResponse) Append(b []byte) []byte { return r.Stat.Append(b) }

// Decode reads a StatResponse from d.
func (r *StatResponse) Decode(d *Decoder) { r.Stat.Decode(d) }

// GetDataResponse answers getData (4).
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

// Append appends the jute encoding of the response.
func (r *GetDataResponse) Append(b []byte) []byte {
	b = AppendBuffer(b, r.Data)
	return r.Stat.Append(b)
}

// Decode reads a GetDataResponse from d.
func (r *GetDataResponse) Decode(d *Decoder) {
	r.Data = d.Buffer()
	r.Stat.Decode(d)
}

// GetACLResponse answers getACL (6).
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

// Append appends the jute encoding of the response.
func (r *GetACLResponse) Append(b []byte) []byte {
	b = AppendACLs(b, r.ACL)
	return r.Stat.Append(b)
}

// Decode reads a GetACLResponse from d.
func (r *GetACLResponse) Decode(d *Decoder) {
	r.ACL = DecodeACLs(d)
	r.Stat.Decode(d)
}

// GetChildrenResponse answers getChildren (8).
type GetChildrenResponse struct {
	Children []string
}

// Append appends the jute encoding of the response.
func (r *GetChildrenResponse) Append(b []byte) []byte { return AppendStrings(b, r.Children) }

// Decode reads a GetChildrenResponse from d.
func (r *GetChildrenResponse) Decode(d *Decoder) { r.Children = d.Strings() }

// GetChildren2Response answers getChildren2 (12).
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

// Append appends the jute encoding of the response.
func (r *GetChildren2Response) Append(b []byte) []byte {
	b = AppendStrings(b, r.Children)
	return r.Stat.Append(b)
}

// Decode reads a GetChildren2Response from d.
func (r *GetChildren2Response) Decode(d *Decoder) {
	r.Children = d.Strings()
	r.Stat.Decode(d)
}

// SyncResponse answers sync (9).
type SyncResponse struct {
	Path string
}

// Append appends the jute encoding of the response.
func (r *SyncResponse) Append(b []byte) []byte { return AppendString(b, r.Path) }

// Decode reads a SyncResponse from d.
func (r *SyncResponse) Decode(d *Decoder) { r.Path = d.String() }

// GetEphemeralsResponse answers getEphemerals (103).
type GetEphemeralsResponse struct {
	Ephemerals []string
}

// Append appends the jute encoding of the response.
func (r *GetEphemeralsResponse) Append(b []byte) []byte { return AppendStrings(b, r.Ephemerals) }

// Decode reads a GetEphemeralsResponse from d.
func (r *GetEphemeralsResponse) Decode(d *Decoder) { r.Ephemerals = d.Strings() }

// GetAllChildrenNumberResponse answers getAllChildrenNumber (104).
type GetAllChildrenNumberResponse struct {
	TotalNumber int32
}

// Append appends the jute encoding of the response.
func (r *GetAllChildrenNumberResponse) Append(b []byte) []byte {
	return AppendInt32(b, r.TotalNumber)
}

// Decode reads a GetAllChildrenNumberResponse from d.
func (r *GetAllChildrenNumberResponse) Decode(d *Decoder) { r.TotalNumber = d.Int32() }

// ErrorResponse is the 4-byte body of an addWatch (106) reply (Err is
// ErrOK) and of an error result inside a MultiResponse.
type ErrorResponse struct {
	Err ErrCode
}

// Append appends the jute encoding of the response.
func (r *ErrorResponse) Append(b []byte) []byte { return AppendInt32(b, int32(r.Err)) }

// Decode reads an ErrorResponse from d.
func (r *ErrorResponse) Decode(d *Decoder) { r.Err = ErrCode(d.Int32()) }

// WhoAmIResponse answers whoAmI (107) with the session's identities.
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

// Append appends the jute encoding of the response; nil is a null vector.
func (r *WhoAmIResponse) Append(b []byte) []byte {
	b = AppendVectorLen(b, len(r.ClientInfo), r.ClientInfo == nil)
	for i := range r.ClientInfo {
		b = r.ClientInfo[i].Append(b)
	}
	return b
}

// Decode reads a WhoAmIResponse from d.
func (r *WhoAmIResponse) Decode(d *Decoder) {
	r.ClientInfo = nil
	n := d.VectorLen(minClientInfoSize)
	if n < 0 || d.Err() != nil {
		return
	}
	infos := make([]ClientInfo, n)
	for i := range infos {
		infos[i].Decode(d)
	}
	if d.Err() == nil {
		r.ClientInfo = infos
	}
}

// WatcherEvent is the body of a notification (xid XidNotification).
type WatcherEvent struct {
	Type  EventType
	State int32
	Path  string
}

// Append appends the jute encoding of the event.
func (r *WatcherEvent) Append(b []byte) []byte {
	b = AppendInt32(b, int32(r.Type))
	b = AppendInt32(b, r.State)
	return AppendString(b, r.Path)
}

// Decode reads a WatcherEvent from d.
func (r *WatcherEvent) Decode(d *Decoder) {
	r.Type = EventType(d.Int32())
	r.State = d.Int32()
	r.Path = d.String()
}

func (*Empty) isResponse()                        {}
func (*CreateResponse) isResponse()               {}
func (*Create2Response) isResponse()              {}
func (*StatResponse) isResponse()                 {}
func (*GetDataResponse) isResponse()              {}
func (*GetACLResponse) isResponse()               {}
func (*GetChildrenResponse) isResponse()          {}
func (*GetChildren2Response) isResponse()         {}
func (*SyncResponse) isResponse()                 {}
func (*GetEphemeralsResponse) isResponse()        {}
func (*GetAllChildrenNumberResponse) isResponse() {}
func (*ErrorResponse) isResponse()                {}
func (*WhoAmIResponse) isResponse()               {}
func (*WatcherEvent) isResponse()                 {}
func (*MultiResponse) isResponse()                {}
