package watch

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/proto"
)

// Kind is the kind of watch a request registers.
type Kind uint8

// Watch kinds.
const (
	// Data is the one-time watch set by getData and exists. ZooKeeper keeps
	// both in one table, so they are one kind here.
	Data Kind = iota + 1
	// Child is the one-time watch set by getChildren and getChildren2.
	Child
	// Persistent is addWatch mode PERSISTENT: a data and child watch on the
	// path that is not consumed when it fires.
	Persistent
	// PersistentRecursive is addWatch mode PERSISTENT_RECURSIVE: a data watch
	// on the path and all its descendants that is not consumed when it fires.
	PersistentRecursive
)

// String names the kind as ZooKeeper's WatcherMode or request does.
func (k Kind) String() string {
	switch k {
	case Data:
		return "data"
	case Child:
		return "child"
	case Persistent:
		return "persistent"
	case PersistentRecursive:
		return "persistentRecursive"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseAddWatchMode maps the mode of an addWatch request to a Kind. Any mode
// other than proto.AddWatchPersistent and proto.AddWatchPersistentRecursive
// is an error.
func ParseAddWatchMode(mode int32) (Kind, error) {
	switch mode {
	case proto.AddWatchPersistent:
		return Persistent, nil
	case proto.AddWatchPersistentRecursive:
		return PersistentRecursive, nil
	}
	return 0, fmt.Errorf("watch: unsupported addWatch mode %d", mode)
}

// modes is the set of watches one watcher holds on one path.
type modes uint8

const (
	modeData modes = 1 << iota
	modeChild
	modePersistent
	modeRecursive

	modeAll = modeData | modeChild | modePersistent | modeRecursive
)

// ZooKeeper's two tables, as sets of modes: a pair is in the data table when
// it holds any of dataTable, in the child table when it holds any of
// childTable.
const (
	dataTable  = modeData | modePersistent | modeRecursive
	childTable = modeChild | modePersistent
)

// bit returns the mode flag of k; it panics on a value that is not one of
// the Kind constants, which is a programming error in the caller.
func (k Kind) bit() modes {
	switch k {
	case Data:
		return modeData
	case Child:
		return modeChild
	case Persistent:
		return modePersistent
	case PersistentRecursive:
		return modeRecursive
	}
	panic(fmt.Sprintf("watch: invalid watch kind %d", uint8(k)))
}

// typeModes returns the modes a removeWatches/checkWatches type addresses
// (ZooKeeper 3.9 DataTree.removeWatch and containsWatcher), or 0 for a type
// ZooKeeper does not define.
func typeModes(t proto.WatcherType) modes {
	switch t {
	case proto.WatcherChildren:
		return modeChild
	case proto.WatcherData:
		return modeData
	case proto.WatcherAny:
		return modeAll
	case proto.WatcherPersistent:
		return modePersistent
	case proto.WatcherPersistentRecursive:
		return modeRecursive
	}
	return 0
}

// eventModes returns, for a change of type typ, the modes that fire on the
// changed path, the modes that a firing consumes, and whether recursive
// watches on ancestors fire. ok is false for event types that are not
// changes of the data tree.
func eventModes(typ proto.EventType) (fire, consume modes, ancestors, ok bool) {
	switch typ {
	case proto.EventNodeCreated, proto.EventNodeDataChanged:
		return dataTable, modeData, true, true
	case proto.EventNodeDeleted:
		return dataTable | childTable, modeData | modeChild, true, true
	case proto.EventNodeChildrenChanged:
		return childTable, modeChild, false, true
	}
	return 0, 0, false, false
}
