# The scripts hold the logic; make only names the entry points.
SHELL := bash
.DEFAULT_GOAL := build

# CI images have Go in /usr/local/go/bin without it on PATH.
ifeq ($(shell command -v go 2>/dev/null),)
export PATH := /usr/local/go/bin:$(PATH)
endif

.PHONY: test check build run generate

# Installs what is missing (apt-get), starts a throwaway MariaDB, runs go test
# (SQLite + MariaDB, headless Chromium), the fuzz targets, then check.
test:
	scripts/test.sh

# gofmt, go vet, staticcheck, templ output current, go.mod/go.sum tidy. Leaves the tree as it was.
check:
	scripts/check.sh

build:
	CGO_ENABLED=0 go build -o bin/cardhour .

run:
	go run .

generate:
	go tool templ generate
