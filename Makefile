# Paddock — build and test.
#
#   make run    run the server on its defaults (127.0.0.1:2181, ./paddock-data)
#   make test   install what the tests need (if missing) and run every test

GO       ?= go
APT_PKGS := zookeeper zookeeper-bin python3-kazoo python3-pytest gcc libc6-dev \
            openjdk-17-jdk-headless libcurator-recipes-java libcurator-discovery-java
BIN      := bin/paddock

.PHONY: all build run test deps test-go fuzz vet clean bench

all: build

build:
	$(GO) build -o $(BIN) ./cmd/paddock

run: build
	./$(BIN) server

# deps installs the Debian packages the compatibility tests run against
# (Apache ZooKeeper 3.8, its C client tools, kazoo and pytest, Curator and
# the JDK that compiles test/curator's program), and the C toolchain the
# race detector needs, when missing.
deps:
	@missing=""; for p in $(APT_PKGS); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi
	$(GO) mod download

vet:
	$(GO) vet ./...

# Every test, the real-client and differential tests included, then a short
# run of each fuzz target.
test: deps vet test-go fuzz

# The packages under test/ start real servers and clients (Apache ZooKeeper,
# kazoo's suite, zkCli.sh); they run one at a time after the others so their
# timing is not squeezed by parallel compiles and tests on a small machine.
# The Go client runs under the race detector only: its tests drive
# concurrent callers, the reader, the writer and delivery at once. The
# snapshot stream's tests run under it too: the stream sorts without the
# server's lock while the tree changes.
test-go:
	$(GO) test -count=1 -timeout 20m $$($(GO) list ./... | grep -v /test/ | grep -Ev '/zk(/|$$)')
	$(GO) test -race -count=1 -timeout 20m ./zk/...
	$(GO) test -race -count=1 -timeout 5m -run 'Stream' ./internal/tree/
	$(GO) test -count=1 -timeout 30m -p 1 ./test/...

FUZZTIME ?= 10s
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh ./internal/... ./zk/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...

clean:
	rm -rf bin
