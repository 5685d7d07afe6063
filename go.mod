module github.com/paddockhq/paddock

go 1.26.8

require (
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	go.etcd.io/raft/v3 v3.6.0 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
