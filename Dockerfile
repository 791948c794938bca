# sledge's image (docs/scale-out.md): the static binary on distroless, run
# as its nonroot user. Build: docker build -t REGISTRY/sledge:TAG .
#
# The binary is pure Go (CGO_ENABLED=0: the embedded SQLite is then
# modernc.org/sqlite), so it needs no libc. internal/kube's
# TestDockerfileStaticBuild runs this file's go build line and checks that
# the result is statically linked.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/sledge ./cmd/sledge

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sledge /sledge
# distroless's nonroot user, numeric so that Kubernetes can check runAsNonRoot.
USER 65532:65532
ENTRYPOINT ["/sledge"]
