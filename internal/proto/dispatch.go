package proto

import (
	"errors"
	"fmt"
)

// ErrUnknownOpcode is returned, wrapped with the opcode, for an opcode
// that has no request or response record here: unknown values, the
// internal createSession and error types, and reconfig and sasl, which
// this package does not implement. ZooKeeper answers such requests with
// ErrUnimplemented and closes the connection.
var ErrUnknownOpcode = errors.New("proto: unknown opcode")

// NewRequest returns a zero request record for op, ready to Decode:
//
//	create, create2, createContainer   *CreateRequest
//	createTTL                          *CreateTTLRequest
//	delete                             *DeleteRequest
//	exists                             *ExistsRequest
//	getData                            *GetDataRequest
//	setData                            *SetDataRequest
//	getACL                             *GetACLRequest
//	setACL                             *SetACLRequest
//	getChildren                        *GetChildrenRequest
//	getChildren2                       *GetChildren2Request
//	sync                               *SyncRequest
//	check                              *CheckVersionRequest
//	multi, multiRead                   *MultiRequest
//	checkWatches                       *CheckWatchesRequest
//	removeWatches                      *RemoveWatchesRequest
//	deleteContainer                    *DeleteContainerRequest
//	auth                               *AuthPacket
//	setWatches                         *SetWatches
//	setWatches2                        *SetWatches2
//	getEphemerals                      *GetEphemeralsRequest
//	getAllChildrenNumber               *GetAllChildrenNumberRequest
//	addWatch                           *AddWatchRequest
//	ping, closeSession, whoAmI         *Empty
//
// Any other op fails with ErrUnknownOpcode.
func NewRequest(op OpCode) (Request, error) {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return new(CreateRequest), nil
	case OpCreateTTL:
		return new(CreateTTLRequest), nil
	case OpDelete:
		return new(DeleteRequest), nil
	case OpExists:
		return new(ExistsRequest), nil
	case OpGetData:
		return new(GetDataRequest), nil
	case OpSetData:
		return new(SetDataRequest), nil
	case OpGetACL:
		return new(GetACLRequest), nil
	case OpSetACL:
		return new(SetACLRequest), nil
	case OpGetChildren:
		return new(GetChildrenRequest), nil
	case OpGetChildren2:
		return new(GetChildren2Request), nil
	case OpSync:
		return new(SyncRequest), nil
	case OpCheck:
		return new(CheckVersionRequest), nil
	case OpMulti, OpMultiRead:
		return new(MultiRequest), nil
	case OpCheckWatches:
		return new(CheckWatchesRequest), nil
	case OpRemoveWatches:
		return new(RemoveWatchesRequest), nil
	case OpDeleteContainer:
		return new(DeleteContainerRequest), nil
	case OpAuth:
		return new(AuthPacket), nil
	case OpSetWatches:
		return new(SetWatches), nil
	case OpSetWatches2:
		return new(SetWatches2), nil
	case OpGetEphemerals:
		return new(GetEphemeralsRequest), nil
	case OpGetAllChildrenNumber:
		return new(GetAllChildrenNumberRequest), nil
	case OpAddWatch:
		return new(AddWatchRequest), nil
	case OpPing, OpCloseSession, OpWhoAmI:
		return new(Empty), nil
	}
	return nil, fmt.Errorf("%w %v: no request record", ErrUnknownOpcode, op)
}

// DecodeRequest decodes body, the bytes after a RequestHeader, as the
// request record of op (see NewRequest for the mapping). Errors wrap
// ErrUnknownOpcode, ErrShortBuffer or ErrMalformed and name the op. For
// multi every op must be a write op and for multiRead a read op, else
// ErrMalformed. Trailing bytes are ignored, as ZooKeeper ignores them.
func DecodeRequest(op OpCode, body []byte) (Request, error) {
	req, err := NewRequest(op)
	if err != nil {
		return nil, err
	}
	if err := Unmarshal(body, req); err != nil {
		return nil, fmt.Errorf("proto: decoding %v request: %w", op, err)
	}
	if m, ok := req.(*MultiRequest); ok {
		for i := range m.Ops {
			if t := m.Ops[i].Op; (op == OpMultiRead) != IsMultiReadOp(t) {
				return nil, fmt.Errorf("proto: decoding %v request: %w: op %d has type %v",
					op, ErrMalformed, i, t)
			}
		}
	}
	return req, nil
}

// NewResponse returns a zero response record for a successful reply to
// op, ready to Decode:
//
//	create                                      *CreateResponse
//	create2, createContainer, createTTL         *Create2Response
//	exists, setData, setACL                     *StatResponse
//	getData                                     *GetDataResponse
//	getACL                                      *GetACLResponse
//	getChildren                                 *GetChildrenResponse
//	getChildren2                                *GetChildren2Response
//	sync                                        *SyncResponse
//	multi, multiRead                            *MultiResponse
//	getEphemerals                               *GetEphemeralsResponse
//	getAllChildrenNumber                        *GetAllChildrenNumberResponse
//	addWatch                                    *ErrorResponse
//	whoAmI                                      *WhoAmIResponse
//	notification                                *WatcherEvent
//	delete, check, checkWatches, removeWatches,
//	deleteContainer, auth, setWatches,
//	setWatches2, ping, closeSession             *Empty
//
// Any other op fails with ErrUnknownOpcode.
func NewResponse(op OpCode) (Response, error) {
	switch op {
	case OpCreate:
		return new(CreateResponse), nil
	case OpCreate2, OpCreateContainer, OpCreateTTL:
		return new(Create2Response), nil
	case OpExists, OpSetData, OpSetACL:
		return new(StatResponse), nil
	case OpGetData:
		return new(GetDataResponse), nil
	case OpGetACL:
		return new(GetACLResponse), nil
	case OpGetChildren:
		return new(GetChildrenResponse), nil
	case OpGetChildren2:
		return new(GetChildren2Response), nil
	case OpSync:
		return new(SyncResponse), nil
	case OpMulti, OpMultiRead:
		return new(MultiResponse), nil
	case OpGetEphemerals:
		return new(GetEphemeralsResponse), nil
	case OpGetAllChildrenNumber:
		return new(GetAllChildrenNumberResponse), nil
	case OpAddWatch:
		return new(ErrorResponse), nil
	case OpWhoAmI:
		return new(WhoAmIResponse), nil
	case OpNotification:
		return new(WatcherEvent), nil
	case OpDelete, OpCheck, OpCheckWatches, OpRemoveWatches, OpDeleteContainer, OpAuth,
		OpSetWatches, OpSetWatches2, OpPing, OpCloseSession:
		return new(Empty), nil
	}
	return nil, fmt.Errorf("%w %v: no response record", ErrUnknownOpcode, op)
}

// DecodeResponse decodes body, the bytes after a ReplyHeader whose Err is
// ErrOK, as the response record of op (see NewResponse). Error replies
// have no body and must not be passed here. Trailing bytes are ignored.
func DecodeResponse(op OpCode, body []byte) (Response, error) {
	resp, err := NewResponse(op)
	if err != nil {
		return nil, err
	}
	if err := Unmarshal(body, resp); err != nil {
		return nil, fmt.Errorf("proto: decoding %v response: %w", op, err)
	}
	return resp, nil
}
