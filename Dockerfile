# syntax=docker/dockerfile:1

# Build: a static binary (pure-Go SQLite, no cgo), so the final image needs no libc.
FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first: this layer is reused until go.mod/go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# -trimpath keeps build paths out of the binary; -s -w drops symbol and DWARF tables.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/cardhour . \
	&& mkdir -p /out/data

# Run: distroless static has CA certificates (S3, webhooks, SMTP over TLS), tzdata
# (Asia/Shanghai display) and a nonroot user (65532), and no shell to attack.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/cardhour /cardhour
# The data dir must exist and belong to nonroot before VOLUME, or a fresh named
# volume is created root-owned and the server cannot write its SQLite file.
COPY --from=build --chown=65532:65532 /out/data /data
ENV CARDHOUR_DATA=/data
VOLUME /data
EXPOSE 8080
USER 65532:65532
ENTRYPOINT ["/cardhour"]
CMD ["serve"]
